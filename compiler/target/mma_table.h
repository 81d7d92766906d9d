// The one table of legal tensor-core mma forms tcjit emits, and their fragment layouts.
//
// Source: PTX ISA, "Warp-level matrix instructions" -> "Matrix fragments for mma.m16n8k*" and
// "mma.m8n8k4 (.f64)"; ../shared/docs/ptx-fragments.md restates them; CUTLASS's
// mma_traits_sm80.hpp has the same maps. Notation: lane = %laneid, g = lane >> 2, q = lane % 4.
//
// Every fragment element of every form has the coordinates
//   A (m, k):  m = g + a_row(i),         k = q * a_q + a_col(i)
//   B (k, n):  k = q * b_q + b_row(i),   n = g
//   C (m, n):  m = g + c_row(i),         n = 2q + c_col(i)
// where i counts elements (not registers) low to high: element i lives in register
// i / elements_per_reg(operand), in bits (i % elements_per_reg) * elem_bits upwards.
//
//   m16n8k16 f16/bf16 A (4 x b32, a0..a7):      B (2 x b32, b0..b3):   C (4 x f32):
//        k: 0..7        8..15                     k = 2q+(i&1)+8(i>=2)   c0 c1 : row g
//   g    a0 a1 (q)      a4 a5                     n = g                  c2 c3 : row g+8
//   g+8  a2 a3          a6 a7                                            col 2q, 2q+1
#pragma once

#include "tcjit/op_spec.h"

#include <optional>
#include <span>
#include <string_view>

namespace tcjit::codegen {

// simt_f32 is not an mma: the SIMT FFMA path for math=f32 (exact fp32), described in the same
// terms so that the kernel builder treats it alike: a "tile" is one accumulator per thread, the
// warp's 32 lanes arranged 4 x 8 (lane / 8, lane % 8), k = 1 per step. It is not in mma_forms().
enum class MmaKind { f16_f32, bf16_f32, tf32_f32, s8_s32, f64_f64, simt_f32 };

struct MmaForm {
  MmaKind kind;
  std::string_view ptx;       // the exact PTX mnemonic
  std::string_view intrinsic; // the LLVM 19 NVVM intrinsic
  int m, n, k;
  DType input; // the multiplied type as stored in memory (f32 for tf32 math)
  DType acc;
  int min_sm;                 // first architecture with the instruction
  int min_ptx;                // first PTX ISA version (x10): 70 = 7.0
  int a_regs, b_regs, c_regs; // registers per thread (b32, or b64 for f64)
  int elem_bits;              // bits of one A/B element in a register
};

std::span<const MmaForm> mma_forms();
// The SIMT FFMA pseudo-form (f32 x f32 -> f32, fma.rn.f32).
const MmaForm &simt_f32_form();
std::string_view to_string(MmaKind);

// The form for `input` (the spec's A/B dtype) with `acc`, under the resolved math mode (f32 inputs
// use tf32 only when math is tf32). nullopt: no tensor-core form (SIMT or unsupported).
std::optional<MmaForm> find_mma_form(DType input, DType acc, MathMode resolved);

// Elements per register of A/B (registers are 32-bit except f64's 64-bit ones).
int elements_per_reg(const MmaForm &);
// Fragment coordinate offsets (see the header comment); i in [0, a_regs * elements_per_reg).
struct FragOffset {
  int row = 0, col = 0;
};
int a_q_multiplier(const MmaForm &); // a_q above (equal to b_q)
FragOffset a_offset(const MmaForm &, int i);
int b_k_offset(const MmaForm &, int i); // b_row(i)
FragOffset c_offset(const MmaForm &, int i);

} // namespace tcjit::codegen
