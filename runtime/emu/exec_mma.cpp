// mma.sync.aligned.*.row.col: the warp's fragments are gathered into A (MxK), B (KxN) and C (MxN)
// with the PTX ISA's fragment layouts, multiplied, and scattered back to D.
// Numerics: inputs exactly as their dtype holds them (tf32: the upper 19 bits of the register),
// products exact, accumulation in f32 in k order starting from C (f64 mma: fma in f64; integer
// mma: exact, wrapping to s32 or clamped with .satfinite; fp8 mma: e4m3/e5m2 decoded exactly, f32
// accumulation like f16's).
//
// Speed: the fragment layouts are tables built at compile time (lane, element -> matrix index),
// so one mma is a gather of the warp's registers straight into dense f32 matrices (f16/bf16
// through the 64 Ki-entry decode tables), a small matrix product over rows of N accumulators
// (which the compiler vectorizes across n; each element still adds its products in k order), and
// a scatter. Integer mma multiplies in f32 too: every product and partial sum is an integer below
// 2^24 (s8/u8 k32: at most 32 * 255 * 255), so the f32 sum is exact and C is added in 64 bits.
#include <array>
#include <bit>
#include <cmath>
#include <cstring>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif
#include <limits>
#include <optional>
#include <string>
#include <type_traits>

#include "runtime/emu/exec_context.h"
#include "runtime/emu/exec_families.h"
#include "runtime/emu/float_format.h"
#include "runtime/emu/instruction_decode.h"

namespace tcjit::emu {

namespace {

constexpr uint32_t kKinds =
    14; // every MmaKind (the B1 kinds have empty layouts: mma_b1 reads registers)

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// AVX2 and F16C. F16C is read from cpuid: clang 14's __builtin_cpu_supports does not know "f16c".
bool cpu_has_avx2_f16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx) || (ecx & bit_F16C) == 0)
    return false;
  return __builtin_cpu_supports("avx2");
}
#endif

// Fragment layout of one mma shape: for each lane and fragment element, the index of the
// element in the dense A (row * K + col), B (k * N + n) and C/D (row * N + col) matrices.
struct Layout {
  uint32_t m = 0, n = 0, k = 0;
  uint32_t a_elems = 0, b_elems = 0, c_elems = 0; // per lane
  std::array<std::array<uint16_t, 32>, 32> a{};
  std::array<std::array<uint16_t, 16>, 32> b{};
  std::array<std::array<uint16_t, 4>, 32> c{};
  // A is kept in fragment order (register r, lane, element e of the register: index
  // (r * 32 + lane) * a_per_reg + e); a_pos[row * K + col] is the index of A's element there.
  uint32_t a_per_reg = 1;
  std::array<uint16_t, 16 * 64> a_pos{};
};

constexpr Layout make_layout(MmaKind kind) {
  Layout L;
  switch (kind) {
  case MmaKind::F16_M16N8K16:
  case MmaKind::BF16_M16N8K16: L.m = 16, L.n = 8, L.k = 16, L.a_elems = 8, L.b_elems = 4; break;
  case MmaKind::F16_M16N8K8:
  case MmaKind::BF16_M16N8K8: L.m = 16, L.n = 8, L.k = 8, L.a_elems = 4, L.b_elems = 2; break;
  case MmaKind::TF32_M16N8K8: L.m = 16, L.n = 8, L.k = 8, L.a_elems = 4, L.b_elems = 2; break;
  case MmaKind::TF32_M16N8K4: L.m = 16, L.n = 8, L.k = 4, L.a_elems = 2, L.b_elems = 1; break;
  case MmaKind::I8_M16N8K32:
  case MmaKind::F8_M16N8K32: L.m = 16, L.n = 8, L.k = 32, L.a_elems = 16, L.b_elems = 8; break;
  case MmaKind::I8_M16N8K16: L.m = 16, L.n = 8, L.k = 16, L.a_elems = 8, L.b_elems = 4; break;
  case MmaKind::I4_M16N8K64: L.m = 16, L.n = 8, L.k = 64, L.a_elems = 32, L.b_elems = 16; break;
  case MmaKind::I4_M16N8K32: L.m = 16, L.n = 8, L.k = 32, L.a_elems = 16, L.b_elems = 8; break;
  case MmaKind::F64_M8N8K4: L.m = 8, L.n = 8, L.k = 4, L.a_elems = 1, L.b_elems = 1; break;
  case MmaKind::B1_M16N8K256:
  case MmaKind::B1_M16N8K128: break; // mma_b1 reads the registers directly
  }
  L.c_elems = kind == MmaKind::F64_M8N8K4 ? 2 : 4;
  switch (kind) {
  case MmaKind::F16_M16N8K16:
  case MmaKind::BF16_M16N8K16:
  case MmaKind::F16_M16N8K8:
  case MmaKind::BF16_M16N8K8: L.a_per_reg = 2; break;
  case MmaKind::I8_M16N8K32:
  case MmaKind::F8_M16N8K32:
  case MmaKind::I8_M16N8K16: L.a_per_reg = 4; break;
  case MmaKind::I4_M16N8K64:
  case MmaKind::I4_M16N8K32: L.a_per_reg = 8; break;
  case MmaKind::TF32_M16N8K8:
  case MmaKind::TF32_M16N8K4:
  case MmaKind::F64_M8N8K4:
  case MmaKind::B1_M16N8K256:
  case MmaKind::B1_M16N8K128: L.a_per_reg = 1; break;
  }
  for (uint32_t lane = 0; lane < 32; ++lane) {
    const uint32_t g = lane >> 2, q = lane & 3;
    for (uint32_t i = 0; i < L.a_elems; ++i) {
      // element (row, col) of A held by fragment element i of lane (g = lane/4, q = lane%4)
      uint32_t row = 0, col = 0;
      switch (kind) {
      case MmaKind::F16_M16N8K16:
      case MmaKind::BF16_M16N8K16: // 8 halves
        row = g + ((i >> 1) & 1) * 8;
        col = 2 * q + (i & 1) + (i >= 4 ? 8 : 0);
        break;
      case MmaKind::F16_M16N8K8:
      case MmaKind::BF16_M16N8K8: // 4 halves
        row = g + (i >> 1) * 8;
        col = 2 * q + (i & 1);
        break;
      case MmaKind::TF32_M16N8K8: // 4 words
        row = g + (i & 1) * 8;
        col = q + (i >> 1) * 4;
        break;
      case MmaKind::TF32_M16N8K4: // 2 words
        row = g + i * 8;
        col = q;
        break;
      case MmaKind::I8_M16N8K32: // 16 bytes
      case MmaKind::F8_M16N8K32:
        row = g + ((i >> 2) & 1) * 8;
        col = 4 * q + (i & 3) + (i >= 8 ? 16 : 0);
        break;
      case MmaKind::I8_M16N8K16: // 8 bytes
        row = g + (i >> 2) * 8;
        col = 4 * q + (i & 3);
        break;
      case MmaKind::I4_M16N8K64: // 32 nibbles
        row = g + ((i >> 3) & 1) * 8;
        col = 8 * q + (i & 7) + (i >= 16 ? 32 : 0);
        break;
      case MmaKind::I4_M16N8K32: // 16 nibbles
        row = g + (i >> 3) * 8;
        col = 8 * q + (i & 7);
        break;
      case MmaKind::F64_M8N8K4:
        row = g;
        col = q;
        break;
      case MmaKind::B1_M16N8K256:
      case MmaKind::B1_M16N8K128: break;
      }
      L.a[lane][i] = static_cast<uint16_t>(row * L.k + col);
      const uint32_t r = i / L.a_per_reg, e = i % L.a_per_reg;
      L.a_pos[row * L.k + col] = static_cast<uint16_t>((r * 32 + lane) * L.a_per_reg + e);
    }
    for (uint32_t i = 0; i < L.b_elems; ++i) {
      // element (k, n) of B held by fragment element i
      uint32_t k = 0;
      switch (kind) {
      case MmaKind::F16_M16N8K16:
      case MmaKind::BF16_M16N8K16: k = 2 * q + (i & 1) + (i >= 2 ? 8 : 0); break;
      case MmaKind::F16_M16N8K8:
      case MmaKind::BF16_M16N8K8: k = 2 * q + i; break;
      case MmaKind::TF32_M16N8K8: k = q + i * 4; break;
      case MmaKind::TF32_M16N8K4: k = q; break;
      case MmaKind::I8_M16N8K32:
      case MmaKind::F8_M16N8K32: k = 4 * q + (i & 3) + (i >= 4 ? 16 : 0); break;
      case MmaKind::I8_M16N8K16: k = 4 * q + i; break;
      case MmaKind::I4_M16N8K64: k = 8 * q + (i & 7) + (i >= 8 ? 32 : 0); break;
      case MmaKind::I4_M16N8K32: k = 8 * q + i; break;
      case MmaKind::F64_M8N8K4: k = q; break;
      case MmaKind::B1_M16N8K256:
      case MmaKind::B1_M16N8K128: break;
      }
      L.b[lane][i] = static_cast<uint16_t>(k * L.n + g);
    }
    for (uint32_t i = 0; i < L.c_elems; ++i) {
      // element (row, col) of C/D held by accumulator element i
      const uint32_t row = kind == MmaKind::F64_M8N8K4 ? g : g + (i >= 2 ? 8 : 0);
      const uint32_t col = kind == MmaKind::F64_M8N8K4 ? 2 * q + i : 2 * q + (i & 1);
      L.c[lane][i] = static_cast<uint16_t>(row * L.n + col);
    }
  }
  return L;
}

constexpr std::array<Layout, kKinds> make_layouts() {
  std::array<Layout, kKinds> t{};
  for (uint32_t i = 0; i < kKinds; ++i)
    t[i] = make_layout(static_cast<MmaKind>(i));
  return t;
}

constexpr std::array<Layout, kKinds> kLayouts = make_layouts();

// The m16n8 accumulator layout: lane l holds C elements 2l, 2l+1 (row l/4, columns 2(l%4)..) in
// registers 0 and 1 and 64 + 2l, 64 + 2l + 1 (8 rows below) in registers 2 and 3.
constexpr bool c_is_row_pairs(const Layout &L) {
  for (uint32_t lane = 0; lane < 32; ++lane)
    for (uint32_t e = 0; e < 4; ++e)
      if (L.c[lane][e] != 64 * (e / 2) + 2 * lane + e % 2)
        return false;
  return true;
}

// Element decoders: the value of one input element from the low bits of `raw`, and nan(word):
// non-zero when a register word holds a NaN element.
struct DecodeTable { // f16, bf16
  const float *table;
  uint32_t nan_add; // per half: magnitude + nan_add has bit 15 set exactly for NaNs
  float operator()(uint32_t raw) const { return table[raw & 0xffff]; }
  uint32_t nan(uint32_t word) const { return ((word & 0x7fff7fffu) + nan_add) & 0x80008000u; }
};
DecodeTable decode_f16() {
  return {f16_table(), 0x03ff03ffu}; // NaN: magnitude > 0x7c00
}
DecodeTable decode_bf16() {
  return {bf16_table(), 0x007f007fu}; // NaN: magnitude > 0x7f80
}
struct DecodeTf32 {
  float operator()(uint32_t raw) const { return std::bit_cast<float>(raw & 0xffffe000u); }
  uint32_t nan(uint32_t word) const { return (word & 0x7fffe000u) > 0x7f800000u; }
};
struct DecodeF32 {
  float operator()(uint32_t raw) const { return std::bit_cast<float>(raw); }
  uint32_t nan(uint32_t word) const { return (word & 0x7fffffffu) > 0x7f800000u; }
};
struct DecodeS8 {
  float operator()(uint32_t raw) const { return static_cast<int8_t>(raw & 0xff); }
  uint32_t nan(uint32_t) const { return 0; }
};
struct DecodeU8 {
  float operator()(uint32_t raw) const { return static_cast<float>(raw & 0xff); }
  uint32_t nan(uint32_t) const { return 0; }
};
// e4m3 / e5m2 bytes through their 256-entry tables (float_format.h). NaN bytes: e4m3 S.1111.111,
// e5m2 S.11111.xx with xx != 0.
struct DecodeE4M3 {
  const float *table = e4m3_table();
  float operator()(uint32_t raw) const { return table[raw & 0xff]; }
  uint32_t nan(uint32_t word) const {
    uint32_t any = 0;
    for (uint32_t i = 0; i < 32; i += 8)
      any |= ((word >> i) & 0x7fu) == 0x7fu;
    return any;
  }
};
struct DecodeE5M2 {
  const float *table = e5m2_table();
  float operator()(uint32_t raw) const { return table[raw & 0xff]; }
  uint32_t nan(uint32_t word) const {
    uint32_t any = 0;
    for (uint32_t i = 0; i < 32; i += 8)
      any |= ((word >> i) & 0x7fu) > 0x7cu;
    return any;
  }
};
struct DecodeS4 {
  float operator()(uint32_t raw) const {
    return static_cast<float>(static_cast<int32_t>((raw & 0xf) << 28) >> 28);
  }
  uint32_t nan(uint32_t) const { return 0; }
};
struct DecodeU4 {
  float operator()(uint32_t raw) const { return static_cast<float>(raw & 0xf); }
  uint32_t nan(uint32_t) const { return 0; }
};

// Scatters the `elems` fragment elements of the registers regs[0..] (bits bits each, packed from
// bit 0) of all 32 lanes into out[index[lane][i]]. Returns non-zero when an element is a NaN.
template <uint32_t kElems, uint32_t kBits, typename Decode, size_t kWidth>
inline uint32_t gather(const Warp &w, const uint32_t *regs,
                       const std::array<std::array<uint16_t, kWidth>, 32> &index, Decode decode,
                       float *out) {
  constexpr uint32_t per_reg = 32 / kBits;
  constexpr uint32_t nregs = (kElems + per_reg - 1) / per_reg;
  uint32_t nan = 0;
  for (uint32_t r = 0; r < nregs; ++r) {
    const uint64_t *src = w.regs + size_t{regs[r]} * 32;
#pragma GCC unroll 4
    for (uint32_t lane = 0; lane < 32; ++lane) {
      const uint32_t raw = static_cast<uint32_t>(src[lane]);
      nan |= decode.nan(raw);
#pragma GCC unroll 8
      for (uint32_t e = 0; e < per_reg; ++e)
        out[index[lane][r * per_reg + e]] = decode(kBits == 32 ? raw : raw >> (e * kBits));
    }
  }
  return nan;
}

// Decodes the registers regs[0..] of all 32 lanes in fragment order: out[(r * 32 + lane) *
// per_reg + e] (contiguous, no index table). Returns non-zero when an element is a NaN.
template <uint32_t kElems, uint32_t kBits, typename Decode>
inline uint32_t decode_fragments(const Warp &w, const uint32_t *regs, Decode decode, float *out) {
  constexpr uint32_t per_reg = 32 / kBits;
  constexpr uint32_t nregs = (kElems + per_reg - 1) / per_reg;
  uint32_t nan = 0;
  for (uint32_t r = 0; r < nregs; ++r) {
    const uint64_t *src = w.regs + size_t{regs[r]} * 32;
    float *dst = out + r * 32 * per_reg;
#pragma GCC unroll 4
    for (uint32_t lane = 0; lane < 32; ++lane) {
      const uint32_t raw = static_cast<uint32_t>(src[lane]);
      nan |= decode.nan(raw);
#pragma GCC unroll 8
      for (uint32_t e = 0; e < per_reg; ++e)
        dst[lane * per_reg + e] = decode(kBits == 32 ? raw : raw >> (e * kBits));
    }
  }
  return nan;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// The low 32-bit words of 4 lanes' registers (64-bit slots), in lane order: a register's 4 lanes
// at once.
[[gnu::always_inline]] __attribute__((target("avx2"))) inline __m128i
low_words_of_4_lanes(const uint64_t *four) {
  const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(four));
  return _mm256_castsi256_si128(
      _mm256_permutevar8x32_epi32(v, _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7)));
}

// decode_fragments for f16 / bf16 registers with AVX2 (+F16C for f16): the low words of 4 lanes
// are 8 halves in fragment order, converted at once. Exact for every non-NaN value (f16 and bf16
// are subsets of f32); when a NaN is present the caller decodes through the tables instead (NaN
// decodes to the canonical NaN there). Returns non-zero when an element is a NaN.
template <uint32_t kRegs, bool kBf16>
__attribute__((target("avx2,f16c"))) uint32_t decode_halves_avx2(const Warp &w,
                                                                 const uint32_t *regs, float *out) {
  const __m128i magnitude = _mm_set1_epi32(0x7fff7fff), sign = _mm_set1_epi32(0x80008000u);
  const __m128i nan_add = _mm_set1_epi32(kBf16 ? 0x007f007f : 0x03ff03ff);
  __m128i nan = _mm_setzero_si128();
  for (uint32_t r = 0; r < kRegs; ++r) {
    const uint64_t *src = w.regs + size_t{regs[r]} * 32;
    float *dst = out + r * 64;
    for (uint32_t lane = 0; lane < 32; lane += 4) {
      const __m128i h = low_words_of_4_lanes(src + lane);
      nan = _mm_or_si128(nan,
                         _mm_and_si128(_mm_add_epi32(_mm_and_si128(h, magnitude), nan_add), sign));
      if constexpr (kBf16) {
        const __m128i zero = _mm_setzero_si128();
        _mm_storeu_si128(reinterpret_cast<__m128i *>(dst + 2 * lane), _mm_unpacklo_epi16(zero, h));
        _mm_storeu_si128(reinterpret_cast<__m128i *>(dst + 2 * lane + 4),
                         _mm_unpackhi_epi16(zero, h));
      } else {
        _mm256_storeu_ps(dst + 2 * lane, _mm256_cvtph_ps(h));
      }
    }
  }
  return static_cast<uint32_t>(_mm_movemask_epi8(nan));
}
#endif

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// decode_fragments for s8 / u8 registers with AVX2: the low words of 4 lanes are 16 bytes in
// fragment order, widened 8 at a time (exact).
template <uint32_t kRegs, bool kSigned>
__attribute__((target("avx2"))) void decode_bytes_avx2(const Warp &w, const uint32_t *regs,
                                                       float *out) {
  for (uint32_t r = 0; r < kRegs; ++r) {
    const uint64_t *src = w.regs + size_t{regs[r]} * 32;
    float *dst = out + r * 128;
    for (uint32_t lane = 0; lane < 32; lane += 4) {
      const __m128i b = low_words_of_4_lanes(src + lane);
      const __m128i hi = _mm_srli_si128(b, 8);
      const __m256i x0 = kSigned ? _mm256_cvtepi8_epi32(b) : _mm256_cvtepu8_epi32(b);
      const __m256i x1 = kSigned ? _mm256_cvtepi8_epi32(hi) : _mm256_cvtepu8_epi32(hi);
      _mm256_storeu_ps(dst + 4 * lane, _mm256_cvtepi32_ps(x0));
      _mm256_storeu_ps(dst + 4 * lane + 8, _mm256_cvtepi32_ps(x1));
    }
  }
}
#endif

// B's layout for 16-bit (f16/bf16, per_reg 2) and 8-bit (s8/u8, per_reg 4) inputs: element e of
// register r of lane 4g + t is B[k][g] with k = r * 4 * per_reg + t * per_reg + e.
template <uint32_t kPerReg> constexpr bool b_is_k_major(const Layout &L) {
  if (L.n != 8 || L.b_elems == 0)
    return false;
  for (uint32_t lane = 0; lane < 32; ++lane)
    for (uint32_t i = 0; i < L.b_elems; ++i) {
      const uint32_t r = i / kPerReg, e = i % kPerReg, g = lane / 4, t = lane % 4;
      if (L.b[lane][i] != (r * 4 * kPerReg + t * kPerReg + e) * 8 + g)
        return false;
    }
  return true;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// B (K x 8, dense rows) from its registers with AVX2 (+F16C), for layouts with b_is_k_major:
// row k = r * 4 * per_reg + t * per_reg + e holds element e of register r of lanes t, t + 4, ...,
// t + 28 (one gather of 8 words). kType: 0 f16, 1 bf16, 2 s8, 3 u8. Returns non-zero when a
// 16-bit element is a NaN (the caller then decodes through the tables).
template <uint32_t kRegs, uint32_t kType>
__attribute__((target("avx2,f16c"))) uint32_t decode_b_rows_avx2(const Warp &w,
                                                                 const uint32_t *regs, float *B) {
  constexpr uint32_t per_reg = kType < 2 ? 2 : 4;
  const __m256i lanes = _mm256_setr_epi32(0, 4, 8, 12, 16, 20, 24, 28);
  __m256i nan = _mm256_setzero_si256();
  for (uint32_t r = 0; r < kRegs; ++r) {
    const int *src = reinterpret_cast<const int *>(w.regs + size_t{regs[r]} * 32);
    for (uint32_t t = 0; t < 4; ++t) {
      // the low words of slots t, t + 4, ...: 8-byte slots, so int index 2 * lane
      const __m256i v = _mm256_i32gather_epi32(src + 2 * t, _mm256_slli_epi32(lanes, 1), 4);
      for (uint32_t e = 0; e < per_reg; ++e) {
        float *row = B + (r * 4 * per_reg + t * per_reg + e) * 8;
        if constexpr (kType < 2) {
          const __m256i h =
              _mm256_and_si256(_mm256_srli_epi32(v, 16 * e), _mm256_set1_epi32(0xffff));
          const __m256i mag = _mm256_and_si256(h, _mm256_set1_epi32(0x7fff));
          nan = _mm256_or_si256(
              nan, _mm256_cmpgt_epi32(mag, _mm256_set1_epi32(kType == 0 ? 0x7c00 : 0x7f80)));
          if constexpr (kType == 1) {
            _mm256_storeu_ps(row, _mm256_castsi256_ps(_mm256_slli_epi32(h, 16)));
          } else {
            const __m128i packed =
                _mm256_castsi256_si128(_mm256_permute4x64_epi64(_mm256_packus_epi32(h, h), 0x08));
            _mm256_storeu_ps(row, _mm256_cvtph_ps(packed));
          }
        } else {
          const __m256i x =
              kType == 2 ? _mm256_srai_epi32(_mm256_slli_epi32(v, 24 - 8 * e), 24)
                         : _mm256_and_si256(_mm256_srli_epi32(v, 8 * e), _mm256_set1_epi32(0xff));
          _mm256_storeu_ps(row, _mm256_cvtepi32_ps(x));
        }
      }
    }
  }
  return static_cast<uint32_t>(_mm256_movemask_epi8(nan));
}
#endif

// acc (MxN) += A (MxK) * B (KxN), each element's products added in k order in f32. Rows of N = 8
// accumulators are one vector (GNU vector extension: two SSE registers on baseline x86-64);
// vector arithmetic is element-wise IEEE, so this is the scalar k-order sum per element.
typedef float Row8 __attribute__((vector_size(32)));

template <MmaKind kKind>
[[gnu::always_inline]] inline void multiply_f32_body(const float *A, const float *B, float *acc) {
  constexpr const Layout &L = kLayouts[static_cast<uint32_t>(kKind)];
  constexpr uint32_t M = L.m, N = L.n, K = L.k;
  static_assert(N == 8 && M % 4 == 0);
  Row8 b[K];
  std::memcpy(b, B, sizeof b);
#pragma GCC unroll 4
  for (uint32_t m = 0; m < M; m += 4) {
    Row8 r0, r1, r2, r3;
    std::memcpy(&r0, acc + (m + 0) * N, sizeof r0);
    std::memcpy(&r1, acc + (m + 1) * N, sizeof r1);
    std::memcpy(&r2, acc + (m + 2) * N, sizeof r2);
    std::memcpy(&r3, acc + (m + 3) * N, sizeof r3);
#pragma GCC unroll 64
    for (uint32_t k = 0; k < K; ++k) {
      // A[row][k] sits at A[a_pos[row * K + k]] (fragment order; the indices are constants once
      // unrolled). The product is exact in f32 for every mma input type.
      r0 += A[L.a_pos[(m + 0) * K + k]] * b[k];
      r1 += A[L.a_pos[(m + 1) * K + k]] * b[k];
      r2 += A[L.a_pos[(m + 2) * K + k]] * b[k];
      r3 += A[L.a_pos[(m + 3) * K + k]] * b[k];
    }
    std::memcpy(acc + (m + 0) * N, &r0, sizeof r0);
    std::memcpy(acc + (m + 1) * N, &r1, sizeof r1);
    std::memcpy(acc + (m + 2) * N, &r2, sizeof r2);
    std::memcpy(acc + (m + 3) * N, &r3, sizeof r3);
  }
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// The same code with 256-bit vectors where the CPU has AVX (a row of 8 is one register).
template <MmaKind kKind>
__attribute__((target("avx"))) void multiply_f32_avx(const float *A, const float *B, float *acc) {
  multiply_f32_body<kKind>(A, B, acc);
}

// With FMA: eight rows' accumulators in registers, k outermost, so eight independent add chains
// are in flight (the code above, compiled, finishes one row's chain of K dependent adds before the
// next). A fused multiply-add rounds once, after the add; every product is exact in f32 (above),
// so it is the same sum as the separate multiply and add, element by element and in k order.
template <MmaKind kKind>
__attribute__((target("avx2,fma"))) void multiply_f32_fma(const float *A, const float *B,
                                                          float *acc) {
  constexpr const Layout &L = kLayouts[static_cast<uint32_t>(kKind)];
  constexpr uint32_t M = L.m, N = L.n, K = L.k;
  static_assert(N == 8 && M % 8 == 0);
#pragma GCC unroll 2
  for (uint32_t m = 0; m < M; m += 8) {
    __m256 r[8];
#pragma GCC unroll 8
    for (uint32_t i = 0; i < 8; ++i)
      r[i] = _mm256_loadu_ps(acc + (m + i) * N);
#pragma GCC unroll 64
    for (uint32_t k = 0; k < K; ++k) {
      const __m256 b = _mm256_loadu_ps(B + k * N);
#pragma GCC unroll 8
      for (uint32_t i = 0; i < 8; ++i)
        r[i] = _mm256_fmadd_ps(_mm256_broadcast_ss(A + L.a_pos[(m + i) * K + k]), b, r[i]);
    }
#pragma GCC unroll 8
    for (uint32_t i = 0; i < 8; ++i)
      _mm256_storeu_ps(acc + (m + i) * N, r[i]);
  }
}
#endif

// acc += A * B with A in fragment order (decode_fragments), B dense KxN, acc dense MxN.
template <MmaKind kKind> inline void multiply_f32(const float *A, const float *B, float *acc) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static const bool has_fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (has_fma) {
    multiply_f32_fma<kKind>(A, B, acc);
    return;
  }
  static const bool has_avx = __builtin_cpu_supports("avx");
  if (has_avx) {
    multiply_f32_avx<kKind>(A, B, acc);
    return;
  }
#endif
  multiply_f32_body<kKind>(A, B, acc);
}

inline float quiet_nan(float x) {
  return std::bit_cast<float>(std::bit_cast<uint32_t>(x) | 0x00400000u);
}

// multiply_f32 for inputs that hold NaNs. The NaN an x86 operation returns is its first
// source operand's, so earlier builds' results depended on the compiler's operand order; this
// keeps what they returned, explicitly: a product returns A's NaN before B's, a sum keeps the
// accumulator's NaN before the product's (both quieted). Without NaN inputs every NaN that
// arises is the host's default NaN, and multiply_f32 is exact as it is.
template <MmaKind kKind> void multiply_f32_nan(const float *A, const float *B, float *acc) {
  constexpr const Layout &L = kLayouts[static_cast<uint32_t>(kKind)];
  constexpr uint32_t M = L.m, N = L.n, K = L.k;
  for (uint32_t m = 0; m < M; ++m) {
    for (uint32_t n = 0; n < N; ++n) {
      float s = acc[m * N + n];
      for (uint32_t k = 0; k < K; ++k) {
        const float a = A[L.a_pos[m * K + k]], b = B[k * N + n];
        const float p = a != a ? quiet_nan(a) : b != b ? quiet_nan(b) : a * b;
        s = s != s ? quiet_nan(s) : p != p ? quiet_nan(p) : s + p;
      }
      acc[m * N + n] = s;
    }
  }
}

struct Regs {
  uint32_t d[4], a[16], b[8], c[4];
};

Regs regs_of(const ExecContext &ctx, const Instr &in) {
  Regs r{};
  const auto copy = [&](const Operand &o, uint32_t *out, uint32_t max) {
    for (uint32_t i = 0; i < o.count && i < max; ++i)
      out[i] = vector_reg(ctx, o, i);
  };
  copy(in.dst, r.d, 4);
  copy(in.src[0], r.a, 16);
  copy(in.src[1], r.b, 8);
  copy(in.src[2], r.c, 4);
  return r;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// C in row pairs (c_is_row_pairs): words[64 * h + 2 * lane + e] is the low word of register
// c[2 * h + e] of `lane` (f32 bits or an s32). Returns non-zero when a word is an f32 NaN.
__attribute__((target("avx2"))) uint32_t
gather_c_row_pairs_avx2(const Warp &w, const uint32_t *regs_c, void *words) {
  auto *out = static_cast<uint8_t *>(words);
  const __m256i low = _mm256_set1_epi64x(0xffffffff), magnitude = _mm256_set1_epi32(0x7fffffff),
                inf = _mm256_set1_epi32(0x7f800000);
  __m256i nan = _mm256_setzero_si256();
  for (uint32_t h = 0; h < 2; ++h) {
    const uint64_t *even = w.regs + size_t{regs_c[2 * h]} * 32;
    const uint64_t *odd = w.regs + size_t{regs_c[2 * h + 1]} * 32;
    for (uint32_t lane = 0; lane < 32; lane += 4) {
      const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(even + lane));
      const __m256i y = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(odd + lane));
      const __m256i pairs = _mm256_or_si256(_mm256_and_si256(x, low), _mm256_slli_epi64(y, 32));
      nan = _mm256_or_si256(nan, _mm256_cmpgt_epi32(_mm256_and_si256(pairs, magnitude), inf));
      _mm256_storeu_si256(reinterpret_cast<__m256i *>(out + 4 * (64 * h + 2 * lane)), pairs);
    }
  }
  return static_cast<uint32_t>(_mm256_movemask_epi8(nan));
}

// D in row pairs: register d[2 * h + e] of `lane` = the word at sums[64 * h + 2 * lane + e],
// zero-extended (32-bit words: f32 bits, or s32 sums).
__attribute__((target("avx2"))) void scatter_d_row_pairs_avx2(Warp &w, const uint32_t *regs_d,
                                                              const void *words) {
  const __m256i low = _mm256_set1_epi64x(0xffffffff);
  const auto *in = static_cast<const uint8_t *>(words);
  for (uint32_t h = 0; h < 2; ++h) {
    uint64_t *even = w.regs + size_t{regs_d[2 * h]} * 32;
    uint64_t *odd = w.regs + size_t{regs_d[2 * h + 1]} * 32;
    for (uint32_t lane = 0; lane < 32; lane += 4) {
      const __m256i pairs =
          _mm256_loadu_si256(reinterpret_cast<const __m256i *>(in + 4 * (64 * h + 2 * lane)));
      _mm256_storeu_si256(reinterpret_cast<__m256i *>(even + lane), _mm256_and_si256(pairs, low));
      _mm256_storeu_si256(reinterpret_cast<__m256i *>(odd + lane), _mm256_srli_epi64(pairs, 32));
    }
  }
}

// Integer D = C + sums without .satfinite (wrapping to 32 bits): registers d[2 * h + e] of `lane`
// = low word of c[2 * h + e] + sums[64 * h + 2 * lane + e] (exact integers held in f32).
__attribute__((target("avx2"))) void
add_c_row_pairs_avx2(Warp &w, const uint32_t *regs_c, const uint32_t *regs_d, const float *sums) {
  int32_t d[128];
  gather_c_row_pairs_avx2(w, regs_c, d);
  for (uint32_t i = 0; i < 128; i += 8) {
    const __m256i c = _mm256_loadu_si256(reinterpret_cast<const __m256i *>(d + i));
    const __m256i sum = _mm256_cvttps_epi32(_mm256_loadu_ps(sums + i));
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(d + i), _mm256_add_epi32(c, sum));
  }
  scatter_d_row_pairs_avx2(w, regs_d, d); // every C word read above: D may name C's registers
}
#endif

// D in row pairs (c_is_row_pairs) from 32-bit words (f32 bits or s32 sums) in C/D matrix order:
// register d[i] of `lane` = words[64 * (i / 2) + 2 * lane + i % 2], zero-extended.
void scatter_d_row_pairs(Warp &w, const uint32_t *regs_d, const void *words) {
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static const bool has_avx2 = __builtin_cpu_supports("avx2");
  if (has_avx2)
    return scatter_d_row_pairs_avx2(w, regs_d, words);
#endif
  const auto *in = static_cast<const uint8_t *>(words);
  for (uint32_t i = 0; i < 4; ++i) {
    uint64_t out[32];
    for (uint32_t lane = 0; lane < 32; ++lane) {
      uint32_t word;
      std::memcpy(&word, in + 4 * (64 * (i / 2) + 2 * lane + i % 2), 4);
      out[lane] = word;
    }
    std::memcpy(w.regs + size_t{regs_d[i]} * 32, out, sizeof out);
  }
}

// f16 / bf16 / tf32 mma with f32 or f16 accumulators.
template <MmaKind kKind, uint32_t kBits, typename Decode>
void mma_float(Warp &w, const Instr &in, const Regs &regs, Decode decode) {
  constexpr const Layout &L = kLayouts[static_cast<uint32_t>(kKind)];
  constexpr uint32_t M = L.m, N = L.n, K = L.k;
  float A[M * K], B[K * N], acc[M * N];
  uint32_t nan = 0;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static const bool has_avx2 = cpu_has_avx2_f16c();
  if constexpr (kBits == 16) {
    if (has_avx2) {
      constexpr uint32_t nregs = L.a_elems / 2;
      const bool bf16 = decode.table == bf16_table();
      nan = bf16 ? decode_halves_avx2<nregs, true>(w, regs.a, A)
                 : decode_halves_avx2<nregs, false>(w, regs.a, A);
      if (nan) // NaN elements: decode through the tables (canonical NaNs)
        decode_fragments<L.a_elems, kBits>(w, regs.a, decode, A);
    }
  }
  if (kBits != 16 || !has_avx2)
#endif
    nan = decode_fragments<L.a_elems, kBits>(w, regs.a, decode, A);
  bool b_done = false;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if constexpr (kBits == 16 && b_is_k_major<2>(L)) {
    if (has_avx2) {
      const uint32_t b_nan = decode.table == bf16_table()
                                 ? decode_b_rows_avx2<L.b_elems / 2, 1>(w, regs.b, B)
                                 : decode_b_rows_avx2<L.b_elems / 2, 0>(w, regs.b, B);
      b_done = b_nan == 0; // NaN elements: decode through the tables (canonical NaNs)
    }
  }
#endif
  if (!b_done)
    nan |= gather<L.b_elems, kBits>(w, regs.b, L.b, decode, B);
  static_assert(c_is_row_pairs(L));
  if (in.type3 == DType::F16) {
    nan |= gather<4, 16>(w, regs.c, L.c, decode_f16(), acc);
  }
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  else if (has_avx2) {
    nan |= gather_c_row_pairs_avx2(w, regs.c, acc);
  }
#endif
  else { // C in row pairs: two contiguous runs of 64
    uint32_t bits[4][32];
    for (uint32_t i = 0; i < 4; ++i) {
      const uint64_t *c = w.regs + size_t{regs.c[i]} * 32;
      for (uint32_t lane = 0; lane < 32; ++lane)
        bits[i][lane] = static_cast<uint32_t>(c[lane]);
    }
    uint32_t exp_all_ones = 0;
    for (uint32_t h = 0; h < 2; ++h) {
      for (uint32_t lane = 0; lane < 32; ++lane) {
        const uint32_t x = bits[2 * h][lane], y = bits[2 * h + 1][lane];
        exp_all_ones |= ((x & 0x7fffffffu) > 0x7f800000u) | ((y & 0x7fffffffu) > 0x7f800000u);
        std::memcpy(acc + 64 * h + 2 * lane, &x, 4);
        std::memcpy(acc + 64 * h + 2 * lane + 1, &y, 4);
      }
    }
    nan |= exp_all_ones;
  }
  if (nan) // NaN inputs: the NaN-exact path
    multiply_f32_nan<kKind>(A, B, acc);
  else
    multiply_f32<kKind>(A, B, acc);
  if (in.type == DType::F16) {
    uint64_t *d0 = w.regs + size_t{regs.d[0]} * 32, *d1 = w.regs + size_t{regs.d[1]} * 32;
    for (uint32_t lane = 0; lane < 32; ++lane) {
      const auto &c = L.c[lane];
      d0[lane] = uint64_t{f32_to_f16_bits(acc[c[0]])} | uint64_t{f32_to_f16_bits(acc[c[1]])} << 16;
      d1[lane] = uint64_t{f32_to_f16_bits(acc[c[2]])} | uint64_t{f32_to_f16_bits(acc[c[3]])} << 16;
    }
    return;
  }
  scatter_d_row_pairs(w, regs.d, acc);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
// In the 8-bit layouts each register of a lane holds 4 consecutive k (one byte quad) of one A row
// or one B column, and lanes 4g..4g+3 hold 4 consecutive quads of the same row (column).
template <MmaKind kKind> constexpr bool byte_quads_in_lane_fours() {
  constexpr const Layout &L = kLayouts[static_cast<uint32_t>(kKind)];
  for (uint32_t lane = 0; lane < 32; ++lane) {
    const uint32_t first = lane & ~3u, j = lane & 3;
    for (uint32_t r = 0; r < L.a_elems / 4; ++r)
      for (uint32_t e = 0; e < 4; ++e)
        if (L.a[lane][4 * r + e] != L.a[first][4 * r] + 4 * j + e)
          return false;
    for (uint32_t r = 0; r < L.b_elems / 4; ++r)
      for (uint32_t e = 0; e < 4; ++e)
        if (L.b[lane][4 * r + e] != L.b[first][4 * r] + (4 * j + e) * L.n)
          return false;
  }
  return true;
}

// s8 or u8 A times s8 B as dot products of byte quads: vpdpbusd multiplies 4 unsigned bytes by
// 4 signed bytes and adds the 4 products to an s32 lane, so a row of 8 sums takes K/4 of them. A
// signed A is made unsigned by adding 128 to each byte (xor 0x80), and 128 * (B's column sums)
// taken back off. Every partial sum is an exact integer below 2^20, so sums[] (row-major M x N,
// f32) holds the same values the f32 products give.
template <MmaKind kKind, bool kSignedA>
__attribute__((target("avx2,avx512f,avx512vl,avx512vnni"))) void
multiply_bytes_vnni(const Warp &w, const Regs &regs, float *sums) {
  constexpr const Layout &L = kLayouts[static_cast<uint32_t>(kKind)];
  constexpr uint32_t M = L.m, N = L.n, K = L.k, Q = K / 4;
  static_assert(N == 8 && K % 16 == 0 && L.a_per_reg == 4 && byte_quads_in_lane_fours<kKind>());
  alignas(32) uint32_t a[M][Q], b[N][Q]; // quads: a[row][q], b[column][q]
  const __m128i flip = _mm_set1_epi32(kSignedA ? static_cast<int>(0x80808080u) : 0);

  for (uint32_t r = 0; r < L.a_elems / 4; ++r) {
    const uint64_t *src = w.regs + size_t{regs.a[r]} * 32;
#pragma GCC unroll 8
    for (uint32_t g = 0; g < 8; ++g) {       // lanes 4g..4g+3: 4 quads of one row
      const uint32_t at = L.a[4 * g][4 * r]; // row * K + k, k a multiple of 4
      _mm_store_si128(reinterpret_cast<__m128i *>(&a[at / K][at % K / 4]),
                      _mm_xor_si128(low_words_of_4_lanes(src + 4 * g), flip));
    }
  }
  for (uint32_t r = 0; r < L.b_elems / 4; ++r) {
    const uint64_t *src = w.regs + size_t{regs.b[r]} * 32;
#pragma GCC unroll 8
    for (uint32_t g = 0; g < 8; ++g) {       // lanes 4g..4g+3: 4 quads of one column
      const uint32_t at = L.b[4 * g][4 * r]; // k * N + n
      _mm_store_si128(reinterpret_cast<__m128i *>(&b[at % N][at / N / 4]),
                      low_words_of_4_lanes(src + 4 * g));
    }
  }
  // bq[q]: quad q of the 8 columns
  const __m256i columns = _mm256_setr_epi32(0, Q, 2 * Q, 3 * Q, 4 * Q, 5 * Q, 6 * Q, 7 * Q);
  __m256i bq[Q];
  __m256i start = _mm256_setzero_si256(); // -128 * column sums of B for a signed A
  for (uint32_t q = 0; q < Q; ++q) {
    bq[q] = _mm256_i32gather_epi32(reinterpret_cast<const int *>(&b[0][q]), columns, 4);
    if constexpr (kSignedA)
      start = _mm256_dpbusd_epi32(start, _mm256_set1_epi32(0x01010101), bq[q]);
  }
  if constexpr (kSignedA)
    start = _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(start, 7));
#pragma GCC unroll 4
  for (uint32_t row = 0; row < M; ++row) {
    __m256i acc = start;
#pragma GCC unroll 8
    for (uint32_t q = 0; q < Q; ++q)
      acc = _mm256_dpbusd_epi32(acc, _mm256_set1_epi32(static_cast<int>(a[row][q])), bq[q]);
    _mm256_storeu_ps(sums + row * N, _mm256_cvtepi32_ps(acc));
  }
}
#endif

// s8/u8/s4/u4 mma with s32 accumulators (exact; see the file comment).
template <MmaKind kKind, uint32_t kBits, typename DecodeA, typename DecodeB>
void mma_int(Warp &w, const Instr &in, const Regs &regs, DecodeA decode_a, DecodeB decode_b) {
  constexpr const Layout &L = kLayouts[static_cast<uint32_t>(kKind)];
  constexpr uint32_t M = L.m, N = L.n, K = L.k;
  float A[M * K], B[K * N], sum[M * N] = {};
  bool a_done = false, b_done = false, summed = false;
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  static const bool has_avx2 = cpu_has_avx2_f16c();
  static const bool has_vnni =
      has_avx2 && __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512vl");
  if constexpr (kBits == 8 && std::is_same_v<DecodeB, DecodeS8> &&
                (std::is_same_v<DecodeA, DecodeS8> || std::is_same_v<DecodeA, DecodeU8>)) {
    if (has_vnni) {
      multiply_bytes_vnni<kKind, std::is_same_v<DecodeA, DecodeS8>>(w, regs, sum);
      a_done = b_done = summed = true;
    }
  }
  if constexpr (kBits == 8 &&
                (std::is_same_v<DecodeA, DecodeS8> || std::is_same_v<DecodeA, DecodeU8>)) {
    if (has_avx2 && !a_done) {
      decode_bytes_avx2<L.a_elems / 4, std::is_same_v<DecodeA, DecodeS8>>(w, regs.a, A);
      a_done = true;
    }
  }
#endif
  if (!a_done)
    decode_fragments<L.a_elems, kBits>(w, regs.a, decode_a, A);
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if constexpr (kBits == 8 && b_is_k_major<4>(L) &&
                (std::is_same_v<DecodeB, DecodeS8> || std::is_same_v<DecodeB, DecodeU8>)) {
    if (has_avx2 && !b_done) {
      decode_b_rows_avx2<L.b_elems / 4, std::is_same_v<DecodeB, DecodeS8> ? 2 : 3>(w, regs.b, B);
      b_done = true;
    }
  }
#endif
  if (!b_done)
    gather<L.b_elems, kBits>(w, regs.b, L.b, decode_b, B);
  if (!summed)
    multiply_f32<kKind>(A, B, sum);
  static_assert(c_is_row_pairs(L));
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (!in.satfinite && has_avx2) {
    add_c_row_pairs_avx2(w, regs.c, regs.d, sum);
    return;
  }
#endif
  int32_t C[4][32]; // read before any D register is written (D may name C's registers)
  for (uint32_t i = 0; i < 4; ++i) {
    const uint64_t *c = w.regs + size_t{regs.c[i]} * 32;
    for (uint32_t lane = 0; lane < 32; ++lane)
      C[i][lane] = static_cast<int32_t>(c[lane]);
  }
  for (uint32_t i = 0; i < 4; ++i) {
    uint64_t *d = w.regs + size_t{regs.d[i]} * 32;
    for (uint32_t lane = 0; lane < 32; ++lane) {
      int64_t acc = int64_t{C[i][lane]} + static_cast<int64_t>(sum[L.c[lane][i]]);
      if (in.satfinite)
        acc = std::min<int64_t>(std::max<int64_t>(acc, INT32_MIN), INT32_MAX);
      d[lane] = static_cast<uint32_t>(acc);
    }
  }
}

template <MmaKind kKind, uint32_t kBits, typename DecodeA>
void mma_int_b(Warp &w, const Instr &in, const Regs &regs, DecodeA decode_a) {
  constexpr bool is_s4 = kBits == 4;
  if (in.type4 == DType::S8 || in.type4 == DType::S4) {
    if constexpr (is_s4)
      mma_int<kKind, kBits>(w, in, regs, decode_a, DecodeS4{});
    else
      mma_int<kKind, kBits>(w, in, regs, decode_a, DecodeS8{});
  } else {
    if constexpr (is_s4)
      mma_int<kKind, kBits>(w, in, regs, decode_a, DecodeU4{});
    else
      mma_int<kKind, kBits>(w, in, regs, decode_a, DecodeU8{});
  }
}

template <MmaKind kKind, uint32_t kBits>
void mma_int_ab(Warp &w, const Instr &in, const Regs &regs) {
  constexpr bool is_s4 = kBits == 4;
  if (in.type2 == DType::S8 || in.type2 == DType::S4) {
    if constexpr (is_s4)
      mma_int_b<kKind, kBits>(w, in, regs, DecodeS4{});
    else
      mma_int_b<kKind, kBits>(w, in, regs, DecodeS8{});
  } else {
    if constexpr (is_s4)
      mma_int_b<kKind, kBits>(w, in, regs, DecodeU4{});
    else
      mma_int_b<kKind, kBits>(w, in, regs, DecodeU8{});
  }
}

// The NaN of fma(a, b, c) = r as libm's fma returns it: the first NaN of a, b, c (quieted), else
// r (the instruction's choice depends on the operand order the compiler picks).
inline double fma_nan_ordered(double r, double a, double b, double c) {
  if (r == r)
    return r;
  const auto quiet = [](double x) {
    return std::bit_cast<double>(std::bit_cast<uint64_t>(x) | 0x0008000000000000ull);
  };
  return a != a ? quiet(a) : b != b ? quiet(b) : c != c ? quiet(c) : r;
}

// acc (8x8) = fma chains over A (8x4) * B (4x8) in k order. std::fma is a libm call on baseline
// x86-64; where the CPU has FMA, the instruction (the same single rounding).
void multiply_f64_generic(const double *A, const double *B, double *acc) {
  for (uint32_t m = 0; m < 8; ++m)
    for (uint32_t n = 0; n < 8; ++n)
      for (uint32_t k = 0; k < 4; ++k)
        acc[m * 8 + n] = std::fma(A[m * 4 + k], B[k * 8 + n], acc[m * 8 + n]);
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
__attribute__((target("fma"))) void multiply_f64_hw(const double *A, const double *B, double *acc) {
  for (uint32_t m = 0; m < 8; ++m)
    for (uint32_t n = 0; n < 8; ++n)
      for (uint32_t k = 0; k < 4; ++k)
        acc[m * 8 + n] = fma_nan_ordered(__builtin_fma(A[m * 4 + k], B[k * 8 + n], acc[m * 8 + n]),
                                         A[m * 4 + k], B[k * 8 + n], acc[m * 8 + n]);
}

// Rows of 8 accumulators as two 4-wide vectors, k ascending: each element is the same chain of
// fused multiply-adds as multiply_f64_hw's. For inputs without NaNs only: a NaN the chain makes
// (inf * 0, inf - inf) is the instruction's in both, but an input NaN must be the first of a, b, c
// (fma_nan_ordered), which the vector form does not pick.
__attribute__((target("avx2,fma"))) void multiply_f64_rows(const double *A, const double *B,
                                                           double *acc) {
  for (uint32_t m = 0; m < 8; ++m) {
    __m256d lo = _mm256_loadu_pd(acc + m * 8), hi = _mm256_loadu_pd(acc + m * 8 + 4);
    for (uint32_t k = 0; k < 4; ++k) {
      const __m256d a = _mm256_broadcast_sd(A + m * 4 + k);
      lo = _mm256_fmadd_pd(a, _mm256_loadu_pd(B + k * 8), lo);
      hi = _mm256_fmadd_pd(a, _mm256_loadu_pd(B + k * 8 + 4), hi);
    }
    _mm256_storeu_pd(acc + m * 8, lo);
    _mm256_storeu_pd(acc + m * 8 + 4, hi);
  }
}

bool any_nan(const double *x, uint32_t n) {
  bool nan = false;
  for (uint32_t i = 0; i < n; ++i)
    nan |= x[i] != x[i];
  return nan;
}

void multiply_f64(const double *A, const double *B, double *acc) {
  static const bool has_fma = __builtin_cpu_supports("fma");
  static const bool has_avx2 = __builtin_cpu_supports("avx2");
  if (has_fma && has_avx2 && !any_nan(A, 32) && !any_nan(B, 32) && !any_nan(acc, 64))
    multiply_f64_rows(A, B, acc);
  else if (has_fma)
    multiply_f64_hw(A, B, acc);
  else
    multiply_f64_generic(A, B, acc);
}
#else
void multiply_f64(const double *A, const double *B, double *acc) {
  multiply_f64_generic(A, B, acc);
}
#endif

// m8n8k4 f64: an fma chain in k order per element, starting from C.
void mma_f64(Warp &w, const Regs &regs) {
  const Layout &L = kLayouts[static_cast<uint32_t>(MmaKind::F64_M8N8K4)];
  double A[8 * 4], B[4 * 8], acc[8 * 8];
  const uint64_t *a = w.regs + size_t{regs.a[0]} * 32, *b = w.regs + size_t{regs.b[0]} * 32;
  const uint64_t *c0 = w.regs + size_t{regs.c[0]} * 32, *c1 = w.regs + size_t{regs.c[1]} * 32;
  for (uint32_t lane = 0; lane < 32; ++lane) {
    A[L.a[lane][0]] = f64_of(a[lane]);
    B[L.b[lane][0]] = f64_of(b[lane]);
    acc[L.c[lane][0]] = f64_of(c0[lane]);
    acc[L.c[lane][1]] = f64_of(c1[lane]);
  }
  multiply_f64(A, B, acc);
  uint64_t *d0 = w.regs + size_t{regs.d[0]} * 32, *d1 = w.regs + size_t{regs.d[1]} * 32;
  for (uint32_t lane = 0; lane < 32; ++lane) {
    d0[lane] = bits_of(acc[L.c[lane][0]]);
    d1[lane] = bits_of(acc[L.c[lane][1]]);
  }
}

// fp8 m16n8k32 with f32 C/D: A and B decoded exactly (each of e4m3, e5m2), products exact in f32
// (at most 8 significant bits, magnitudes in [2^-32, 2^32)), accumulated in f32 in k order from
// C, like the f16 forms. The hardware's accumulation keeps fewer bits (docs/emulator.md).
template <typename DecodeA, typename DecodeB>
void mma_fp8(Warp &w, const Regs &regs, DecodeA decode_a, DecodeB decode_b) {
  constexpr MmaKind kKind = MmaKind::F8_M16N8K32;
  constexpr const Layout &L = kLayouts[static_cast<uint32_t>(kKind)];
  constexpr uint32_t M = L.m, N = L.n, K = L.k;
  float A[M * K], B[K * N], acc[M * N];
  uint32_t nan = decode_fragments<L.a_elems, 8>(w, regs.a, decode_a, A);
  nan |= gather<L.b_elems, 8>(w, regs.b, L.b, decode_b, B);
  nan |= gather<4, 32>(w, regs.c, L.c, DecodeF32{}, acc);
  if (nan)
    multiply_f32_nan<kKind>(A, B, acc);
  else
    multiply_f32<kKind>(A, B, acc);
  scatter_d_row_pairs(w, regs.d, acc);
}

template <typename DecodeA> void mma_fp8_b(Warp &w, const Instr &in, const Regs &regs, DecodeA a) {
  if (in.type4 == DType::E4M3)
    mma_fp8(w, regs, a, DecodeE4M3{});
  else
    mma_fp8(w, regs, a, DecodeE5M2{});
}

// Single-bit mma (m16n8k256 / m16n8k128 .b1, PTX ISA "Matrix fragments for mma.m16n8k256" and
// "m16n8k128"): D = C + popc(A row OP B column) over K, OP the instruction's .and or .xor, exact
// (wrapping to s32). Bit j of a register is element j. Registers, lane (g = lane/4, q = lane%4):
//   A a_r: row g + 8 * (r % 2), k = 32 q + j + 128 * (r / 2)   (k128: a0 a1 only)
//   B b_r: column g,            k = 32 q + j + 128 * r         (k128: b0 only)
//   C/D c_i: row g + 8 * (i / 2), column 2 q + i % 2
// so each register is one 32-bit word of a row of A (column of B): word q + 4 * (r / 2).
void mma_b1(Warp &w, const Instr &in, const Regs &regs, uint32_t k) {
  const uint32_t words = k / 32, a_regs = k / 64, b_regs = k / 128;
  uint32_t A[16][8] = {}, B[8][8] = {};
  for (uint32_t r = 0; r < a_regs; ++r) {
    const uint64_t *src = w.regs + size_t{regs.a[r]} * 32;
    for (uint32_t lane = 0; lane < 32; ++lane)
      A[(lane >> 2) + 8 * (r % 2)][(lane & 3) + 4 * (r / 2)] = static_cast<uint32_t>(src[lane]);
  }
  for (uint32_t r = 0; r < b_regs; ++r) {
    const uint64_t *src = w.regs + size_t{regs.b[r]} * 32;
    for (uint32_t lane = 0; lane < 32; ++lane)
      B[lane >> 2][(lane & 3) + 4 * r] = static_cast<uint32_t>(src[lane]);
  }
  int32_t C[4][32]; // read before any D register is written (D may name C's registers)
  for (uint32_t i = 0; i < 4; ++i) {
    const uint64_t *c = w.regs + size_t{regs.c[i]} * 32;
    for (uint32_t lane = 0; lane < 32; ++lane)
      C[i][lane] = static_cast<int32_t>(c[lane]);
  }
  const bool xor_popc = in.bop == BoolOp::Xor;
  for (uint32_t i = 0; i < 4; ++i) {
    uint64_t *d = w.regs + size_t{regs.d[i]} * 32;
    for (uint32_t lane = 0; lane < 32; ++lane) {
      const uint32_t row = (lane >> 2) + 8 * (i / 2), col = 2 * (lane & 3) + i % 2;
      uint32_t count = 0;
      for (uint32_t x = 0; x < words; ++x)
        count += static_cast<uint32_t>(
            std::popcount(xor_popc ? A[row][x] ^ B[col][x] : A[row][x] & B[col][x]));
      d[lane] = static_cast<uint32_t>(C[i][lane]) + count;
    }
  }
}

template <MmaKind kKind> void mma_half(Warp &w, const Instr &in, const Regs &regs) {
  // A and B have the same type (f16 or bf16)
  mma_float<kKind, 16>(w, in, regs, in.type2 == DType::BF16 ? decode_bf16() : decode_f16());
}

} // namespace

void exec_mma(ExecContext &ctx, Warp &w, const Instr &in, uint32_t mask) {
  if (mask != 0xffffffffu)
    fault(ctx, w, in, -1,
          "mma.sync.aligned executed by lanes " + hex_address(mask) +
              ": all 32 lanes of the warp must execute it together (convergent, unpredicated)");
  const MmaKind kind = in.mma;
  const Regs regs = regs_of(ctx, in);
  if (kind == MmaKind::B1_M16N8K256 || kind == MmaKind::B1_M16N8K128) {
    const uint32_t k = kind == MmaKind::B1_M16N8K256 ? 256 : 128;
    mma_b1(w, in, regs, k);
    ++ctx.counters.mma_instructions;
    ctx.counters.mma_flops += 2ull * 16 * 8 * k;
    return;
  }
  switch (kind) {
  case MmaKind::F16_M16N8K16:
  case MmaKind::BF16_M16N8K16: mma_half<MmaKind::F16_M16N8K16>(w, in, regs); break;
  case MmaKind::F16_M16N8K8:
  case MmaKind::BF16_M16N8K8: mma_half<MmaKind::F16_M16N8K8>(w, in, regs); break;
  case MmaKind::TF32_M16N8K8:
    mma_float<MmaKind::TF32_M16N8K8, 32>(w, in, regs, DecodeTf32{});
    break;
  case MmaKind::TF32_M16N8K4:
    mma_float<MmaKind::TF32_M16N8K4, 32>(w, in, regs, DecodeTf32{});
    break;
  case MmaKind::I8_M16N8K32: mma_int_ab<MmaKind::I8_M16N8K32, 8>(w, in, regs); break;
  case MmaKind::I8_M16N8K16: mma_int_ab<MmaKind::I8_M16N8K16, 8>(w, in, regs); break;
  case MmaKind::I4_M16N8K64: mma_int_ab<MmaKind::I4_M16N8K64, 4>(w, in, regs); break;
  case MmaKind::I4_M16N8K32: mma_int_ab<MmaKind::I4_M16N8K32, 4>(w, in, regs); break;
  case MmaKind::F64_M8N8K4: mma_f64(w, regs); break;
  case MmaKind::F8_M16N8K32:
    if (in.type2 == DType::E4M3)
      mma_fp8_b(w, in, regs, DecodeE4M3{});
    else
      mma_fp8_b(w, in, regs, DecodeE5M2{});
    break;
  case MmaKind::B1_M16N8K256:
  case MmaKind::B1_M16N8K128: break; // above
  }
  const Layout &L = kLayouts[static_cast<uint32_t>(kind)];
  ++ctx.counters.mma_instructions;
  ctx.counters.mma_flops += 2ull * L.m * L.n * L.k;
}

namespace {

// The kind of mma.sync a shape and the D, A, B, C types name; nullopt for an unsupported one.
std::optional<MmaKind> mma_kind(std::string_view shape, DType d, DType a, DType b, DType c) {
  auto is8 = [](DType t) { return t == DType::S8 || t == DType::U8; };
  auto is4 = [](DType t) { return t == DType::S4 || t == DType::U4; };
  const bool fp_acc = (d == DType::F32 || d == DType::F16) && (c == DType::F32 || c == DType::F16);
  const bool f32_acc = d == DType::F32 && c == DType::F32;
  const bool s32_acc = d == DType::S32 && c == DType::S32;
  if (shape == "m16n8k16" && a == DType::F16 && b == DType::F16 && fp_acc)
    return MmaKind::F16_M16N8K16;
  if (shape == "m16n8k8" && a == DType::F16 && b == DType::F16 && fp_acc)
    return MmaKind::F16_M16N8K8;
  if (shape == "m16n8k16" && a == DType::BF16 && b == DType::BF16 && f32_acc)
    return MmaKind::BF16_M16N8K16;
  if (shape == "m16n8k8" && a == DType::BF16 && b == DType::BF16 && f32_acc)
    return MmaKind::BF16_M16N8K8;
  if ((shape == "m16n8k8" || shape == "m16n8k4") && a == DType::TF32 && b == DType::TF32 && f32_acc)
    return shape == "m16n8k8" ? MmaKind::TF32_M16N8K8 : MmaKind::TF32_M16N8K4;
  if ((shape == "m16n8k32" || shape == "m16n8k16") && is8(a) && is8(b) && s32_acc)
    return shape == "m16n8k32" ? MmaKind::I8_M16N8K32 : MmaKind::I8_M16N8K16;
  if ((shape == "m16n8k64" || shape == "m16n8k32") && is4(a) && is4(b) && s32_acc)
    return shape == "m16n8k64" ? MmaKind::I4_M16N8K64 : MmaKind::I4_M16N8K32;
  auto is_fp8 = [](DType t) { return t == DType::E4M3 || t == DType::E5M2; };
  if (shape == "m16n8k32" && is_fp8(a) && is_fp8(b) && f32_acc)
    return MmaKind::F8_M16N8K32;
  if (shape == "m8n8k4" && a == DType::F64 && b == DType::F64 && d == DType::F64 && c == DType::F64)
    return MmaKind::F64_M8N8K4;
  if ((shape == "m16n8k256" || shape == "m16n8k128") && a == DType::B1 && b == DType::B1 && s32_acc)
    return shape == "m16n8k256" ? MmaKind::B1_M16N8K256 : MmaKind::B1_M16N8K128;
  return std::nullopt;
}

// Registers per thread in each fragment of an mma.
struct MmaFragmentSizes {
  uint32_t a = 0, b = 0, c = 0, d = 0;
};

MmaFragmentSizes mma_fragment_sizes(MmaKind kind, DType d, DType c) {
  MmaFragmentSizes n;
  switch (kind) {
  case MmaKind::F16_M16N8K16:
  case MmaKind::BF16_M16N8K16:
  case MmaKind::I8_M16N8K32:
  case MmaKind::F8_M16N8K32:
  case MmaKind::I4_M16N8K64:
  case MmaKind::B1_M16N8K256:
  case MmaKind::TF32_M16N8K8: n = {4, 2, 0, 4}; break;
  case MmaKind::F16_M16N8K8:
  case MmaKind::BF16_M16N8K8:
  case MmaKind::I8_M16N8K16:
  case MmaKind::I4_M16N8K32:
  case MmaKind::B1_M16N8K128:
  case MmaKind::TF32_M16N8K4: n = {2, 1, 0, 4}; break;
  case MmaKind::F64_M8N8K4: n = {1, 1, 0, 2}; break;
  }
  if (d == DType::F16)
    n.d = 2;
  n.c = c == DType::F16 ? 2 : n.d;
  if (kind == MmaKind::F16_M16N8K16 || kind == MmaKind::F16_M16N8K8)
    n.c = c == DType::F16 ? 2 : 4;
  return n;
}

} // namespace

void decode_mma(DecodeState &s) {
  Instr &in = s.in;
  Modifiers &m = s.mods;
  const auto &ops = s.ai.operands;
  in.op = Op::Mma;
  in.cls = InstrClass::Mma;
  in.exec = exec_mma;
  if (!m.take("sync") || !m.take("aligned"))
    decode_fail(s, "only mma.sync.aligned is supported");
  if (!m.take("row") || !m.take("col"))
    decode_fail(s, "only the .row.col layout of mma is supported");
  in.satfinite = m.take("satfinite");
  in.rnd = take_rounding(m); // f64 only (the checker refuses it elsewhere)
  std::string shape;
  for (const char *name : {"m16n8k16", "m16n8k8", "m16n8k32", "m16n8k64", "m8n8k4", "m16n8k4",
                           "m16n8k256", "m16n8k128"}) {
    if (m.take(name))
      shape = name;
  }
  // single-bit mma: .and.popc or .xor.popc
  const bool bit_and = m.take("and"), bit_xor = m.take("xor"), popc = m.take("popc");
  in.bop = bit_and ? BoolOp::And : bit_xor ? BoolOp::Xor : BoolOp::None;
  auto ts = m.take_types();
  expect_no_modifiers_left(s);
  if (shape.empty() || ts.size() != 4)
    decode_fail(s, "mma needs a shape and four types (.dtype.atype.btype.ctype)");
  in.type = ts[0];
  in.type2 = ts[1];
  in.type4 = ts[2];
  in.type3 = ts[3];
  std::optional<MmaKind> kind = mma_kind(shape, in.type, in.type2, in.type4, in.type3);
  if (!kind)
    decode_fail(s, "unsupported mma shape/type combination '" + s.ai.opcode + "'");
  in.mma = *kind;
  const bool b1 = in.mma == MmaKind::B1_M16N8K256 || in.mma == MmaKind::B1_M16N8K128;
  if (b1 && (!popc || bit_and == bit_xor))
    decode_fail(s, "single-bit mma needs exactly one of .and.popc and .xor.popc");
  if (!b1 && (popc || bit_and || bit_xor))
    decode_fail(s, ".and/.xor/.popc apply to single-bit (.b1) mma only");
  if (in.satfinite && in.type != DType::S32)
    decode_fail(s, ".satfinite applies to integer mma only");
  if (in.rnd != Round::None && in.rnd != Round::Rn)
    decode_fail(s, "'" + s.ai.opcode +
                       "' is not supported: the emulator's f64 mma rounds to nearest (.rn only)");
  expect_operands(s, 4, 4);
  for (int i = 0; i < 4; ++i) {
    if (ops[i].kind != AstOperand::Kind::Vector)
      decode_fail(s, "mma operands are {..} register vectors");
  }
  in.dst = dest_operand(s, ops[0], in.type);
  in.src[0] = source_operand(s, 1, DType::B32);
  in.src[1] = source_operand(s, 2, DType::B32);
  in.src[2] = source_operand(s, 3, in.type3);
  const MmaFragmentSizes n = mma_fragment_sizes(in.mma, in.type, in.type3);
  if (in.src[0].count != n.a || in.src[1].count != n.b || in.dst.count != n.d ||
      in.src[2].count != n.c)
    decode_fail(s, "mma fragment sizes do not match the shape: expected A " + std::to_string(n.a) +
                       ", B " + std::to_string(n.b) + ", C " + std::to_string(n.c) + ", D " +
                       std::to_string(n.d) + " registers");
}

} // namespace tcjit::emu
