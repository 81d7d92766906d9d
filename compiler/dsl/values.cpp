#include "compiler/dsl/values.h"

#include "compiler/dsl/diagnostic.h"
#include "compiler/dsl/vocabulary.h"
#include "compiler/spec/validate.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <system_error>

namespace tcjit {

namespace {

template <class T> ValueResult<T> failure(size_t offset, size_t length, std::string message) {
  ValueResult<T> result;
  result.errors.push_back(ValueError{offset, length > 0 ? length : 1, std::move(message)});
  return result;
}

template <class T> ValueResult<T> success(T value) {
  ValueResult<T> result;
  result.value = value;
  return result;
}

// Moves the errors of `part`, found at `offset` in the value, into `into`.
template <class T, class U>
void take_errors(ValueResult<T> &into, ValueResult<U> &&part, size_t offset) {
  for (ValueError &e : part.errors) {
    e.offset += offset;
    into.errors.push_back(std::move(e));
  }
}

// An optional '-' and one or more decimal digits.
bool is_integer_syntax(std::string_view text) {
  if (text.starts_with('-'))
    text.remove_prefix(1);
  return !text.empty() &&
         std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

template <class E, size_t N>
ValueResult<E> parse_word(std::string_view text, const std::array<E, N> &all, std::string_view what,
                          std::span<const Alias> aliases) {
  if (const std::optional<E> found = find_named(all, text))
    return success(*found);
  const std::vector<std::string_view> names = names_of<E>(all);
  return failure<E>(0, text.size(), unknown_word_message(what, text, names, aliases));
}

std::vector<std::string_view> allowed_tensor_layout_names(OpKind kind, bool filter) {
  std::vector<std::string_view> names;
  for (const TensorLayout layout : all_tensor_layouts)
    if (is_allowed_tensor_layout(kind, filter, layout))
      names.push_back(to_string(layout));
  return names;
}

// A layout word that exists but not for this operand: "layout 'nhwc' is not valid for a of gemm
// (use row or col)".
std::string wrong_layout_message(std::string_view layout, std::string_view key, OpKind kind,
                                 std::span<const std::string_view> allowed) {
  return "layout " + quoted_word(layout) + " is not valid for " + std::string(key) + " of " +
         std::string(to_string(kind)) + " (use " + one_of(allowed) + ")";
}

bool is_any_layout_name(std::string_view word) {
  return find_named(all_matrix_layouts, word) || find_named(all_tensor_layouts, word);
}

// Splits `dtype[:layout]`; reports a missing dtype or layout around the colon.
struct OperandParts {
  std::string_view dtype;
  std::optional<std::string_view> layout;
  size_t layout_offset = 0;
};

OperandParts split_operand(std::string_view text) {
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos)
    return OperandParts{text, std::nullopt, 0};
  return OperandParts{text.substr(0, colon), text.substr(colon + 1), colon + 1};
}

template <class T>
bool check_operand_parts(ValueResult<T> &result, const OperandParts &parts, std::string_view key,
                         std::span<const std::string_view> allowed_layouts) {
  bool ok = true;
  if (parts.dtype.empty()) {
    result.errors.push_back(ValueError{0, 1,
                                       "missing dtype before ':' in " + std::string(key) +
                                           " (like " + std::string(key) +
                                           "=f16:" + std::string(allowed_layouts.front()) + ")"});
    ok = false;
  } else {
    ValueResult<DType> dtype = parse_dtype(parts.dtype);
    ok = dtype.ok();
    take_errors(result, std::move(dtype), 0);
  }
  if (parts.layout && parts.layout->empty()) {
    result.errors.push_back(ValueError{parts.layout_offset - 1, 1,
                                       "missing layout after ':' (" + std::string(key) + " takes " +
                                           one_of(allowed_layouts) + ")"});
    ok = false;
  }
  return ok;
}

} // namespace

std::string unknown_word_message(std::string_view what, std::string_view word,
                                 std::span<const std::string_view> candidates,
                                 std::span<const Alias> aliases) {
  std::string message = "unknown " + std::string(what) + " " + quoted_word(word);
  const std::string suggestion = did_you_mean(word, candidates, aliases);
  if (!suggestion.empty())
    return message + suggestion;
  return message + " (use " + one_of(candidates) + ")";
}

ValueResult<int64_t> parse_integer(std::string_view text, std::string_view key, int64_t lowest) {
  int64_t value = 0;
  const char *end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec == std::errc::result_out_of_range && ptr == end) {
    if (text.starts_with('-'))
      return failure<int64_t>(0, text.size(),
                              quoted_word(text) + " is too small: " + std::string(key) +
                                  " is at least " + std::to_string(lowest));
    return failure<int64_t>(0, text.size(),
                            quoted_word(text) + " is too large: " + std::string(key) +
                                " is at most " + std::to_string(max_size));
  }
  if (ec != std::errc() || ptr != end || text.empty())
    return failure<int64_t>(0, text.size(),
                            "expected a whole number for " + std::string(key) + ", got " +
                                quoted_word(text));
  return success(value);
}

ValueResult<Dim> parse_dim(std::string_view text, std::string_view key) {
  if (text == "?")
    return success(Dim::any_size());
  const size_t dots = text.find("..");
  if (dots == std::string_view::npos) {
    if (!is_integer_syntax(text))
      return failure<Dim>(0, text.size(),
                          "expected a whole number, '?' or a range lo..hi for " + std::string(key) +
                              ", got " + quoted_word(text));
    ValueResult<int64_t> number = parse_integer(text, key, 1);
    ValueResult<Dim> result;
    result.value = Dim::fixed_size(number.value);
    take_errors(result, std::move(number), 0);
    return result;
  }
  const std::string_view lo_text = text.substr(0, dots);
  const std::string_view hi_text = text.substr(dots + 2);
  if (lo_text.empty() || hi_text.empty())
    return failure<Dim>(0, text.size(),
                        "expected a range lo..hi like 1..8192 for " + std::string(key) + ", got " +
                            quoted_word(text));
  ValueResult<int64_t> lo = parse_integer(lo_text, key, 1);
  ValueResult<int64_t> hi = parse_integer(hi_text, key, 1);
  ValueResult<Dim> result;
  result.value = Dim::range_of(lo.value, hi.value);
  take_errors(result, std::move(lo), 0);
  take_errors(result, std::move(hi), dots + 2);
  return result;
}

ValueResult<std::array<int64_t, 3>> parse_per_dim(std::string_view text, std::string_view key,
                                                  OpKind kind, int64_t lowest,
                                                  int64_t depth_value) {
  using Result = ValueResult<std::array<int64_t, 3>>;
  const bool is_3d = kind == OpKind::conv3d;
  const size_t per_dim_count = is_3d ? 3 : 2;
  const size_t count = static_cast<size_t>(std::count(text.begin(), text.end(), ',')) + 1;
  if (count != 1 && count != per_dim_count)
    return failure<std::array<int64_t, 3>>(
        0, text.size(),
        std::string(key) + " takes 1 or " + std::to_string(per_dim_count) + " numbers for " +
            std::string(to_string(kind)) + " (" + (is_3d ? "d,h,w" : "h,w") + "), got " +
            std::to_string(count));
  std::vector<std::string_view> items;
  std::vector<size_t> offsets;
  size_t start = 0;
  for (size_t i = 0; i < count; ++i) {
    const size_t comma = std::min(text.find(',', start), text.size());
    items.push_back(text.substr(start, comma - start));
    offsets.push_back(start);
    start = comma + 1;
  }
  Result result;
  std::array<int64_t, 3> numbers{depth_value, 0, 0};
  const size_t first = is_3d ? 0 : 1;
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].empty()) {
      result.errors.push_back(
          ValueError{offsets[i], 1, "missing number in the list for " + std::string(key)});
      continue;
    }
    ValueResult<int64_t> number = parse_integer(items[i], key, lowest);
    if (items.size() == 1) {
      for (size_t j = first; j < 3; ++j)
        numbers[j] = number.value;
    } else {
      numbers[first + i] = number.value;
    }
    take_errors(result, std::move(number), offsets[i]);
  }
  result.value = numbers;
  return result;
}

ValueResult<double> parse_real(std::string_view text, std::string_view key) {
  double value = 0;
  const char *end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value, std::chars_format::general);
  if (ec == std::errc::result_out_of_range && ptr == end)
    return failure<double>(0, text.size(),
                           std::string(key) + " value " + quoted_word(text) +
                               " is out of range for a double");
  if (ec != std::errc() || ptr != end || text.empty())
    return failure<double>(0, text.size(),
                           "expected a number for " + std::string(key) +
                               " (like 1, 0.5 or 2e-3), got " + quoted_word(text));
  if (!std::isfinite(value))
    return failure<double>(0, text.size(),
                           std::string(key) + " must be a finite number, got " + quoted_word(text));
  return success(value == 0.0 ? 0.0 : value);
}

ValueResult<DType> parse_dtype(std::string_view text) {
  const std::optional<DType> dtype = find_named(all_dtypes, text);
  if (dtype && is_reserved_type(*dtype))
    return failure<DType>(0, text.size(), "dtype " + quoted_word(text) + " is not supported yet");
  if (dtype)
    return success(*dtype);
  const std::vector<std::string_view> names = names_of<DType>(all_dtypes);
  std::string message = "unknown dtype " + quoted_word(text);
  const std::string suggestion = did_you_mean(text, names, dtype_aliases());
  if (!suggestion.empty())
    return failure<DType>(0, text.size(), message + suggestion);
  const std::array<std::string_view, 8> supported{"f16", "bf16", "tf32", "f32",
                                                  "f64", "s8",   "u8",   "s32"};
  return failure<DType>(0, text.size(), message + " (use " + one_of(supported) + ")");
}

ValueResult<MatrixOperand> parse_matrix_operand(std::string_view text, std::string_view key) {
  ValueResult<MatrixOperand> result;
  const OperandParts parts = split_operand(text);
  const std::vector<std::string_view> allowed = names_of<MatrixLayout>(all_matrix_layouts);
  if (!check_operand_parts(result, parts, key, allowed))
    return result;
  result.value.dtype = *find_named(all_dtypes, parts.dtype);
  if (!parts.layout)
    return result;
  const std::string_view layout = *parts.layout;
  if (const std::optional<MatrixLayout> found = find_named(all_matrix_layouts, layout)) {
    result.value.layout = *found;
    return result;
  }
  const std::string message =
      is_any_layout_name(layout)
          ? wrong_layout_message(layout, key, OpKind::gemm, allowed)
          : unknown_word_message("layout", layout, allowed, layout_aliases());
  result.errors.push_back(ValueError{parts.layout_offset, layout.size(), message});
  return result;
}

TensorLayout default_tensor_layout(OpKind kind, bool filter) {
  if (kind == OpKind::conv3d)
    return filter ? TensorLayout::ktrsc : TensorLayout::ndhwc;
  return filter ? TensorLayout::krsc : TensorLayout::nhwc;
}

ValueResult<TensorOperand> parse_tensor_operand(std::string_view text, std::string_view key,
                                                OpKind kind, bool filter) {
  ValueResult<TensorOperand> result;
  const OperandParts parts = split_operand(text);
  const std::vector<std::string_view> allowed = allowed_tensor_layout_names(kind, filter);
  if (!check_operand_parts(result, parts, key, allowed))
    return result;
  result.value.dtype = *find_named(all_dtypes, parts.dtype);
  result.value.layout = default_tensor_layout(kind, filter);
  if (!parts.layout)
    return result;
  const std::string_view layout = *parts.layout;
  const std::optional<TensorLayout> found = find_named(all_tensor_layouts, layout);
  if (found && is_allowed_tensor_layout(kind, filter, *found)) {
    result.value.layout = *found;
    return result;
  }
  const std::string message = is_any_layout_name(layout)
                                  ? wrong_layout_message(layout, key, kind, allowed)
                                  : unknown_word_message("layout", layout, allowed, {});
  result.errors.push_back(ValueError{parts.layout_offset, layout.size(), message});
  return result;
}

ValueResult<MathMode> parse_math_mode(std::string_view text) {
  return parse_word(text, all_math_modes, "math mode", {});
}

ValueResult<Sparsity> parse_sparsity(std::string_view text) {
  return parse_word(text, all_sparsities, "sparsity", {});
}

ValueResult<BitOp> parse_bit_op(std::string_view text) {
  return parse_word(text, all_bit_ops, "bit operation", {});
}

ValueResult<BiasKind> parse_bias(std::string_view text) {
  return parse_word(text, all_bias_kinds, "bias", {});
}

ValueResult<Activation> parse_activation(std::string_view text) {
  ValueResult<Activation> result =
      parse_word(text, all_activations, "activation", activation_aliases());
  if (result.ok())
    return result;
  // The built-in words, and the user's own function.
  std::string &message = result.errors.front().message;
  const std::string_view custom[] = {"custom"};
  if (!did_you_mean(text, custom, {}).empty())
    message = "unknown activation " + quoted_word(text) +
              " (did you mean 'custom:FILE', a CUDA C++ function of your own?)";
  else if (message.ends_with(")") && message.find(" (use ") != std::string::npos)
    message.insert(message.size() - 1, ", or custom:FILE for a CUDA C++ function of your own");
  return result;
}

bool is_custom_activation(std::string_view text) {
  return text == "custom" || text.starts_with("custom:");
}

ValueResult<CustomActivation> parse_custom_activation(std::string_view text) {
  ValueResult<CustomActivation> result;
  const std::string_view prefix = "custom:";
  if (!text.starts_with(prefix)) {
    result.errors.push_back(
        ValueError{0, text.size(),
                   "act=custom needs the file of its CUDA C++ function: act=custom:my_act.cu "
                   "(the file defines __device__ float act(float x))"});
    return result;
  }
  const std::string_view path = text.substr(prefix.size());
  if (path.empty()) {
    result.errors.push_back(
        ValueError{text.size() - 1, 1, "act=custom: names no file: write act=custom:my_act.cu"});
    return result;
  }
  result.value.path = std::string(path);
  return result;
}

ValueResult<ConvPass> parse_conv_pass(std::string_view text) {
  return parse_word(text, all_conv_passes, "pass", pass_aliases());
}

} // namespace tcjit
