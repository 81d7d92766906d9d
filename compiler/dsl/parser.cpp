#include "compiler/dsl/parser.h"

#include "compiler/dsl/lexer.h"
#include "compiler/dsl/suggest.h"
#include "compiler/dsl/values.h"
#include "compiler/dsl/vocabulary.h"
#include "compiler/spec/validate.h"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <string>

namespace tcjit {

namespace {

// Where a word (or part of one) sits in its line.
struct Span {
  int col = 1; // 1-based
  int length = 1;
};

Span span_of(const Word &word) {
  return Span{word.col, std::max(1, static_cast<int>(word.text.size()))};
}

// The diagnostics of one line, before they are sorted and added to the result.
struct LineErrors {
  std::string_view file;
  SourceLine line;
  std::vector<Diagnostic> list;

  void add(Span at, std::string message) {
    list.push_back(Diagnostic{std::string(file), line.number, at.col, at.length, std::move(message),
                              std::string(line.text)});
  }
};

// The state of the line being parsed, once its operation is known.
struct LineState {
  OpKind kind = OpKind::gemm;
  Span op_word;
  OpSpec spec;
  int64_t weight = 1;
  std::optional<int64_t> lda, ldb, ldc;
  std::array<std::optional<Span>, key_count> given; // the word of each key on the line
  std::array<bool, key_count> suggested{};          // offered for a misspelt key
};

bool is_name_start(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_';
}

bool is_name_char(char c) {
  return is_name_start(c) || (c >= '0' && c <= '9') || c == '.' || c == '-';
}

bool is_valid_name(std::string_view name) {
  return !name.empty() && is_name_start(name.front()) &&
         std::all_of(name.begin(), name.end(), is_name_char);
}

bool is_symbolic(std::string_view value) {
  return value == "?" || value.find("..") != std::string_view::npos;
}

std::string key_list(OpKind kind) {
  std::string text;
  for (const Key key : keys_of(kind))
    text += (text.empty() ? "" : " ") + std::string(key_name(key));
  return text;
}

std::vector<std::string_view> key_names_of(OpKind kind) {
  std::vector<std::string_view> names;
  for (const Key key : keys_of(kind))
    names.push_back(key_name(key));
  return names;
}

// Reports the errors of a value parsed from the part of a word starting at `value_col`, and
// returns the value.
template <class T> T take(ValueResult<T> &&result, int value_col, LineErrors &errors) {
  for (ValueError &e : result.errors)
    errors.add(Span{value_col + static_cast<int>(e.offset), static_cast<int>(e.length)},
               std::move(e.message));
  return result.value;
}

// A size that cannot be symbolic: conv geometry, groups, leading dimensions, weight.
int64_t take_fixed(std::string_view value, Key key, int value_col, OpKind kind,
                   LineErrors &errors) {
  const std::string name(key_name(key));
  if (is_symbolic(value)) {
    const bool conv_geometry = kind != OpKind::gemm && key != Key::groups && key != Key::weight;
    errors.add(Span{value_col, static_cast<int>(value.size())},
               conv_geometry ? name + " must be a fixed size: only n (the batch) may be symbolic "
                                      "in a convolution"
                             : name + " must be a fixed number, got " + quoted_word(value));
    return 0;
  }
  return take(parse_integer(value, name, 1), value_col, errors);
}

std::array<int64_t, 3> take_per_dim(std::string_view value, Key key, int value_col, OpKind kind,
                                    LineErrors &errors) {
  const int64_t lowest = key == Key::pad ? 0 : 1;
  return take(parse_per_dim(value, key_name(key), kind, lowest, lowest), value_col, errors);
}

// Parses the value of `key` into the line's state.
void parse_value(LineState &st, Key key, std::string_view value, int value_col,
                 LineErrors &errors) {
  const std::string name(key_name(key));
  GemmSpec &gemm = st.spec.gemm;
  ConvSpec &conv = st.spec.conv;
  const bool is_gemm = st.kind == OpKind::gemm;
  switch (key) {
  case Key::m: gemm.m = take(parse_dim(value, name), value_col, errors); return;
  case Key::n:
    (is_gemm ? gemm.n : conv.n) = take(parse_dim(value, name), value_col, errors);
    return;
  case Key::k:
    if (is_gemm)
      gemm.k = take(parse_dim(value, name), value_col, errors);
    else
      conv.k = take_fixed(value, key, value_col, st.kind, errors);
    return;
  case Key::batch: gemm.batch = take(parse_dim(value, name), value_col, errors); return;
  case Key::a: gemm.a = take(parse_matrix_operand(value, name), value_col, errors); return;
  case Key::b: gemm.b = take(parse_matrix_operand(value, name), value_col, errors); return;
  case Key::c:
    if (is_gemm)
      gemm.c = take(parse_matrix_operand(value, name), value_col, errors);
    else
      conv.c = take_fixed(value, key, value_col, st.kind, errors);
    return;
  case Key::lda: st.lda = take_fixed(value, key, value_col, st.kind, errors); return;
  case Key::ldb: st.ldb = take_fixed(value, key, value_col, st.kind, errors); return;
  case Key::ldc: st.ldc = take_fixed(value, key, value_col, st.kind, errors); return;
  case Key::d: conv.d = take_fixed(value, key, value_col, st.kind, errors); return;
  case Key::h: conv.h = take_fixed(value, key, value_col, st.kind, errors); return;
  case Key::w: conv.w = take_fixed(value, key, value_col, st.kind, errors); return;
  case Key::t: conv.t = take_fixed(value, key, value_col, st.kind, errors); return;
  case Key::r: conv.r = take_fixed(value, key, value_col, st.kind, errors); return;
  case Key::s: conv.s = take_fixed(value, key, value_col, st.kind, errors); return;
  case Key::pad: conv.pad = take_per_dim(value, key, value_col, st.kind, errors); return;
  case Key::stride: conv.stride = take_per_dim(value, key, value_col, st.kind, errors); return;
  case Key::dilation: conv.dilation = take_per_dim(value, key, value_col, st.kind, errors); return;
  case Key::groups: conv.groups = take_fixed(value, key, value_col, st.kind, errors); return;
  case Key::pass: conv.pass = take(parse_conv_pass(value), value_col, errors); return;
  case Key::x:
    conv.x = take(parse_tensor_operand(value, name, st.kind, false), value_col, errors);
    return;
  case Key::filter:
    conv.filter = take(parse_tensor_operand(value, name, st.kind, true), value_col, errors);
    return;
  case Key::y:
    conv.y = take(parse_tensor_operand(value, name, st.kind, false), value_col, errors);
    return;
  case Key::acc: st.spec.acc = take(parse_dtype(value), value_col, errors); return;
  case Key::math: st.spec.math = take(parse_math_mode(value), value_col, errors); return;
  case Key::sparse: st.spec.sparsity = take(parse_sparsity(value), value_col, errors); return;
  case Key::bop: st.spec.bop = take(parse_bit_op(value), value_col, errors); return;
  case Key::alpha:
    st.spec.epilogue.alpha = take(parse_real(value, name), value_col, errors);
    return;
  case Key::beta: st.spec.epilogue.beta = take(parse_real(value, name), value_col, errors); return;
  case Key::bias: st.spec.epilogue.bias = take(parse_bias(value), value_col, errors); return;
  case Key::act:
    if (is_custom_activation(value)) {
      st.spec.epilogue.custom = take(parse_custom_activation(value), value_col, errors);
      st.spec.epilogue.act = Activation::custom;
    } else {
      st.spec.epilogue.act = take(parse_activation(value), value_col, errors);
    }
    return;
  case Key::weight: {
    const size_t before = errors.list.size();
    st.weight = take_fixed(value, key, value_col, st.kind, errors);
    if (errors.list.size() == before && (st.weight < 1 || st.weight > max_size))
      errors.add(Span{value_col, static_cast<int>(value.size())},
                 "weight=" + std::to_string(st.weight) + " is out of range: weights are 1.." +
                     std::to_string(max_size));
    return;
  }
  }
}

std::string unknown_key_message(LineState &st, std::string_view key) {
  const OpKind kind = st.kind;
  const std::string op(to_string(kind));
  if (const std::optional<Key> known = key_from_name(key)) {
    if (kind == OpKind::conv2d && (*known == Key::d || *known == Key::t))
      return "key " + quoted_word(key) +
             " does not apply to conv2d (d and t are conv3d keys; use conv3d for a 3-D "
             "convolution)";
    return "key " + quoted_word(key) + " does not apply to " + op + " (" + op +
           " keys: " + key_list(kind) + ")";
  }
  const std::vector<std::string_view> names = key_names_of(kind);
  if (const std::optional<std::string_view> close = closest_word(key, names, key_aliases())) {
    // A misspelt required key is not reported as missing as well.
    if (const std::optional<Key> meant = key_from_name(*close))
      st.suggested[static_cast<size_t>(*meant)] = true;
    return "unknown key " + quoted_word(key) + " for " + op + " (did you mean '" +
           std::string(*close) + "'?)";
  }
  return "unknown key " + quoted_word(key) + " for " + op + " (" + op + " keys: " + key_list(kind) +
         ")";
}

// Parses the `key=value` words after the operation word.
void parse_key_values(LineState &st, std::span<const Word> words, LineErrors &errors) {
  for (size_t i = 0; i < words.size(); ++i) {
    const Word &word = words[i];
    const size_t equals = word.text.find('=');
    // "m = 4096", "m =4096", "m= 4096": one error for the words that belong together.
    const bool next_starts_with_equals = i + 1 < words.size() && words[i + 1].text.starts_with('=');
    const bool ends_with_equals = equals == word.text.size() - 1 && i + 1 < words.size() &&
                                  words[i + 1].text.find('=') == std::string_view::npos;
    if ((equals == std::string_view::npos && next_starts_with_equals) ||
        (equals != std::string_view::npos && equals > 0 && ends_with_equals)) {
      size_t last = i + 1;
      if (words[last].text == "=" && last + 1 < words.size() &&
          words[last + 1].text.find('=') == std::string_view::npos)
        ++last;
      std::string joined;
      for (size_t j = i; j <= last; ++j)
        joined += words[j].text;
      const int end_col = words[last].col + static_cast<int>(words[last].text.size());
      errors.add(Span{word.col, end_col - word.col},
                 "spaces around '=' are not allowed: write " + quoted_word(joined));
      if (const std::optional<Key> key = key_from_name(word.text.substr(0, equals)))
        st.given[static_cast<size_t>(*key)] = span_of(word);
      i = last;
      continue;
    }
    if (equals == std::string_view::npos) {
      errors.add(span_of(word), "expected key=value, got " + quoted_word(word.text));
      continue;
    }
    const std::string_view key_text = word.text.substr(0, equals);
    const std::string_view value = word.text.substr(equals + 1);
    if (key_text.empty()) {
      errors.add(span_of(word), "missing key before '=' in " + quoted_word(word.text));
      continue;
    }
    const std::optional<Key> key = key_from_name(key_text);
    if (!key || !has_key(st.kind, *key)) {
      errors.add(Span{word.col, static_cast<int>(key_text.size())},
                 unknown_key_message(st, key_text));
      continue;
    }
    std::optional<Span> &given = st.given[static_cast<size_t>(*key)];
    if (given) {
      errors.add(span_of(word), "duplicate key " + quoted_word(key_text) +
                                    " (already given at column " + std::to_string(given->col) +
                                    ")");
      continue;
    }
    given = span_of(word);
    if (value.empty()) {
      errors.add(span_of(word), "missing value after " + quoted_word(word.text));
      continue;
    }
    parse_value(st, *key, value, word.col + static_cast<int>(equals) + 1, errors);
  }
}

bool was_given(const LineState &st, Key key) {
  return st.given[static_cast<size_t>(key)].has_value();
}

// Fills in what the line did not say (see docs/dsl.md, "Defaults").
void apply_defaults(LineState &st) {
  OpSpec &spec = st.spec;
  switch (st.kind) {
  case OpKind::gemm:
    if (!was_given(st, Key::c))
      spec.gemm.c = MatrixOperand{default_output_dtype(spec.gemm.a.dtype), MatrixLayout::row, {}};
    spec.gemm.a.ld = st.lda;
    spec.gemm.b.ld = st.ldb;
    spec.gemm.c.ld = st.ldc;
    break;
  case OpKind::conv2d:
  case OpKind::conv3d: {
    ConvSpec &conv = spec.conv;
    const DType x = conv.x.dtype;
    // An output tensor takes x's dtype when that is a valid output of x-typed inputs.
    const DType as_output = is_allowed_output(x, x) ? x : default_output_dtype(x);
    if (!was_given(st, Key::filter))
      conv.filter = TensorOperand{conv.pass == ConvPass::wgrad ? as_output : x,
                                  default_tensor_layout(st.kind, true)};
    if (!was_given(st, Key::y))
      conv.y = TensorOperand{conv.pass == ConvPass::fprop ? as_output : x, conv.x.layout};
    break;
  }
  }
  if (!was_given(st, Key::acc))
    spec.acc = default_acc_dtype(input_dtype(spec));
}

// The semantic checks: validate_spec, plus `math=auto` written for inputs that are not f32.
void check_semantics(const LineState &st, LineErrors &errors) {
  const DType input = input_dtype(st.spec);
  const std::optional<Span> &math = st.given[static_cast<size_t>(Key::math)];
  if (math && st.spec.math == MathMode::automatic && is_multiplicand_type(input) &&
      input != DType::f32 && input != DType::tf32)
    errors.add(*math, "math=auto does not apply to " + std::string(to_string(input)) +
                          " inputs: math= selects how f32 inputs are multiplied (tf32 or full "
                          "f32); remove it");
  for (const SpecError &e : validate_spec(st.spec)) {
    Span at = st.op_word;
    if (const std::optional<Key> key = key_from_name(e.key))
      if (const std::optional<Span> &given = st.given[static_cast<size_t>(*key)])
        at = *given;
    errors.add(at, e.message);
  }
}

struct LineOutcome {
  std::optional<WorkloadEntry> entry;
  std::optional<Span> op_word; // set when the line names an operation
};

struct WorkloadState {
  std::map<std::string, int, std::less<>> name_lines; // name -> line of its first use
};

LineOutcome parse_line(const SourceLine &line, WorkloadState &workload, LineErrors &errors) {
  LineOutcome outcome;
  if (line.text.size() > max_line_length) {
    errors.add(Span{1, 1}, "line is too long: " + std::to_string(line.text.size()) +
                               " bytes (the limit is " + std::to_string(max_line_length) + ")");
    errors.list.back().source_line.resize(max_line_length);
    return outcome;
  }
  const LexedLine lexed = lex_line(line.text);
  if (lexed.bad_byte_col) {
    const unsigned char byte =
        static_cast<unsigned char>(line.text[static_cast<size_t>(*lexed.bad_byte_col) - 1]);
    static constexpr char hex[] = "0123456789abcdef";
    errors.add(Span{*lexed.bad_byte_col, 1},
               std::string("unexpected byte 0x") + hex[byte >> 4] + hex[byte & 0xFu] +
                   ": outside comments a line holds printable ASCII, spaces and tabs");
    return outcome;
  }
  std::span<const Word> words = lexed.words;
  if (words.empty())
    return outcome;

  // An optional `name:` (or `name:op`) before the operation word.
  std::string name;
  Word op_word = words.front();
  const Word &first = words.front();
  const size_t colon = first.text.find(':');
  if (colon != std::string_view::npos && first.text.find('=') == std::string_view::npos) {
    const std::string_view label = first.text.substr(0, colon);
    const Span label_span{first.col, std::max(1, static_cast<int>(colon))};
    if (label.empty()) {
      errors.add(Span{first.col, 1}, "missing name before ':'");
    } else if (!is_valid_name(label)) {
      errors.add(label_span, "invalid name " + quoted_word(label) +
                                 ": a name starts with a letter or '_' and continues with "
                                 "letters, digits, '_', '.' or '-'");
    } else {
      name = std::string(label);
      const auto [it, inserted] = workload.name_lines.emplace(name, line.number);
      if (!inserted)
        errors.add(label_span, "duplicate name " + quoted_word(label) + " (first used on line " +
                                   std::to_string(it->second) + ")");
    }
    const std::string_view rest = first.text.substr(colon + 1);
    if (!rest.empty()) {
      op_word = Word{rest, first.col + static_cast<int>(colon) + 1};
      words = words.subspan(1);
    } else if (words.size() > 1) {
      op_word = words[1];
      words = words.subspan(2);
    } else {
      errors.add(span_of(first), "missing operation after " + quoted_word(first.text));
      return outcome;
    }
  } else {
    words = words.subspan(1);
  }

  if (op_word.text.find('=') != std::string_view::npos) {
    errors.add(span_of(op_word), "missing operation: a line starts with gemm, conv2d or conv3d "
                                 "(after an optional 'name:')");
    return outcome;
  }
  const std::optional<OpKind> kind = find_named(all_op_kinds, op_word.text);
  if (!kind) {
    const std::vector<std::string_view> ops = names_of<OpKind>(all_op_kinds);
    const bool name_without_colon = name.empty() && !words.empty() && is_valid_name(op_word.text) &&
                                    find_named(all_op_kinds, words.front().text);
    errors.add(span_of(op_word),
               name_without_colon
                   ? "unknown operation " + quoted_word(op_word.text) +
                         " (to name a line, write '" + std::string(op_word.text) + ": " +
                         std::string(words.front().text) + "')"
                   : unknown_word_message("operation", op_word.text, ops, op_aliases()));
    return outcome;
  }

  LineState st;
  st.kind = *kind;
  st.op_word = span_of(op_word);
  st.spec.kind = *kind;
  if (st.kind != OpKind::gemm) {
    st.spec.conv.x.layout = default_tensor_layout(st.kind, false);
    st.spec.conv.y.layout = default_tensor_layout(st.kind, false);
    st.spec.conv.filter.layout = default_tensor_layout(st.kind, true);
  }
  outcome.op_word = st.op_word;
  parse_key_values(st, words, errors);
  for (const Key key : required_keys_of(st.kind))
    if (!was_given(st, key) && !st.suggested[static_cast<size_t>(key)])
      errors.add(st.op_word, "missing required key " + quoted_word(key_name(key)) + " for " +
                                 std::string(to_string(st.kind)));
  if (!errors.list.empty())
    return outcome;
  apply_defaults(st);
  check_semantics(st, errors);
  if (!errors.list.empty())
    return outcome;
  outcome.entry = WorkloadEntry{name, st.spec, st.weight, line.number};
  return outcome;
}

struct ParsedText {
  ParseResult result;
  std::vector<std::pair<int, Span>> operations; // line and op word of each operation
  bool stopped = false;                         // too many errors
};

ParsedText parse_text(std::string_view text, std::string_view filename) {
  ParsedText parsed;
  WorkloadState workload;
  std::vector<Diagnostic> &all_errors = parsed.result.errors;
  const std::vector<SourceLine> lines = split_lines(text);
  for (size_t index = 0; index < lines.size(); ++index) {
    const SourceLine &line = lines[index];
    LineErrors errors{filename, line, {}};
    LineOutcome outcome = parse_line(line, workload, errors);
    if (outcome.op_word)
      parsed.operations.emplace_back(line.number, *outcome.op_word);
    if (outcome.entry)
      parsed.result.entries.push_back(std::move(*outcome.entry));
    std::stable_sort(errors.list.begin(), errors.list.end(),
                     [](const Diagnostic &a, const Diagnostic &b) { return a.col < b.col; });
    for (Diagnostic &d : errors.list) {
      if (all_errors.size() == max_errors) {
        parsed.stopped = true;
        break;
      }
      all_errors.push_back(std::move(d));
    }
    const bool more_lines = index + 1 < lines.size();
    if (parsed.stopped || (all_errors.size() == max_errors && more_lines)) {
      LineErrors last{filename, line, {}};
      last.add(Span{1, 1}, "too many errors (" + std::to_string(max_errors) +
                               "); the rest of the input was not checked");
      last.list.back().source_line.resize(std::min(line.text.size(), max_line_length));
      all_errors.push_back(std::move(last.list.back()));
      parsed.stopped = true;
      break;
    }
  }
  return parsed;
}

} // namespace

ParseResult parse_workload(std::string_view text, std::string_view filename) {
  return parse_text(text, filename).result;
}

ParseResult parse_spec(std::string_view text, std::string_view filename) {
  ParsedText parsed = parse_text(text, filename);
  ParseResult &result = parsed.result;
  if (parsed.stopped)
    return result;
  if (parsed.operations.empty()) {
    if (!result.errors.empty())
      return result;
    const std::vector<SourceLine> lines = split_lines(text);
    const std::string first_line =
        lines.empty() ? std::string() : std::string(lines.front().text.substr(0, max_line_length));
    result.errors.push_back(Diagnostic{std::string(filename), 1, 1, 1,
                                       "expected an operation (gemm, conv2d or conv3d), found "
                                       "none",
                                       first_line});
    return result;
  }
  if (parsed.operations.size() == 1)
    return result;
  const int line_number = parsed.operations[1].first;
  const Span op_word = parsed.operations[1].second;
  const std::vector<SourceLine> lines = split_lines(text);
  Diagnostic extra{std::string(filename),
                   line_number,
                   op_word.col,
                   op_word.length,
                   "expected exactly one operation, found a second one (the first is on line " +
                       std::to_string(parsed.operations[0].first) + ")",
                   std::string(lines[static_cast<size_t>(line_number) - 1].text)};
  const auto after =
      std::find_if(result.errors.begin(), result.errors.end(), [&](const Diagnostic &d) {
        return d.line > line_number || (d.line == line_number && d.col > op_word.col);
      });
  result.errors.insert(after, std::move(extra));
  return result;
}

} // namespace tcjit
