#include "compiler/dsl/vocabulary.h"

namespace tcjit {

namespace {

constexpr std::array<std::string_view, key_count> key_names{
    "m",    "n", "k",      "batch", "a",   "b",    "c",     "lda",  "ldb",    "ldc",      "sparse",
    "bop",  "d", "h",      "w",     "t",   "r",    "s",     "pad",  "stride", "dilation", "groups",
    "pass", "x", "filter", "y",     "acc", "math", "alpha", "beta", "bias",   "act",      "weight"};

constexpr std::array gemm_keys{Key::m,    Key::n,    Key::k,      Key::batch, Key::a,
                               Key::b,    Key::c,    Key::lda,    Key::ldb,   Key::ldc,
                               Key::acc,  Key::math, Key::sparse, Key::bop,   Key::alpha,
                               Key::beta, Key::bias, Key::act,    Key::weight};
constexpr std::array conv2d_keys{
    Key::n,      Key::h,        Key::w,      Key::c,    Key::k,   Key::r,      Key::s, Key::pad,
    Key::stride, Key::dilation, Key::groups, Key::pass, Key::x,   Key::filter, Key::y, Key::acc,
    Key::math,   Key::alpha,    Key::beta,   Key::bias, Key::act, Key::weight};
constexpr std::array conv3d_keys{
    Key::n, Key::d,   Key::h,      Key::w,        Key::c,      Key::k,    Key::t,   Key::r,
    Key::s, Key::pad, Key::stride, Key::dilation, Key::groups, Key::pass, Key::x,   Key::filter,
    Key::y, Key::acc, Key::math,   Key::alpha,    Key::beta,   Key::bias, Key::act, Key::weight};

constexpr std::array gemm_required{Key::m, Key::n, Key::k, Key::a, Key::b};
constexpr std::array conv2d_required{Key::n, Key::h, Key::w, Key::c,
                                     Key::k, Key::r, Key::s, Key::x};
constexpr std::array conv3d_required{Key::n, Key::d, Key::h, Key::w, Key::c,
                                     Key::k, Key::t, Key::r, Key::s, Key::x};

constexpr std::array<Alias, 8> op_alias_table{{
    {"matmul", "gemm"},
    {"mm", "gemm"},
    {"bmm", "gemm"},
    {"hgemm", "gemm"},
    {"sgemm", "gemm"},
    {"conv", "conv2d"},
    {"convolution", "conv2d"},
    {"conv3", "conv3d"},
}};

constexpr std::array<Alias, 12> key_alias_table{{
    {"activation", "act"},
    {"epilogue", "act"},
    {"accumulator", "acc"},
    {"accum", "acc"},
    {"padding", "pad"},
    {"dil", "dilation"},
    {"group", "groups"},
    {"batch_count", "batch"},
    {"weights", "filter"},
    {"wgt", "filter"},
    {"input", "x"},
    {"output", "y"},
}};

constexpr std::array<Alias, 23> dtype_alias_table{{
    {"fp16", "f16"},         {"half", "f16"},      {"float16", "f16"},
    {"bfloat16", "bf16"},    {"fp32", "f32"},      {"float", "f32"},
    {"float32", "f32"},      {"fp64", "f64"},      {"double", "f64"},
    {"float64", "f64"},      {"int8", "s8"},       {"i8", "s8"},
    {"uint8", "u8"},         {"int32", "s32"},     {"i32", "s32"},
    {"int", "s32"},          {"int4", "s4"},       {"uint4", "u4"},
    {"fp8", "e4m3"},         {"tfloat32", "tf32"}, {"float8_e4m3fn", "e4m3"},
    {"float8_e5m2", "e5m2"}, {"binary", "b1"},
}};

constexpr std::array<Alias, 7> layout_alias_table{{
    {"column", "col"},
    {"colmajor", "col"},
    {"col_major", "col"},
    {"column_major", "col"},
    {"rowmajor", "row"},
    {"row_major", "row"},
    {"rows", "row"},
}};

constexpr std::array<Alias, 5> activation_alias_table{{
    {"identity", "none"},
    {"linear", "none"},
    {"silu", "swish"},
    {"logistic", "sigmoid"},
    {"gelu_erf", "gelu"},
}};

constexpr std::array<Alias, 6> pass_alias_table{{
    {"forward", "fprop"},
    {"fwd", "fprop"},
    {"backward_data", "dgrad"},
    {"bwd_data", "dgrad"},
    {"backward_filter", "wgrad"},
    {"bwd_filter", "wgrad"},
}};

} // namespace

std::string_view key_name(Key key) {
  return key_names[static_cast<size_t>(key)];
}

std::optional<Key> key_from_name(std::string_view name) {
  for (size_t i = 0; i < key_count; ++i)
    if (key_names[i] == name)
      return static_cast<Key>(i);
  return std::nullopt;
}

std::span<const Key> keys_of(OpKind kind) {
  switch (kind) {
  case OpKind::gemm: return gemm_keys;
  case OpKind::conv2d: return conv2d_keys;
  case OpKind::conv3d: return conv3d_keys;
  }
  return gemm_keys;
}

std::span<const Key> required_keys_of(OpKind kind) {
  switch (kind) {
  case OpKind::gemm: return gemm_required;
  case OpKind::conv2d: return conv2d_required;
  case OpKind::conv3d: return conv3d_required;
  }
  return gemm_required;
}

bool has_key(OpKind kind, Key key) {
  for (const Key k : keys_of(kind))
    if (k == key)
      return true;
  return false;
}

std::span<const Alias> op_aliases() {
  return op_alias_table;
}
std::span<const Alias> key_aliases() {
  return key_alias_table;
}
std::span<const Alias> dtype_aliases() {
  return dtype_alias_table;
}
std::span<const Alias> layout_aliases() {
  return layout_alias_table;
}
std::span<const Alias> activation_aliases() {
  return activation_alias_table;
}
std::span<const Alias> pass_aliases() {
  return pass_alias_table;
}

std::string one_of(std::span<const std::string_view> words) {
  std::string text;
  for (size_t i = 0; i < words.size(); ++i) {
    if (i > 0)
      text += i + 1 == words.size() ? " or " : ", ";
    text += words[i];
  }
  return text;
}

} // namespace tcjit
