// Whatever the input, the parser returns: no crash, no exception, no hang, and every failure has
// a diagnostic that points inside its line. Valid results round-trip through the printer.
#include "dsl_test_util.h"

#include "compiler/dsl/lexer.h"
#include "compiler/spec/validate.h"

#include <array>
#include <random>

namespace tcjit {
namespace {

constexpr std::array<std::string_view, 9> seeds{
    "gemm m=4096 n=4096 k=4096 a=f16:row b=f16:col c=f16:row acc=f32",
    "gemm m=1024 n=1000 k=2048 a=bf16:row b=bf16:row c=f32:row acc=f32 alpha=1 beta=1 bias=col "
    "act=gelu",
    "gemm m=? n=4096 k=4096 batch=8 a=f32:row b=f32:col c=f32:row acc=f32 math=tf32",
    "gemm m=512 n=512 k=512 a=s8:row b=s8:col c=s32:row acc=s32",
    "gemm m=256 n=256 k=256 a=f64:row b=f64:row c=f64:row acc=f64",
    "conv2d n=32 h=56 w=56 c=64 k=64 r=3 s=3 pad=1 stride=1 dilation=1 groups=1 x=f16:nhwc "
    "filter=f16:krsc y=f16:nhwc acc=f32 act=relu pass=fprop",
    "conv2d n=8 h=28 w=28 c=128 k=128 r=3 s=3 pad=1 groups=128 x=f16:nhwc filter=f16:krsc "
    "y=f16:nhwc acc=f32",
    "conv3d n=2 d=16 h=32 w=32 c=32 k=64 t=3 r=3 s=3 pad=1 x=bf16:ndhwc filter=bf16:ktrsc "
    "y=bf16:ndhwc acc=f32 pass=dgrad",
    "# workload\nqkv: gemm m=1..64 n=8 k=8 a=f16 b=f16 lda=8 weight=3\n\n"
    "c1:conv2d n=? h=9 w=9 c=8 k=8 r=3 s=1 pad=1,0 stride=2,1 x=f32:nchw pass=wgrad\n",
};

constexpr std::array<std::string_view, 44> tokens{"=",
                                                  ":",
                                                  "?",
                                                  "..",
                                                  ",",
                                                  "#",
                                                  " ",
                                                  "\n",
                                                  "\r",
                                                  "\t",
                                                  std::string_view("\0", 1),
                                                  "-",
                                                  "99999999999999999999",
                                                  "2147483647",
                                                  "2147483648",
                                                  "9223372036854775807",
                                                  "0",
                                                  "-1",
                                                  "nan",
                                                  "inf",
                                                  "1e999",
                                                  "1e-320",
                                                  "f16",
                                                  "s4",
                                                  "tf32",
                                                  "u8",
                                                  "row",
                                                  "nhwc",
                                                  "krsc",
                                                  "ktrsc",
                                                  "gemm",
                                                  "conv2d",
                                                  "conv3d",
                                                  "m=",
                                                  "n=?",
                                                  "pad=1,2,3",
                                                  "groups=7",
                                                  "x=",
                                                  "weight=",
                                                  "name:",
                                                  "\xc3\xa9",
                                                  "\xff",
                                                  "math=tf32",
                                                  "bias=row"};

struct Mutator {
  std::mt19937_64 engine{7};
  size_t below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(engine() % n); }

  // Word boundaries: [start, end) of each run of non-spaces.
  std::vector<std::pair<size_t, size_t>> words(const std::string &s) {
    std::vector<std::pair<size_t, size_t>> found;
    size_t i = 0;
    while (i < s.size()) {
      while (i < s.size() && s[i] == ' ')
        ++i;
      const size_t start = i;
      while (i < s.size() && s[i] != ' ')
        ++i;
      if (i > start)
        found.emplace_back(start, i);
    }
    return found;
  }

  void mutate(std::string &s) {
    const size_t at = below(s.size() + 1);
    const auto ws = words(s);
    switch (below(8)) {
    case 0:
      if (!s.empty())
        s.erase(below(s.size()), 1);
      return;
    case 1: s.insert(at, 1, static_cast<char>(below(256))); return;
    case 2:
      if (!s.empty())
        s[below(s.size())] = static_cast<char>(below(256));
      return;
    case 3: s.insert(at, tokens[below(tokens.size())]); return;
    case 4:
      if (!ws.empty()) {
        const auto [b, e] = ws[below(ws.size())];
        s.insert(at, " " + s.substr(b, e - b) + " ");
      }
      return;
    case 5:
      if (!ws.empty()) {
        const auto [b, e] = ws[below(ws.size())];
        s.erase(b, e - b);
      }
      return;
    case 6:
      if (ws.size() >= 2) {
        const auto [b1, e1] = ws[0];
        const auto [b2, e2] = ws[below(ws.size() - 1) + 1];
        const std::string first = s.substr(b1, e1 - b1), second = s.substr(b2, e2 - b2);
        s.replace(b2, e2 - b2, first);
        s.replace(b1, e1 - b1, second);
      }
      return;
    case 7: s.resize(at); return;
    }
  }
};

// Checks the invariants of one parse of `text`.
void check_result(std::string_view text, const ParseResult &result) {
  const std::vector<SourceLine> lines = split_lines(text);
  for (const Diagnostic &d : result.errors) {
    ASSERT_FALSE(d.message.empty());
    ASSERT_GE(d.line, 1);
    ASSERT_GE(d.col, 1);
    ASSERT_GE(d.length, 1);
    if (!lines.empty()) {
      ASSERT_LE(d.line, static_cast<int>(lines.size()));
      const std::string_view line = lines[static_cast<size_t>(d.line) - 1].text;
      ASSERT_EQ(d.source_line, line.substr(0, max_line_length));
      ASSERT_LE(d.col + d.length - 1, static_cast<int>(std::max<size_t>(line.size(), 1)) + 1)
          << d.render();
    }
    const std::string shown = d.render();
    ASSERT_TRUE(shown.ends_with("\n"));
  }
  ASSERT_LE(result.errors.size(), max_errors + 2);
  for (const WorkloadEntry &entry : result.entries) {
    ASSERT_TRUE(validate_spec(entry.spec).empty()) << print_entry(entry);
    const ParseResult again = parse_workload(print_entry(entry));
    ASSERT_TRUE(again.ok()) << print_entry(entry) << "\n" << rendered(again);
    ASSERT_EQ(again.entries.size(), 1u);
    ASSERT_EQ(again.entries[0].spec, entry.spec) << print_entry(entry);
    ASSERT_EQ(again.entries[0].weight, entry.weight);
  }
}

void check_text(std::string_view text) {
  const ParseResult workload = parse_workload(text, "fuzz");
  check_result(text, workload);
  for (const WorkloadEntry &entry : workload.entries) {
    ASSERT_GE(entry.line, 1);
  }
  const ParseResult spec = parse_spec(text, "fuzz");
  check_result(text, spec);
  if (spec.ok()) {
    ASSERT_EQ(spec.entries.size(), 1u);
  }
}

TEST(Robustness, RandomMutationsOfTheExamples) {
  Mutator mutator;
  int failures = 0, successes = 0;
  for (int i = 0; i < 6000; ++i) {
    std::string text(seeds[static_cast<size_t>(i) % seeds.size()]);
    const size_t mutations = 1 + mutator.below(4);
    for (size_t j = 0; j < mutations; ++j)
      mutator.mutate(text);
    const ParseResult result = parse_workload(text);
    (result.ok() ? successes : failures) += 1;
    check_text(text);
    if (::testing::Test::HasFatalFailure()) {
      ADD_FAILURE() << "input: " << testing::PrintToString(text);
      return;
    }
  }
  // The mutations exercise both outcomes.
  EXPECT_GT(failures, 1000);
  EXPECT_GT(successes, 100);
}

TEST(Robustness, EveryByteValueEverywhere) {
  const std::string base(seeds[0]);
  for (int byte = 0; byte < 256; ++byte)
    for (size_t at = 0; at <= base.size(); at += 7) {
      std::string text = base;
      text.insert(at, 1, static_cast<char>(byte));
      check_text(text);
      if (::testing::Test::HasFatalFailure())
        return;
    }
}

// A line over max_line_length is refused by its length alone, before it is lexed: one diagnostic,
// whatever it holds (so the work on it does not grow with what is in it).
void expect_refused_by_length(const std::string &text) {
  for (const ParseResult &r : {parse_workload(text), parse_spec(text)}) {
    ASSERT_EQ(r.errors.size(), 1u) << rendered(r);
    EXPECT_EQ(r.errors[0].message, "line is too long: " + std::to_string(text.size()) +
                                       " bytes (the limit is " + std::to_string(max_line_length) +
                                       ")");
    EXPECT_EQ(r.errors[0].source_line.size(), max_line_length);
    EXPECT_TRUE(r.entries.empty());
  }
}

// No hang on huge inputs, in terms of the parser's own bounds rather than seconds: an over-long
// line is refused unlexed, errors stop at max_errors (ErrorCountIsBounded), and many valid lines
// all parse.
TEST(Robustness, HugeInputs) {
  // A 1 MB line, of one word and of many words.
  check_text(std::string(1 << 20, 'x'));
  expect_refused_by_length(std::string(1 << 20, 'x'));
  std::string many_words;
  while (many_words.size() < (1 << 20))
    many_words += "m=1 ";
  check_text(many_words);
  expect_refused_by_length(many_words);
  // A number with a hundred thousand digits, within a line's limit or not.
  check_text("gemm m=" + std::string(4000, '9') + " n=1 k=1 a=f16 b=f16");
  check_text("gemm m=" + std::string(100000, '9') + " n=1 k=1 a=f16 b=f16");
  expect_refused_by_length("gemm m=" + std::string(100000, '9') + " n=1 k=1 a=f16 b=f16");
  // Lines of nothing but separators and unterminated pieces.
  check_text(std::string(4000, '='));
  check_text(std::string(4000, ':'));
  check_text(std::string(4000, ','));
  check_text("conv2d pad=" + std::string(4000, ',') + " x=f16");
  check_text("gemm m=1.. n=..  k=. a=f16: b=:col c=f16:row:col alpha=1e batch=1...2");
  check_text(std::string(100000, '\n'));
  EXPECT_TRUE(parse_workload(std::string(100000, '\n')).ok());
  check_text(std::string(100000, '\0'));
  expect_refused_by_length(std::string(100000, '\0'));
  // Ten thousand valid lines.
  std::string lines;
  for (int i = 0; i < 10000; ++i)
    lines +=
        "op" + std::to_string(i) + ": gemm m=" + std::to_string(i + 1) + " n=64 k=64 a=f16 b=f16\n";
  const ParseResult result = parse_workload(lines);
  EXPECT_TRUE(result.ok());
  EXPECT_EQ(result.entries.size(), 10000u);
  EXPECT_EQ(result.entries.back().line, 10000);
}

TEST(Robustness, ErrorCountIsBounded) {
  std::string text;
  for (int i = 0; i < 5000; ++i)
    text += "gemm m=0\n";
  const ParseResult result = parse_workload(text);
  ASSERT_EQ(result.errors.size(), max_errors + 1);
  EXPECT_EQ(result.errors.back().message,
            "too many errors (100); the rest of the input was not checked");
}

} // namespace
} // namespace tcjit
