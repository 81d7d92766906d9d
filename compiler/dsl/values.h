// Parsers for the value half of `key=value` words: numbers, sizes, per-dimension lists, dtypes,
// operands and the enumerated words. They report errors with positions inside the value; the
// parser turns them into diagnostics. Range rules (sizes >= 1, ...) are left to validate_spec.
#pragma once

#include "compiler/dsl/suggest.h"
#include "tcjit/op_spec.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tcjit {

struct ValueError {
  size_t offset = 0; // first byte of the offending part, relative to the value
  size_t length = 1; // bytes to underline (at least 1)
  std::string message;
};

template <class T> struct ValueResult {
  T value{};
  std::vector<ValueError> errors;
  bool ok() const { return errors.empty(); }
};

// A whole number: an optional '-' and decimal digits, within int64. `lowest` only shapes the
// message for a number below int64 ("m is at least 1").
ValueResult<int64_t> parse_integer(std::string_view text, std::string_view key, int64_t lowest);

// A problem dimension: a whole number, `?`, or a range `lo..hi`.
ValueResult<Dim> parse_dim(std::string_view text, std::string_view key);

// pad/stride/dilation of a convolution: one number for every spatial dimension, or one per
// dimension (h,w for conv2d; d,h,w for conv3d). The result is [depth, height, width]; a conv2d's
// depth entry is `depth_value`.
ValueResult<std::array<int64_t, 3>> parse_per_dim(std::string_view text, std::string_view key,
                                                  OpKind kind, int64_t lowest, int64_t depth_value);

// A finite double (std::from_chars syntax: 1, 0.5, -2e-3). -0 reads as 0.
ValueResult<double> parse_real(std::string_view text, std::string_view key);

// A dtype; the reserved ones (s4 u4 e4m3 e5m2) are errors: "dtype 's4' is not supported yet".
ValueResult<DType> parse_dtype(std::string_view text);

// `dtype[:layout]` of a gemm operand; the layout defaults to row.
ValueResult<MatrixOperand> parse_matrix_operand(std::string_view text, std::string_view key);

// `dtype[:layout]` of a convolution tensor (`filter` selects the filter layouts); the layout
// defaults to nhwc/ndhwc, or krsc/ktrsc for the filter.
ValueResult<TensorOperand> parse_tensor_operand(std::string_view text, std::string_view key,
                                                OpKind kind, bool filter);

TensorLayout default_tensor_layout(OpKind kind, bool filter);

// One of a fixed set of words: "unknown <what> 'x' (did you mean 'y'?)" or "(use a, b or c)".
ValueResult<MathMode> parse_math_mode(std::string_view text);
ValueResult<BiasKind> parse_bias(std::string_view text);
ValueResult<Sparsity> parse_sparsity(std::string_view text); // dense | 2:4
ValueResult<BitOp> parse_bit_op(std::string_view text);      // and | xor
ValueResult<Activation> parse_activation(std::string_view text);
ValueResult<ConvPass> parse_conv_pass(std::string_view text);

// True for `custom` and `custom:...`: the value of a user-defined activation.
bool is_custom_activation(std::string_view text);
// `custom:FILE`: the path of the user's CUDA C++ activation (read later, not here: the DSL reads no
// files). The lexer has already kept the path to printable ASCII without spaces or '#' (the DSL's
// word and comment characters); errors name the fix.
ValueResult<CustomActivation> parse_custom_activation(std::string_view text);

// "unknown <what> 'word' (did you mean 'x'?)", or "... (use a, b or c)" when nothing is close.
std::string unknown_word_message(std::string_view what, std::string_view word,
                                 std::span<const std::string_view> candidates,
                                 std::span<const Alias> aliases);

} // namespace tcjit
