// The words of the DSL: operation names, keys per operation, and the value words (dtypes,
// layouts, activations, ...) with the aliases that did-you-mean suggestions understand.
#pragma once

#include "compiler/dsl/suggest.h"
#include "tcjit/op_spec.h"

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tcjit {

// Every key of every operation. The same name means the same key everywhere (`n` is gemm's
// column count or a convolution's batch size, decided by the operation).
// clang-format off
enum class Key {
  // gemm (n, k and c are also convolution keys)
  m, n, k, batch, a, b, c, lda, ldb, ldc, sparse, bop,
  // convolutions
  d, h, w, t, r, s, pad, stride, dilation, groups, pass, x, filter, y,
  // every operation
  acc, math, alpha, beta, bias, act, weight,
};
// clang-format on
inline constexpr size_t key_count = static_cast<size_t>(Key::weight) + 1;

std::string_view key_name(Key);
std::optional<Key> key_from_name(std::string_view);
// The keys of an operation in canonical order (weight last), and the required ones.
std::span<const Key> keys_of(OpKind);
std::span<const Key> required_keys_of(OpKind);
bool has_key(OpKind, Key);

// Value words. Each table lists every enumerator; the aliases are spellings of other tools.
inline constexpr std::array<OpKind, 3> all_op_kinds{OpKind::gemm, OpKind::conv2d, OpKind::conv3d};
inline constexpr std::array<DType, 13> all_dtypes{
    DType::f16, DType::bf16, DType::tf32, DType::f32,  DType::f64,  DType::s8, DType::u8,
    DType::s32, DType::s4,   DType::u4,   DType::e4m3, DType::e5m2, DType::b1};
inline constexpr std::array<MatrixLayout, 2> all_matrix_layouts{MatrixLayout::row,
                                                                MatrixLayout::col};
inline constexpr std::array<TensorLayout, 8> all_tensor_layouts{
    TensorLayout::nhwc, TensorLayout::nchw, TensorLayout::ndhwc, TensorLayout::ncdhw,
    TensorLayout::krsc, TensorLayout::kcrs, TensorLayout::ktrsc, TensorLayout::kctrs};
inline constexpr std::array<MathMode, 3> all_math_modes{MathMode::tf32, MathMode::f32,
                                                        MathMode::automatic};
inline constexpr std::array<BiasKind, 3> all_bias_kinds{BiasKind::none, BiasKind::row,
                                                        BiasKind::col};
inline constexpr std::array<Activation, 9> all_activations{
    Activation::none,      Activation::relu,     Activation::tanh,
    Activation::sigmoid,   Activation::elu,      Activation::gelu,
    Activation::gelu_tanh, Activation::softplus, Activation::swish};
inline constexpr std::array<Sparsity, 2> all_sparsities{Sparsity::dense, Sparsity::two_four};
inline constexpr std::array<BitOp, 2> all_bit_ops{BitOp::and_popc, BitOp::xor_popc};
inline constexpr std::array<ConvPass, 3> all_conv_passes{ConvPass::fprop, ConvPass::dgrad,
                                                         ConvPass::wgrad};

std::span<const Alias> op_aliases();
std::span<const Alias> key_aliases();
std::span<const Alias> dtype_aliases();
std::span<const Alias> layout_aliases();
std::span<const Alias> activation_aliases();
std::span<const Alias> pass_aliases();

// The enumerator spelt `word` (exactly, as to_string() spells it).
template <class E, size_t N>
std::optional<E> find_named(const std::array<E, N> &all, std::string_view word) {
  for (const E value : all)
    if (to_string(value) == word)
      return value;
  return std::nullopt;
}

// The spellings of `values`, for suggestions and messages.
template <class E> std::vector<std::string_view> names_of(std::span<const E> values) {
  std::vector<std::string_view> names;
  for (const E value : values)
    names.push_back(to_string(value));
  return names;
}

// "a, b or c".
std::string one_of(std::span<const std::string_view> words);

} // namespace tcjit
