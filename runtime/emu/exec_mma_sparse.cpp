// mma.sp{::ordered_metadata}.sync.aligned.<shape>.row.col: the warp-level mma whose A operand is
// 2:4 structured sparse (PTX ISA, "Matrix multiply-accumulate operation using mma.sp instruction
// with sparse matrix A"). A is passed compressed (the K/2 kept values of each row) with the
// fragment layout of the dense mma of shape K/2; the metadata register E says where each kept
// value sits in its chunk of the row. The emulator expands A into its dense rows with E and
// multiplies like the dense mma (exec_mma.cpp): products exact, f32 accumulation in k order
// starting from C (over the kept values only: a pruned position adds nothing, so a 0 * inf never
// makes a NaN), integers exact with wrap or .satfinite.
//
// Metadata (docs/emulator.md, "Sparse mma"): a chunk is 4 units of a row (a unit: one f16/bf16,
// one s8/u8, half a tf32, a pair of s4/u4) of which 2 are kept; its 4-bit nibble holds two 2-bit
// unit indices, the first kept value's in bits 1:0. The 32-bit E words of the group's metadata
// threads (lane 4*groupID + selector*W + w, w < W; W = 1, 2 or 4 by shape) form one bit stream;
// it lists the nibbles register by register of A (register r of every thread of the group, thread
// 0 first), each thread's register's chunks in order. Undefined metadata (equal indices; with
// ::ordered_metadata, a first index not below the second; tf32: other than 0b0100 / 0b1110) does
// not stop the launch (the ISA leaves the result undefined, and CUTLASS's sparse GEMM runs mma.sp
// on the zero-filled metadata of rows past M in its last block): every D element of such a row
// gets the poison value (f32: the NaN 0x7fffffff, f16: 0x7fff, s32: 0x80000000), and the row is
// counted in LaunchCounters::undefined_mma_sp_rows. A selector outside the ISA's range for the
// shape (ptxas takes it) poisons all 16 rows.
#include <bit>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/emu/exec_context.h"
#include "runtime/emu/exec_families.h"
#include "runtime/emu/float_format.h"
#include "runtime/emu/instruction_decode.h"

namespace tcjit::emu {

namespace {

constexpr uint32_t kM = 16, kN = 8, kMaxK = 128;

// The geometry of one sparse shape and A type.
struct SparseShape {
  uint32_t k = 0;           // the dense K
  uint32_t elem_bits = 0;   // bits of one A/B element
  uint32_t kept = 0;        // kept elements per chunk
  uint32_t chunk_elems = 0; // elements per chunk of a dense row
  uint32_t per_reg = 0;     // elements per 32-bit register
  uint32_t a_regs = 0, b_regs = 0;
  uint32_t chunks_per_reg = 0; // chunks one thread's A register covers
  uint32_t meta_threads = 0;   // W: threads of a group that provide metadata
  uint32_t max_selector = 0;   // the ISA's range: 0..max_selector
};

SparseShape sparse_shape(DType a, uint32_t k) {
  SparseShape s;
  s.k = k;
  switch (a) {
  case DType::F16:
  case DType::BF16: s.elem_bits = 16, s.kept = 2, s.chunk_elems = 4; break;
  case DType::TF32: s.elem_bits = 32, s.kept = 1, s.chunk_elems = 2; break;
  case DType::S8:
  case DType::U8: s.elem_bits = 8, s.kept = 2, s.chunk_elems = 4; break;
  default: s.elem_bits = 4, s.kept = 4, s.chunk_elems = 8; break; // s4, u4
  }
  s.per_reg = 32 / s.elem_bits;
  s.a_regs = kM * (k / 2) / (32 * s.per_reg);
  s.b_regs = k * kN / (32 * s.per_reg);
  s.chunks_per_reg = s.per_reg / s.kept;
  s.meta_threads = s.a_regs * 4 * s.chunks_per_reg * 4 / 32;
  s.max_selector = s.meta_threads == 1 ? 3 : s.meta_threads == 2 ? 1 : 0;
  return s;
}

uint32_t reg_of(const ExecContext &ctx, const Operand &o, uint32_t i) {
  return o.kind == OperandKind::Vector ? vector_reg(ctx, o, i) : o.reg;
}

// One element of an A or B register as a number (f16/bf16/tf32 exactly as the type holds it); the
// f16/bf16 decode table is looked up once per mma.
struct ElementDecoder {
  DType type;
  const float *table = nullptr;
  explicit ElementDecoder(DType t)
      : type(t), table(t == DType::F16    ? f16_table()
                       : t == DType::BF16 ? bf16_table()
                                          : nullptr) {}
  float operator()(uint32_t raw) const {
    switch (type) {
    case DType::F16:
    case DType::BF16: return table[raw & 0xffff];
    case DType::TF32: return std::bit_cast<float>(raw & 0xffffe000u);
    case DType::S8: return static_cast<int8_t>(raw & 0xff);
    case DType::U8: return static_cast<float>(raw & 0xff);
    case DType::S4: return static_cast<float>(static_cast<int32_t>((raw & 0xf) << 28) >> 28);
    default: return static_cast<float>(raw & 0xf); // u4
    }
  }
};

// A's kept values in dense coordinates: per row, the (k, value) pairs in increasing k.
struct SparseA {
  float value[kM][kMaxK / 2];
  uint8_t col[kM][kMaxK / 2];
  uint32_t count[kM] = {};
  bool undefined[kM] = {}; // the row's metadata is undefined: its D elements are poison
};

// What an undefined mma.sp row of D holds (docs/emulator.md, "Sparse mma"): a NaN, or for s32 the
// most negative integer, values a comparison against a reference cannot pass.
constexpr uint32_t kPoisonF32 = 0x7fffffffu, kPoisonS32 = 0x80000000u;
constexpr uint16_t kPoisonF16 = 0x7fff;

// The dense positions (in elements from the chunk's start) of the kept values of a chunk whose
// metadata nibble is `nib`; false for metadata the PTX ISA leaves undefined (equal indices; with
// ::ordered_metadata a first index not below the second; tf32: not 0b0100 or 0b1110).
bool chunk_positions(const Instr &in, const SparseShape &s, uint32_t nib, uint32_t *pos) {
  const uint32_t i0 = nib & 3, i1 = nib >> 2;
  if (s.elem_bits == 32) { // tf32, 1:2: the nibble names the two halves of the kept value
    pos[0] = nib == 0b0100 ? 0 : 1;
    return nib == 0b0100 || nib == 0b1110;
  }
  if (i0 == i1 || (in.ordered_metadata && i0 > i1))
    return false;
  if (s.kept == 2) { // 2:4 of single elements
    pos[0] = i0;
    pos[1] = i1;
    return true;
  }
  // s4/u4, 4:8 in pairs: the indices name two-element sub-chunks
  pos[0] = 2 * i0, pos[1] = 2 * i0 + 1, pos[2] = 2 * i1, pos[3] = 2 * i1 + 1;
  return true;
}

// Expands the warp's compressed A with the metadata of the selected threads; marks the rows with
// undefined metadata (their kept values are left out: their D elements are poison).
void expand_a(ExecContext &ctx, const Warp &w, const Instr &in, const SparseShape &s, SparseA &A) {
  const uint32_t sel = in.sparsity_selector;
  const ElementDecoder value_of(in.type2);
  const Operand &e = in.src[3];
  const uint64_t *meta =
      e.kind == OperandKind::Imm ? nullptr : w.regs + size_t{reg_of(ctx, e, 0)} * 32;
  for (uint32_t g = 0; g < 8; ++g) {
    uint32_t stream[4] = {};
    for (uint32_t t = 0; t < s.meta_threads; ++t)
      stream[t] = static_cast<uint32_t>(meta ? meta[4 * g + sel * s.meta_threads + t] : e.imm);
    // every kept value, register by register (rows g and g+8 alternate), in k order per row
    for (uint32_t r = 0; r < s.a_regs; ++r) {
      const uint32_t row = g + 8 * (r & 1);
      const uint64_t *areg = w.regs + size_t{vector_reg(ctx, in.src[0], r)} * 32;
      for (uint32_t t = 0; t < 4; ++t) {
        const uint32_t lane = 4 * g + t;
        const uint32_t raw = static_cast<uint32_t>(areg[lane]);
        const uint32_t first_cc = (r >> 1) * 4 * s.per_reg + t * s.per_reg; // compressed column
        for (uint32_t c = 0; c < s.chunks_per_reg; ++c) {
          const uint32_t n = (r * 4 + t) * s.chunks_per_reg + c; // nibble in the stream
          const uint32_t nib = (stream[n / 8] >> (4 * (n % 8))) & 0xf;
          const uint32_t chunk = first_cc / s.kept + c;
          uint32_t pos[4];
          if (!chunk_positions(in, s, nib, pos)) {
            A.undefined[row] = true;
            continue;
          }
          for (uint32_t e = 0; e < s.kept; ++e) {
            const uint32_t bits = raw >> ((c * s.kept + e) * s.elem_bits);
            uint32_t &m = A.count[row];
            A.col[row][m] = static_cast<uint8_t>(chunk * s.chunk_elems + pos[e]);
            A.value[row][m] = value_of(bits);
            ++m;
          }
        }
      }
    }
  }
  // k order within each row (plain mma.sp may name a chunk's positions in either order)
  for (uint32_t row = 0; row < kM; ++row) {
    for (uint32_t i = 1; i < A.count[row]; ++i) {
      for (uint32_t j = i; j > 0 && A.col[row][j - 1] > A.col[row][j]; --j) {
        std::swap(A.col[row][j - 1], A.col[row][j]);
        std::swap(A.value[row][j - 1], A.value[row][j]);
      }
    }
  }
}

// Dense B (K x 8): register j of lane (groupID g, threadID_in_group t) holds k = j * 4 * per_reg
// + t * per_reg + e of column g.
void gather_b(const ExecContext &ctx, const Warp &w, const Instr &in, const SparseShape &s,
              float (*B)[kN]) {
  const ElementDecoder value_of(in.type4);
  for (uint32_t j = 0; j < s.b_regs; ++j) {
    const uint64_t *breg = w.regs + size_t{vector_reg(ctx, in.src[1], j)} * 32;
    for (uint32_t lane = 0; lane < 32; ++lane) {
      const uint32_t g = lane >> 2, t = lane & 3;
      const uint32_t raw = static_cast<uint32_t>(breg[lane]);
      for (uint32_t e = 0; e < s.per_reg; ++e)
        B[j * 4 * s.per_reg + t * s.per_reg + e][g] = value_of(raw >> (e * s.elem_bits));
    }
  }
}

// C/D element i of lane: row groupID + 8 * (i >= 2), column 2 * threadID_in_group + (i & 1).
inline uint32_t cd_row(uint32_t lane, uint32_t i) {
  return (lane >> 2) + (i >= 2 ? 8 : 0);
}
inline uint32_t cd_col(uint32_t lane, uint32_t i) {
  return 2 * (lane & 3) + (i & 1);
}

inline float quiet(float x) {
  return std::bit_cast<float>(std::bit_cast<uint32_t>(x) | 0x00400000u);
}

// acc (16 x 8) += A * B over A's kept values, a row of 8 accumulators at a time; each element
// still adds its products in k order.
void multiply_rows(const SparseA &A, const float (*B)[kN], float (*acc)[kN]) {
  for (uint32_t m = 0; m < kM; ++m) {
    for (uint32_t i = 0; i < A.count[m]; ++i) {
      const float a = A.value[m][i];
      const float *b = B[A.col[m][i]];
      for (uint32_t n = 0; n < kN; ++n)
        acc[m][n] += a * b[n];
    }
  }
}

void mma_sparse_float(ExecContext &ctx, Warp &w, const Instr &in, const SparseShape &s,
                      const SparseA &A, const float (*B)[kN]) {
  float acc[kM][kN];
  const bool c_f16 = in.type3 == DType::F16;
  for (uint32_t i = 0; i < (c_f16 ? 2u : 4u); ++i) {
    const uint64_t *c = w.regs + size_t{vector_reg(ctx, in.src[2], i)} * 32;
    for (uint32_t lane = 0; lane < 32; ++lane) {
      const uint32_t raw = static_cast<uint32_t>(c[lane]);
      if (c_f16) { // register i holds elements 2i and 2i+1
        acc[cd_row(lane, 2 * i)][cd_col(lane, 2 * i)] = f16_table()[raw & 0xffff];
        acc[cd_row(lane, 2 * i + 1)][cd_col(lane, 2 * i + 1)] = f16_table()[raw >> 16];
      } else {
        acc[cd_row(lane, i)][cd_col(lane, i)] = std::bit_cast<float>(raw);
      }
    }
  }
  bool nan = false;
  for (uint32_t m = 0; m < kM; ++m) {
    for (uint32_t i = 0; i < A.count[m]; ++i)
      nan |= A.value[m][i] != A.value[m][i];
    for (uint32_t n = 0; n < kN; ++n)
      nan |= acc[m][n] != acc[m][n];
  }
  for (uint32_t k = 0; k < s.k; ++k)
    for (uint32_t n = 0; n < kN; ++n)
      nan |= B[k][n] != B[k][n];
  if (!nan) {
    multiply_rows(A, B, acc);
  } else {
    // the NaN a product or sum returns: A's before B's, the accumulator's before the product's
    // (quieted), as the dense mma does
    for (uint32_t m = 0; m < kM; ++m) {
      for (uint32_t n = 0; n < kN; ++n) {
        float sum = acc[m][n];
        for (uint32_t i = 0; i < A.count[m]; ++i) {
          const float a = A.value[m][i], b = B[A.col[m][i]][n];
          const float p = a != a ? quiet(a) : b != b ? quiet(b) : a * b;
          sum = sum != sum ? quiet(sum) : p != p ? quiet(p) : sum + p;
        }
        acc[m][n] = sum;
      }
    }
  }
  if (in.type == DType::F16) {
    const auto half = [&](uint32_t lane, uint32_t i) -> uint64_t {
      const uint32_t row = cd_row(lane, i);
      return A.undefined[row] ? kPoisonF16 : f32_to_f16_bits(acc[row][cd_col(lane, i)]);
    };
    for (uint32_t i = 0; i < 2; ++i) {
      uint64_t *d = w.regs + size_t{vector_reg(ctx, in.dst, i)} * 32;
      for (uint32_t lane = 0; lane < 32; ++lane)
        d[lane] = half(lane, 2 * i) | half(lane, 2 * i + 1) << 16;
    }
    return;
  }
  for (uint32_t i = 0; i < 4; ++i) {
    uint64_t *d = w.regs + size_t{vector_reg(ctx, in.dst, i)} * 32;
    for (uint32_t lane = 0; lane < 32; ++lane) {
      const uint32_t row = cd_row(lane, i);
      d[lane] = A.undefined[row] ? kPoisonF32 : std::bit_cast<uint32_t>(acc[row][cd_col(lane, i)]);
    }
  }
}

void mma_sparse_int(ExecContext &ctx, Warp &w, const Instr &in, const SparseA &A,
                    const float (*B)[kN]) {
  // the products summed in f32 are exact: every partial sum is an integer below 2^24 (at most 32
  // kept products of 255 * 255, or 64 of 15 * 15); C is added in 64 bits
  float sum[kM][kN] = {};
  multiply_rows(A, B, sum);
  int32_t C[4][32]; // read before any D register is written (D may name C's registers)
  for (uint32_t i = 0; i < 4; ++i) {
    const uint64_t *c = w.regs + size_t{vector_reg(ctx, in.src[2], i)} * 32;
    for (uint32_t lane = 0; lane < 32; ++lane)
      C[i][lane] = static_cast<int32_t>(c[lane]);
  }
  for (uint32_t i = 0; i < 4; ++i) {
    uint64_t *d = w.regs + size_t{vector_reg(ctx, in.dst, i)} * 32;
    for (uint32_t lane = 0; lane < 32; ++lane) {
      int64_t v = int64_t{C[i][lane]} + static_cast<int64_t>(sum[cd_row(lane, i)][cd_col(lane, i)]);
      if (in.satfinite)
        v = std::min<int64_t>(std::max<int64_t>(v, INT32_MIN), INT32_MAX);
      d[lane] = A.undefined[cd_row(lane, i)] ? kPoisonS32 : static_cast<uint32_t>(v);
    }
  }
}

} // namespace

void exec_mma_sparse(ExecContext &ctx, Warp &w, const Instr &in, uint32_t mask) {
  if (mask != 0xffffffffu)
    fault(ctx, w, in, -1,
          "mma.sp executed by lanes " + hex_address(mask) +
              ": all 32 lanes of the warp must execute it together (convergent, unpredicated)");
  const SparseShape s = sparse_shape(in.type2, in.sparse_k);
  SparseA A;
  if (in.sparsity_selector > s.max_selector) {
    // ptxas takes it, the ISA defines no metadata threads for it: the whole D is undefined
    for (bool &u : A.undefined)
      u = true;
  } else {
    expand_a(ctx, w, in, s, A);
  }
  for (bool u : A.undefined)
    ctx.counters.undefined_mma_sp_rows += u;
  float B[kMaxK][kN];
  gather_b(ctx, w, in, s, B);
  const bool integer = in.type == DType::S32;
  if (integer)
    mma_sparse_int(ctx, w, in, A, B);
  else
    mma_sparse_float(ctx, w, in, s, A, B);
  // one mma; its flops are those of the dense shape (the work it stands for, as the sparse peak
  // figures count it)
  ++ctx.counters.mma_instructions;
  ctx.counters.mma_flops += 2ull * kM * kN * s.k;
}

void decode_mma_sparse(DecodeState &s) {
  Instr &in = s.in;
  Modifiers &m = s.mods;
  const auto &ops = s.ai.operands;
  in.op = Op::Mma;
  in.cls = InstrClass::Mma;
  in.exec = exec_mma_sparse;
  in.ordered_metadata = m.take("sp::ordered_metadata");
  if (!in.ordered_metadata && !m.take("sp"))
    decode_fail(s, "internal error: not an mma.sp instruction");
  if (!m.take("sync") || !m.take("aligned"))
    decode_fail(s, "only mma.sp.sync.aligned is supported");
  // the layouts in their order: .alayout (.row) first, then .blayout (.col)
  std::vector<std::string_view> layouts;
  for (const std::string &mod : m.list) {
    if (mod == "row" || mod == "col")
      layouts.push_back(mod);
  }
  if (layouts.size() != 2 || layouts[0] != "row" || layouts[1] != "col")
    decode_fail(s, "mma.sp takes the .row.col layout only (A row-major, then B column-major)");
  m.take("row");
  m.take("col");
  in.satfinite = m.take("satfinite");
  uint32_t k = 0;
  for (const auto &[name, kk] : {std::pair<const char *, uint32_t>{"m16n8k8", 8},
                                 {"m16n8k16", 16},
                                 {"m16n8k32", 32},
                                 {"m16n8k64", 64},
                                 {"m16n8k128", 128}}) {
    if (m.take(name))
      k = kk;
  }
  auto ts = m.take_types();
  expect_no_modifiers_left(s);
  if (k == 0 || ts.size() != 4)
    decode_fail(s, "mma.sp needs a shape and four types (.dtype.atype.btype.ctype)");
  in.type = ts[0];
  in.type2 = ts[1];
  in.type4 = ts[2];
  in.type3 = ts[3];
  in.sparse_k = static_cast<uint8_t>(k);
  if (in.satfinite && in.type != DType::S32)
    decode_fail(s, ".satfinite applies to integer mma.sp only");
  expect_operands(s, 6, 6);
  for (int i = 0; i < 4; ++i) {
    if (ops[i].kind != AstOperand::Kind::Vector)
      decode_fail(s, "mma.sp's D, A, B and C operands are {..} register vectors");
  }
  in.dst = dest_operand(s, ops[0], in.type);
  in.src[0] = source_operand(s, 1, DType::B32);
  in.src[1] = source_operand(s, 2, DType::B32);
  in.src[2] = source_operand(s, 3, in.type3);
  in.src[3] = source_operand(s, 4, DType::B32);
  const bool meta_ok = in.src[3].kind == OperandKind::Reg || in.src[3].kind == OperandKind::Imm ||
                       (in.src[3].kind == OperandKind::Vector && in.src[3].count == 1);
  if (!meta_ok)
    decode_fail(s, "mma.sp's metadata operand (operand 5) must be one register or a 0f constant");
  if (ops[5].kind != AstOperand::Kind::Integer || ops[5].int_value > 3)
    decode_fail(s, "mma.sp's sparsity selector (operand 6) must be an integer constant 0..3");
  in.sparsity_selector = static_cast<uint8_t>(ops[5].int_value);
  const SparseShape sh = sparse_shape(in.type2, k);
  const uint32_t cd = in.type == DType::F16 ? 2 : 4, c = in.type3 == DType::F16 ? 2 : 4;
  if (in.src[0].count != sh.a_regs || in.src[1].count != sh.b_regs || in.dst.count != cd ||
      in.src[2].count != c)
    decode_fail(s, "mma.sp fragment sizes do not match the shape: expected A " +
                       std::to_string(sh.a_regs) + ", B " + std::to_string(sh.b_regs) + ", C " +
                       std::to_string(c) + ", D " + std::to_string(cd) + " registers");
}

} // namespace tcjit::emu
