// What the tensor cores need, and where a spec falls short of it.
//
// The rules users of cuDNN/cuBLAS live by on Ampere/Hopper (see ../shared/seeds and docs/dsl.md):
// f16/bf16/tf32/s8/u8/f64 go to tensor cores; f32 with TF32 disabled does not; channel and K
// dimensions should be multiples of 8 (16-byte vectors) and >= 32; NHWC is the fast convolution
// layout; grouped convolutions are fastest with equal per-group in/out channels in
// {1,4,8,...,256}.
#pragma once

#include "compiler/target/arch.h"
#include "compiler/target/mma_table.h"
#include "tcjit/op_spec.h"

#include <optional>

#include <string>
#include <vector>

namespace tcjit {

// The tensor-core instruction a spec lowers to on an arch, or why it has none, from the mma table
// (compiler/target/mma_table.h).
struct MmaChoice {
  bool tensor_cores = false;
  // False when the code generator does not compile the spec's dtypes: `note` is then the reason
  // `tcjit compile` gives (codegen::math_problem), word for word.
  bool compiles = true;
  std::string instruction; // e.g. "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"; "" if none
  std::string shape;       // "m16n8k16", or "" if none
  std::string note;        // e.g. "SIMT FFMA: exact fp32, no tensor cores"
  std::optional<MathUnit> unit; // whose peak applies (arch.h); nullopt when it does not compile
  bool sparse = false;          // mma.sp (2:4-sparse A): the unit's peak x sparse_speedup
};
// What the spec asks of the math unit (compiler/target/mma_table.h): its multiplied inputs (a:
// gemm's A, or the convolution's input_dtype(); b: gemm's B, or the other multiplied tensor),
// accumulator, resolved math mode, sparsity and b1 operation.
codegen::MathRequest math_request(const OpSpec &, bool tf32_override_off);

// `arch` must be known (find_arch).
MmaChoice choose_mma(const OpSpec &, std::string_view arch, bool tf32_override_off);

// A performance rule the spec breaks: which rule, what is wrong, how to fix it.
struct RuleFinding {
  std::string rule;    // short id: "tf32-disabled", "vector-16B", "min-32", "layout-nhwc", ...
  std::string problem; // what is wrong, with the numbers
  std::string fix;     // what to change
};
std::vector<RuleFinding> check_tensor_core_rules(const OpSpec &, std::string_view arch,
                                                 bool tf32_override_off);

} // namespace tcjit
