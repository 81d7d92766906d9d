// Semantic rules of an OpSpec: which dtype combinations, sizes and epilogues make sense.
//
// validate_spec() knows nothing about DSL text or positions: each error names the DSL key that is
// responsible ("groups", "bias", "a", ...; "" for the operation itself) and the DSL maps the key
// to a column. Messages state the rule and the fix. docs/dsl.md lists every rule.
#pragma once

#include "tcjit/op_spec.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tcjit {

struct SpecError {
  std::string key;     // DSL key responsible, or "" for the operation word
  std::string message; // e.g. "groups=3 does not divide c=64"
};

// Every rule violated by `spec`, in a fixed order; empty when the spec is valid. Checks that
// depend on values already reported (a size out of range, a mismatched input dtype) are skipped
// rather than reported a second time.
std::vector<SpecError> validate_spec(const OpSpec &spec);

// --- rules shared with the DSL (defaults, canonical printing) ----------------------------------

// Sizes are in [1, max_size] (pads in [0, max_size]).
inline constexpr int64_t max_size = 2147483647; // 2^31 - 1
// A concrete GEMM operand (batch x rows x ld elements) may take at most this many bytes: 1 TiB,
// more than any GPU's memory and the emulator's device-memory limit.
inline constexpr int64_t max_operand_bytes = int64_t{1} << 40;

// The dtype of the multiplied inputs: gemm a; conv x for fprop and wgrad, y for dgrad.
DType input_dtype(const OpSpec &spec);

// The accumulator an input dtype uses by default: f32 for f16 bf16 tf32 f32, f64 for f64, s32 for
// s8 u8 (f32 for the reserved float types, s32 for the reserved integer types).
DType default_acc_dtype(DType input);

// The output dtype an input dtype produces by default (gemm c): the input dtype itself for
// f16 bf16 f32 f64, f32 for tf32, s32 for s8 u8.
DType default_output_dtype(DType input);

// True when `output` may hold the result of multiplying `input` values:
// f16 -> f16|f32, bf16 -> bf16|f32, tf32|f32 -> f32, f64 -> f64, s8|u8 -> s32|s8.
bool is_allowed_output(DType input, DType output);

// True when `acc` may accumulate products of `input` values:
// f16 -> f32|f16, bf16 -> f32, tf32|f32 -> f32, f64 -> f64, s8|u8 -> s32.
bool is_allowed_acc(DType input, DType acc);

// True for the dtypes that may be multiplied: f16 bf16 tf32 f32 f64 s8 u8.
bool is_multiplicand_type(DType);

// The layouts a convolution tensor may have. `filter` selects the filter family (krsc kcrs /
// ktrsc kctrs), otherwise the activation family (nhwc nchw / ndhwc ncdhw).
bool is_allowed_tensor_layout(OpKind kind, bool filter, TensorLayout layout);

} // namespace tcjit
