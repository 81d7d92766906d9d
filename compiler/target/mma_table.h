// The one table of tensor-core mma forms: every form tcjit's specs can ask for, with the facts the
// spec's rules (choose_mma, explain), the code generator's plan and emitters, the tuner's search
// space and the cost model read.
//
// Source: PTX ISA, "Warp Level Matrix Multiply-Accumulate Instructions" -> "mma" (its "PTX ISA
// Notes" and "Target ISA Notes" give min_ptx and min_sm) and "Matrix fragments for mma.m16n8k*" /
// "mma.m8n8k4 (.f64)" (the fragment maps); ../shared/docs/ptx-fragments.md restates them,
// CUTLASS's mma_traits_sm80.hpp has the same maps. tests/codegen/mma_table_ptxas_test.cpp has
// ptxas confirm every form's mnemonic, operand counts, min_sm and min_ptx.
// Notation: lane = %laneid, g = lane >> 2, q = lane % 4.
//
// Every fragment element of every form has the coordinates
//   A (m, k):  m = g + a_row(i),         k = q * a_q + a_col(i)
//   B (k, n):  k = q * b_q + b_row(i),   n = g
//   C (m, n):  m = g + c_row(i),         n = 2q + c_col(i)
// where i counts elements (not registers) low to high: element i lives in register
// i / elements_per_reg(operand), in bits (i % elements_per_reg) * elem_bits upwards.
//
//   m16n8k64 s4/u4 (PTX ISA "Matrix fragments for mma.m16n8k64"): a_row(i) = 8 * ((i / 8) % 2),
//     a_col(i) = i % 8 + 32 * (i >= 16), a_q = 8; b_row(i) = i % 8 + 32 * (i >= 8).
//   m16n8k256 b1 ("Matrix fragments for mma.m16n8k256"): a_row(i) = 8 * ((i / 32) % 2),
//     a_col(i) = i % 32 + 128 * (i >= 64), a_q = 32; b_row(i) = i % 32 + 128 * (i >= 32).
//   Element i of a register sits in bits i * elem_bits upwards (lowest K lowest), so in bytes
//   along K both are the m16n8k32 s8 map: the kernels load them as bytes (kernel_plan.h k_pack).
//
//   m16n8k16 f16/bf16 A (4 x b32, a0..a7):      B (2 x b32, b0..b3):   C (4 x f32):
//        k: 0..7        8..15                     k = 2q+(i&1)+8(i>=2)   c0 c1 : row g
//   g    a0 a1 (q)      a4 a5                     n = g                  c2 c3 : row g+8
//   g+8  a2 a3          a6 a7                                            col 2q, 2q+1
#pragma once

#include "compiler/target/arch.h"
#include "tcjit/op_spec.h"

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tcjit::codegen {

// simt_f32 is not an mma: the SIMT FFMA path for math=f32 (exact fp32), described in the same
// terms so that the kernel builder treats it alike: a "tile" is one accumulator per thread, the
// warp's 32 lanes arranged 4 x 8 (lane / 8, lane % 8), k = 1 per step. It is not in mma_forms().
enum class MmaKind {
  f16_f32,
  bf16_f32,
  tf32_f32,
  s8_s32,
  u8_s32,
  f64_f64,
  f16_f16,
  s8u8_s32, // A s8, B u8
  u8s8_s32, // A u8, B s8
  simt_f32,
  // fp8 (sm_89+): A x B types e4m3/e5m2, f32 accumulators
  e4m3_e4m3_f32,
  e4m3_e5m2_f32,
  e5m2_e4m3_f32,
  e5m2_e5m2_f32,
  s4_s32,      // s4 x s4
  u4_s32,      // u4 x u4
  s4u4_s32,    // s4 x u4
  u4s4_s32,    // u4 x s4
  b1and_s32,   // b1 AND + popc
  b1xor_s32,   // b1 XOR + popc
  sp_f16_f32,  // mma.sp m16n8k32 f16 (2:4-sparse A)
  sp_bf16_f32, // mma.sp m16n8k32 bf16
  sp_s8_s32,   // mma.sp m16n8k64 s8
  sp_u8_s32,   // mma.sp m16n8k64 u8
  sp_tf32_f32, // mma.sp m16n8k16 tf32 (1:2 pairs)
  // mma.sp m16n8k128 s4/u4 (4:8 by pairs of values: in bytes, s8's 2:4)
  sp_s4_s32,   // s4 x s4
  sp_u4_s32,   // u4 x u4
  sp_s4u4_s32, // s4 x u4
  sp_u4s4_s32, // u4 x s4
};

// Which of the ISA's fragment maps a form's registers follow (a_offset, b_k_offset, c_offset).
enum class FragmentMap {
  m16n8k16_16bit, // f16, bf16: two elements per register
  m16n8k8_32bit,  // tf32: one per register
  m16n8k32_8bit,  // s8, u8, e4m3, e5m2: four per register
  m8n8k4_64bit,   // f64: one per 64-bit register
  m16n8k64_4bit,  // s4, u4: eight per register (in bytes the m16n8k32_8bit map)
  m16n8k256_1bit, // b1: thirty-two per register (in bytes the m16n8k32_8bit map)
  simt,           // FFMA: one accumulator, one element of A and of B
  // mma.sp m16n8k32 f16/bf16: A (4 x b32) is the compressed 16 x 16 tile (2 kept values of every
  // 4 along K) in the m16n8k16 map; B (4 x b32) k = 2q + (i & 1) + 8 * (i >> 1): two m16n8k16 B
  // fragments, k 0-15 and 16-31.
  sp_m16n8k32_16bit,
  // mma.sp m16n8k64 s8/u8: A (4 x b32) the compressed 16 x 32 tile in the m16n8k32 8-bit map; B
  // (4 x b32) k = 4q + (i & 3) + 16 (i >> 2): two m16n8k32 B fragments, k 0-31 and 32-63.
  sp_m16n8k64_8bit,
  // mma.sp m16n8k16 tf32: A (4 x b32) the compressed 16 x 8 tile (1 kept value of every pair
  // along K) in the m16n8k8 32-bit map; B (4 x b32) k = q + 4i: two m16n8k8 B fragments, k 0-7
  // and 8-15.
  sp_m16n8k16_32bit,
  // mma.sp m16n8k128 s4/u4: A (4 x b32) the compressed 16 x 64 tile (2 kept pairs of every 4
  // pairs of values along K) in the m16n8k64 4-bit map; B (4 x b32) k = 8q + (i & 7) + 32 (i >> 3):
  // two m16n8k64 B fragments. In bytes along K it is sp_m16n8k64_8bit (kernel_plan.h k_pack).
  sp_m16n8k128_4bit,
};

struct MmaForm {
  MmaKind kind;
  std::string_view ptx;       // the exact PTX mnemonic
  std::string_view intrinsic; // the LLVM 19 NVVM intrinsic ("" when not generated)
  int m, n, k;
  DType a;                         // the PTX type of A (.atype): tf32 for tf32 math
  DType b;                         // the PTX type of B (.btype): differs from A in mixed forms
  DType input;                     // A's type as stored in memory (f32 for tf32 math)
  DType acc;                       // C and D (.ctype = .dtype)
  MatrixLayout a_layout, b_layout; // .row.col: A row-major, B column-major fragments
  int min_sm;                      // first architecture with the instruction
  int min_ptx;                     // first PTX ISA version (x10): 70 = 7.0
  int a_regs, b_regs, c_regs;      // registers per thread (b32, or b64 for f64)
  int elem_bits;                   // bits of one A/B element in a register
  FragmentMap fragments;
  MathUnit unit; // whose peak applies (arch.h)
  // "" when tcjit's code generator emits the form; otherwise why it does not, for users.
  std::string_view not_generated;
  bool sparse = false;         // mma.sp: A 2:4-sparse along K (k is the dense K), with metadata
  BitOp bop = BitOp::and_popc; // b1 forms: .and.popc or .xor.popc
};

// B's type as stored in memory (f32 for tf32 math).
DType b_input(const MmaForm &);

// A sparse form's dense twin: the dense form of the same types whose fragment maps the sparse
// form's registers are made of (A: the compressed tile at the twin's k = k / 2; B: two of the
// twin's B fragments, at k and k + k / 2). The code generators load fragments with it.
const MmaForm &dense_twin(const MmaForm &sparse);
// The sparsity selector the generators pass to a sparse form (PTX ISA, mma.sp: which threads of
// each group of four supply the metadata): 0, threads q = 0 and 1.
inline constexpr int kSparsitySelector = 0;

// Every tensor-core form of the table, generated or not.
std::span<const MmaForm> mma_forms();
// The SIMT FFMA pseudo-form (f32 x f32 -> f32, fma.rn.f32).
const MmaForm &simt_f32_form();
std::string_view to_string(MmaKind);

// What a spec asks of the math: its multiplied inputs as stored (a: A of the GEMM view, b: B),
// the accumulator, the resolved math mode (f32 inputs use tf32 only when it is tf32), the
// sparsity of A and the b1 operation. compiler/spec/tensor_core_rules.h's math_request() makes
// one from a spec.
struct MathRequest {
  DType a = DType::f16, b = DType::f16;
  DType acc = DType::f32;
  MathMode resolved = MathMode::tf32;
  Sparsity sparsity = Sparsity::dense;
  BitOp bop = BitOp::and_popc;
};

// The form the code generator emits for the request. nullopt: no generated tensor-core form
// (SIMT, or not supported: math_problem says which).
std::optional<MmaForm> find_mma_form(const MathRequest &);
// Dense, a = b = input (the common case).
std::optional<MmaForm> find_mma_form(DType input, DType acc, MathMode resolved);

// True for f32 inputs with math=f32 and an f32 accumulator: SIMT FFMA (simt_f32_form()).
bool is_simt_math(const MathRequest &);
bool is_simt_math(DType input, DType acc, MathMode resolved);

// Why the code generator has no math instruction for the request on `arch`, stated for users
// (what, and what to use instead); "" when it has one (a generated form, or SIMT FFMA). `tcjit
// explain` and `tcjit compile` both report this text.
std::string math_problem(const MathRequest &, const ArchInfo &arch);
std::string math_problem(DType input, DType acc, MathMode resolved, const ArchInfo &arch);

// The PTX ISA version a kernel of `form` declares on `arch` (x10): the arch's
// (ArchInfo::ptx_version) or the form's min_ptx when that is newer (fp8 mma needs PTX 8.4, where
// sm_89/sm_90 kernels otherwise declare 7.8; mma.sp and .and.popc 7.1, where sm_80's declare 7.0).
int kernel_ptx_version(const MmaForm &form, const ArchInfo &arch);

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
