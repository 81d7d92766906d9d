// `tcjit explain` and `tcjit compile` agree on every spec the DSL accepts: every input dtype x
// accumulator x math mode of the DSL's vocabulary, on every arch tcjit targets, for a GEMM, a
// convolution and a depthwise convolution, and a 2:4-sparse GEMM. Explain says whether tensor cores
// run it (and with which instruction) and whether it compiles; compile either produces PTX holding
// that instruction (no mma at all when explain says no tensor cores) or refuses with explain's
// reason.
#include "compiler/dsl/vocabulary.h"
#include "compiler/target/arch.h"
#include "tcjit/tcjit.hpp"
#include "tcjit/tools.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace tcjit {
namespace {

// The operations, with the input dtype and accumulator left to fill in.
const char *const kOps[] = {
    "gemm m=64 n=64 k=64 a=%IN b=%IN:col acc=%ACC",
    "gemm m=64 n=64 k=64 a=%IN b=u8:col acc=%ACC",              // s8 x u8 (and u8 x u8)
    "gemm m=64 n=64 k=64 a=%IN b=s8:col acc=%ACC",              // u8 x s8 (and s8 x s8)
    "gemm m=64 n=64 k=128 a=%IN b=%IN:col acc=%ACC sparse=2:4", // k: s4 needs 128
    "conv2d n=1 h=8 w=8 c=32 k=32 r=3 s=3 pad=1 x=%IN acc=%ACC",
    "conv2d n=1 h=8 w=8 c=32 k=32 groups=32 r=3 s=3 pad=1 x=%IN acc=%ACC",
    "gemm m=48 n=40 k=256 a=%IN b=%IN:col acc=%ACC bop=xor", // b1 only
};

std::string fill(std::string text, std::string_view in, std::string_view acc) {
  for (const auto &[word, value] :
       {std::pair{std::string_view("%IN"), in}, std::pair{std::string_view("%ACC"), acc}})
    for (size_t at = text.find(word); at != std::string::npos; at = text.find(word))
      text.replace(at, word.size(), value);
  return text;
}

// No math= key, then each math mode of the vocabulary.
std::vector<std::optional<MathMode>> math_choices() {
  std::vector<std::optional<MathMode>> out{std::nullopt};
  out.insert(out.end(), all_math_modes.begin(), all_math_modes.end());
  return out;
}

// The specs the DSL accepts among every dtype x accumulator x math mode of its vocabulary.
std::vector<WorkloadEntry> accepted_specs(const char *op) {
  std::vector<WorkloadEntry> out;
  for (const DType in : all_dtypes)
    for (const DType acc : all_dtypes)
      for (const std::optional<MathMode> math : math_choices()) {
        const std::string text = fill(op, to_string(in), to_string(acc)) +
                                 (math ? " math=" + std::string(to_string(*math)) : "");
        try {
          out.push_back(parse_ops(text).at(0));
        } catch (const Error &) { // the DSL refuses the combination
        }
      }
  return out;
}

struct Verdict {
  bool tensor_cores = false;
  bool compiles = false;
  std::string mma, note;
};

Verdict explain_verdict(const WorkloadEntry &entry, std::string_view arch) {
  ExplainRequest request;
  request.arch = std::string(arch);
  const nlohmann::json j = nlohmann::json::parse(explain_op(entry, request).json);
  return {j.at("tensor_cores").get<bool>(), j.at("compiles").get<bool>(),
          j.at("mma").get<std::string>(), j.at("mma_note").get<std::string>()};
}

TEST(ExplainAndCompile, AgreeOnEveryDtypeAccumulatorAndArch) {
  std::set<std::string> compiled, refused; // "spec @ arch", to show what was covered
  for (const char *op : kOps) {
    const std::vector<WorkloadEntry> specs = accepted_specs(op);
    ASSERT_FALSE(specs.empty()) << op;
    for (const WorkloadEntry &entry : specs)
      for (const ArchInfo &arch : known_archs()) {
        const std::string label = canonical_text(entry.spec) + " @ " + std::string(arch.name);
        SCOPED_TRACE(label);
        const Verdict v = explain_verdict(entry, arch.name);
        CompileRequest request;
        request.arch = std::string(arch.name);
        request.cubin = CubinCompiler::none;
        try {
          const CompiledModule m = compile(entry.spec, request);
          EXPECT_TRUE(v.compiles) << "explain says it does not compile: " << v.note;
          if (v.tensor_cores)
            EXPECT_NE(m.ptx.find(v.mma), std::string::npos) << "no " << v.mma << " in PTX";
          else
            EXPECT_EQ(m.ptx.find("mma.sync"), std::string::npos) << "explain: " << v.note;
          compiled.insert(label);
        } catch (const Error &e) {
          EXPECT_EQ(e.code(), ErrorCode::bad_spec) << e.what();
          EXPECT_FALSE(v.compiles) << "compile refused: " << e.problem();
          EXPECT_FALSE(v.tensor_cores);
          EXPECT_FALSE(v.note.empty());
          EXPECT_NE(e.problem().find(v.note), std::string::npos)
              << "compile: " << e.problem() << "\nexplain: " << v.note;
          refused.insert(label);
        }
      }
  }
  // What the DSL documents and both now agree on (docs/dsl.md): u8, s8 x u8, u8 x s8 and f16
  // with an f16 accumulator (gemm and convolution) compile on tensor cores.
  for (const ArchInfo &arch : known_archs()) {
    const std::string at = " @ " + std::string(arch.name);
    for (const auto &[op, in, acc] :
         {std::tuple{0, "u8", "s32"}, std::tuple{1, "s8", "s32"}, std::tuple{2, "u8", "s32"},
          std::tuple{0, "f16", "f16"}, std::tuple{4, "f16", "f16"}})
      EXPECT_TRUE(
          compiled.count(canonical_text(parse_ops(fill(kOps[op], in, acc)).at(0).spec) + at))
          << kOps[op] << " " << in << " " << acc << at;
    // packed sub-byte inputs: s4, u4 (and their mixes) and b1 compile on tensor cores
    for (const char *t : {"s4", "u4"})
      EXPECT_TRUE(
          compiled.count(canonical_text(parse_ops(fill(kOps[0], t, "s32")).at(0).spec) + at))
          << t << at;
    EXPECT_TRUE(
        compiled.count(canonical_text(parse_ops(fill(kOps[6], "b1", "s32")).at(0).spec) + at));
  }
  // and explain says what acc=f16 trades
  ExplainRequest request;
  request.arch = "sm_80";
  const nlohmann::json j =
      nlohmann::json::parse(explain_op(parse_ops(fill(kOps[0], "f16", "f16")).at(0), request).json);
  EXPECT_NE(j.at("mma_note").get<std::string>().find("trades accuracy for registers"),
            std::string::npos);
}

} // namespace
} // namespace tcjit
