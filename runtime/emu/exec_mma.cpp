// mma.sync.aligned.*.row.col: the warp's fragments are gathered into A (MxK), B (KxN) and C (MxN)
// with the PTX ISA's fragment layouts, multiplied, and scattered back to D.
// Numerics: inputs exactly as their dtype holds them (tf32: the upper 19 bits of the register),
// products exact, accumulation in f32 in k order starting from C (f64 mma: fma in f64; integer
// mma: exact in 64 bits, wrapping to s32 or clamped with .satfinite).
#include <cmath>
#include <limits>

#include "runtime/emu/exec_context.h"
#include "runtime/emu/exec_families.h"
#include "runtime/emu/float_format.h"

namespace tcjit::emu {

namespace {

struct Shape {
  uint32_t m, n, k;
};

Shape shape_of(MmaKind kind) {
  switch (kind) {
  case MmaKind::F16_M16N8K16:
  case MmaKind::BF16_M16N8K16: return {16, 8, 16};
  case MmaKind::F16_M16N8K8:
  case MmaKind::BF16_M16N8K8:
  case MmaKind::TF32_M16N8K8: return {16, 8, 8};
  case MmaKind::TF32_M16N8K4: return {16, 8, 4};
  case MmaKind::I8_M16N8K32: return {16, 8, 32};
  case MmaKind::I8_M16N8K16: return {16, 8, 16};
  case MmaKind::I4_M16N8K64: return {16, 8, 64};
  case MmaKind::I4_M16N8K32: return {16, 8, 32};
  case MmaKind::F64_M8N8K4: return {8, 8, 4};
  }
  return {16, 8, 16};
}

// Element (row, col) of A held by fragment element i of lane (g = lane/4, q = lane%4).
void a_coord(MmaKind kind, uint32_t g, uint32_t q, uint32_t i, uint32_t &row, uint32_t &col) {
  switch (kind) {
  case MmaKind::F16_M16N8K16:
  case MmaKind::BF16_M16N8K16: // 8 halves
    row = g + ((i >> 1) & 1) * 8;
    col = 2 * q + (i & 1) + (i >= 4 ? 8 : 0);
    return;
  case MmaKind::F16_M16N8K8:
  case MmaKind::BF16_M16N8K8: // 4 halves
    row = g + (i >> 1) * 8;
    col = 2 * q + (i & 1);
    return;
  case MmaKind::TF32_M16N8K8: // 4 words
    row = g + (i & 1) * 8;
    col = q + (i >> 1) * 4;
    return;
  case MmaKind::TF32_M16N8K4: // 2 words
    row = g + i * 8;
    col = q;
    return;
  case MmaKind::I8_M16N8K32: // 16 bytes
    row = g + ((i >> 2) & 1) * 8;
    col = 4 * q + (i & 3) + (i >= 8 ? 16 : 0);
    return;
  case MmaKind::I8_M16N8K16: // 8 bytes
    row = g + (i >> 2) * 8;
    col = 4 * q + (i & 3);
    return;
  case MmaKind::I4_M16N8K64: // 32 nibbles
    row = g + ((i >> 3) & 1) * 8;
    col = 8 * q + (i & 7) + (i >= 16 ? 32 : 0);
    return;
  case MmaKind::I4_M16N8K32: // 16 nibbles
    row = g + (i >> 3) * 8;
    col = 8 * q + (i & 7);
    return;
  case MmaKind::F64_M8N8K4:
    row = g;
    col = q;
    return;
  }
}

// Element (k, n) of B held by fragment element i.
void b_coord(MmaKind kind, uint32_t g, uint32_t q, uint32_t i, uint32_t &k, uint32_t &n) {
  n = g;
  switch (kind) {
  case MmaKind::F16_M16N8K16:
  case MmaKind::BF16_M16N8K16: k = 2 * q + (i & 1) + (i >= 2 ? 8 : 0); return;
  case MmaKind::F16_M16N8K8:
  case MmaKind::BF16_M16N8K8: k = 2 * q + i; return;
  case MmaKind::TF32_M16N8K8: k = q + i * 4; return;
  case MmaKind::TF32_M16N8K4: k = q; return;
  case MmaKind::I8_M16N8K32: k = 4 * q + (i & 3) + (i >= 4 ? 16 : 0); return;
  case MmaKind::I8_M16N8K16: k = 4 * q + i; return;
  case MmaKind::I4_M16N8K64: k = 8 * q + (i & 7) + (i >= 8 ? 32 : 0); return;
  case MmaKind::I4_M16N8K32: k = 8 * q + i; return;
  case MmaKind::F64_M8N8K4: k = q; return;
  }
}

// Element (row, col) of C/D held by accumulator element i.
void c_coord(MmaKind kind, uint32_t g, uint32_t q, uint32_t i, uint32_t &row, uint32_t &col) {
  if (kind == MmaKind::F64_M8N8K4) {
    row = g;
    col = 2 * q + i;
    return;
  }
  row = g + (i >= 2 ? 8 : 0);
  col = 2 * q + (i & 1);
}

uint32_t element_bits(DType t) {
  switch (t) {
  case DType::F16:
  case DType::BF16: return 16;
  case DType::TF32:
  case DType::F32:
  case DType::S32: return 32;
  case DType::S8:
  case DType::U8: return 8;
  case DType::S4:
  case DType::U4: return 4;
  case DType::F64: return 64;
  case DType::None:
  case DType::B8:
  case DType::B16:
  case DType::B32:
  case DType::B64:
  case DType::B128:
  case DType::U16:
  case DType::U32:
  case DType::U64:
  case DType::S16:
  case DType::S64:
  case DType::F16x2:
  case DType::BF16x2:
  case DType::Pred:
  case DType::E4M3:
  case DType::E5M2: break;
  }
  return 32;
}

// Value of an input element from its raw bits.
double input_value(DType t, uint64_t raw) {
  switch (t) {
  case DType::F16: return static_cast<double>(decode_small_float(raw & 0xffff, kF16));
  case DType::BF16: return static_cast<double>(decode_small_float(raw & 0xffff, kBF16));
  case DType::TF32: return f32_of(raw & 0xffffe000u);
  case DType::F64: return f64_of(raw);
  case DType::S8: return static_cast<int8_t>(raw & 0xff);
  case DType::U8: return static_cast<double>(raw & 0xff);
  case DType::S4: return static_cast<double>(static_cast<int32_t>((raw & 0xf) << 28) >> 28);
  case DType::U4: return static_cast<double>(raw & 0xf);
  case DType::None:
  case DType::B8:
  case DType::B16:
  case DType::B32:
  case DType::B64:
  case DType::B128:
  case DType::U16:
  case DType::U32:
  case DType::U64:
  case DType::S16:
  case DType::S32:
  case DType::S64:
  case DType::F16x2:
  case DType::BF16x2:
  case DType::F32:
  case DType::Pred:
  case DType::E4M3:
  case DType::E5M2: break;
  }
  return 0;
}

} // namespace

void exec_mma(ExecContext &ctx, Warp &w, const Instr &in, uint32_t mask) {
  if (mask != 0xffffffffu)
    fault(ctx, w, in, -1,
          "mma.sync.aligned executed by lanes " + hex_address(mask) +
              ": all 32 lanes of the warp must execute it together (convergent, unpredicated)");
  const MmaKind kind = in.mma;
  const Shape s = shape_of(kind);
  double A[16][64] = {}, B[64][8] = {};
  double Cf[16][8] = {};
  int64_t Ci[16][8] = {};
  const uint32_t abits = element_bits(in.type2), bbits = element_bits(in.type4);
  const uint32_t a_per_reg = 32 / std::min<uint32_t>(abits, 32);
  const uint32_t b_per_reg = 32 / std::min<uint32_t>(bbits, 32);
  const bool is_int = in.type == DType::S32;
  const bool is_f64 = kind == MmaKind::F64_M8N8K4;
  for (uint32_t lane = 0; lane < 32; ++lane) {
    const uint32_t g = lane >> 2, q = lane & 3;
    for (uint32_t r = 0; r < in.src[0].count; ++r) {
      uint64_t raw = w.regs[size_t{vector_reg(ctx, in.src[0], r)} * 32 + lane];
      for (uint32_t e = 0; e < a_per_reg; ++e) {
        uint32_t row = 0, col = 0;
        a_coord(kind, g, q, r * a_per_reg + e, row, col);
        A[row][col] = input_value(in.type2, abits >= 32 ? raw : raw >> (e * abits));
      }
    }
    for (uint32_t r = 0; r < in.src[1].count; ++r) {
      uint64_t raw = w.regs[size_t{vector_reg(ctx, in.src[1], r)} * 32 + lane];
      for (uint32_t e = 0; e < b_per_reg; ++e) {
        uint32_t k = 0, n = 0;
        b_coord(kind, g, q, r * b_per_reg + e, k, n);
        B[k][n] = input_value(in.type4, bbits >= 32 ? raw : raw >> (e * bbits));
      }
    }
    const uint32_t c_elems = is_f64 ? 2 : 4;
    for (uint32_t i = 0; i < c_elems; ++i) {
      uint32_t row = 0, col = 0;
      c_coord(kind, g, q, i, row, col);
      if (in.type3 == DType::F16) {
        uint64_t raw = w.regs[size_t{vector_reg(ctx, in.src[2], i / 2)} * 32 + lane];
        Cf[row][col] =
            static_cast<double>(decode_small_float((raw >> (16 * (i & 1))) & 0xffff, kF16));
      } else {
        uint64_t raw = w.regs[size_t{vector_reg(ctx, in.src[2], i)} * 32 + lane];
        if (is_int)
          Ci[row][col] = static_cast<int32_t>(raw);
        else if (is_f64)
          Cf[row][col] = f64_of(raw);
        else
          Cf[row][col] = f32_of(raw);
      }
    }
  }
  double Df[16][8];
  int64_t Di[16][8];
  for (uint32_t m = 0; m < s.m; ++m) {
    for (uint32_t n = 0; n < s.n; ++n) {
      if (is_int) {
        int64_t acc = Ci[m][n];
        for (uint32_t k = 0; k < s.k; ++k)
          acc += static_cast<int64_t>(A[m][k]) * static_cast<int64_t>(B[k][n]);
        if (in.satfinite)
          acc = std::min<int64_t>(std::max<int64_t>(acc, INT32_MIN), INT32_MAX);
        Di[m][n] = static_cast<int32_t>(static_cast<uint32_t>(acc));
      } else if (is_f64) {
        double acc = Cf[m][n];
        for (uint32_t k = 0; k < s.k; ++k)
          acc = std::fma(A[m][k], B[k][n], acc);
        Df[m][n] = acc;
      } else {
        float acc = static_cast<float>(Cf[m][n]);
        for (uint32_t k = 0; k < s.k; ++k)
          acc += static_cast<float>(A[m][k] * B[k][n]); // the product is exact in f32
        Df[m][n] = acc;
      }
    }
  }
  for (uint32_t lane = 0; lane < 32; ++lane) {
    const uint32_t g = lane >> 2, q = lane & 3;
    const uint32_t d_elems = is_f64 ? 2 : 4;
    uint64_t packed[2] = {0, 0};
    for (uint32_t i = 0; i < d_elems; ++i) {
      uint32_t row = 0, col = 0;
      c_coord(kind, g, q, i, row, col);
      if (in.type == DType::F16) {
        uint64_t h = f32_to_f16_bits(static_cast<float>(Df[row][col]));
        packed[i / 2] |= h << (16 * (i & 1));
        continue;
      }
      uint64_t v =
          is_int ? static_cast<uint32_t>(Di[row][col])
                 : (is_f64 ? bits_of(Df[row][col]) : bits_of(static_cast<float>(Df[row][col])));
      write_reg(w, vector_reg(ctx, in.dst, i), lane, v);
    }
    if (in.type == DType::F16) {
      write_reg(w, vector_reg(ctx, in.dst, 0), lane, packed[0]);
      write_reg(w, vector_reg(ctx, in.dst, 1), lane, packed[1]);
    }
  }
  ++ctx.counters.mma_instructions;
  ctx.counters.mma_flops += 2ull * s.m * s.n * s.k;
}

} // namespace tcjit::emu
