// Every --json output validated against its schema in docs/schemas/ (JSON Schema draft 7, by
// valijson): the documented keys, their types, and no key the schema does not name.
#include "run_tool.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include <filesystem>
#include <string>

namespace tcjit::testing {
namespace {

namespace fs = std::filesystem;

const char *kGemm = "gemm m=64 n=64 k=64 a=f16 b=f16:col";
const char *kConv = "conv2d n=1 h=8 w=8 c=16 k=16 r=3 s=3 pad=1 x=f16";

// The errors of `doc` against docs/schemas/NAME.schema.json, one per line ("" when valid).
std::string schema_errors(const std::string &name, const nlohmann::json &doc) {
  const fs::path path = fs::path(TCJIT_SOURCE_DIR) / "docs" / "schemas" / (name + ".schema.json");
  const nlohmann::json schema_doc = nlohmann::json::parse(read_file(path));
  valijson::Schema schema;
  valijson::SchemaParser parser;
  valijson::adapters::NlohmannJsonAdapter schema_adapter(schema_doc);
  parser.populateSchema(schema_adapter, schema);
  valijson::Validator validator;
  valijson::ValidationResults results;
  valijson::adapters::NlohmannJsonAdapter target(doc);
  if (validator.validate(schema, target, &results))
    return "";
  std::string text;
  valijson::ValidationResults::Error error;
  while (results.popError(error)) {
    std::string where;
    for (const std::string &c : error.context)
      where += c;
    text += where + ": " + error.description + "\n";
  }
  return text;
}

class JsonSchema : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tcjit_json_schema_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string db() const { return shell_quote((dir_ / "k.db").string()); }

  // Runs `args`, which must print one JSON document, and checks it against `schema`.
  nlohmann::json valid(const std::string &schema, const std::string &args, int exit_code = 0) {
    const ToolResult r = run_tool(args);
    EXPECT_EQ(r.exit_code, exit_code) << args << "\n" << r.err;
    const nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
    EXPECT_FALSE(doc.is_discarded()) << args << ": not JSON:\n" << r.out;
    EXPECT_EQ(schema_errors(schema, doc), "") << args << "\n" << r.out;
    return doc;
  }

  fs::path dir_;
};

TEST_F(JsonSchema, TheValidatorRejectsUndocumentedAndMissingKeys) {
  nlohmann::json doc = valid("compile", "compile --json --no-ptxas " + shell_quote(kGemm));
  nlohmann::json extra = doc;
  extra["undocumented"] = 1;
  EXPECT_NE(schema_errors("compile", extra), "");
  nlohmann::json missing = doc;
  missing.erase("identity");
  EXPECT_NE(schema_errors("compile", missing), "");
  nlohmann::json wrong = doc;
  wrong["threads"] = "128";
  EXPECT_NE(schema_errors("compile", wrong), "");
}

TEST_F(JsonSchema, ExplainGemmConvAndWorkload) {
  valid("explain", "explain --json " + shell_quote(kGemm));
  valid("explain", "explain --json --arch sm_90 " + shell_quote(kConv));
  // symbolic sizes (null figures, string dims), a finding, names and weights
  const fs::path wl = dir_ / "w.tcjit";
  std::ofstream(wl) << "qkv: gemm m=? n=4096 k=1024 a=f16 b=f16 weight=3\n"
                    << "odd: gemm m=100 n=100 k=30 a=f16 b=f16\n";
  const nlohmann::json doc = valid("explain", "explain --json " + shell_quote(wl.string()));
  ASSERT_EQ(doc.size(), 2u);
  EXPECT_TRUE(doc[0]["flops"].is_null());
  EXPECT_FALSE(doc[1]["findings"].empty());
}

// A tuned range, then `resolve` of a size it serves, of `m=?` (per bucket) and of a spec nothing
// decided (heuristic, to compile); a missing database is not created.
TEST_F(JsonSchema, ResolveTunedAndHeuristic) {
  const ToolResult tuned = run_tool("tune --device emu --budget 2 --jobs 1 --db " + db() +
                                    " \"gemm m=1..64 n=64 k=64 a=f16 b=f16:col\"");
  ASSERT_EQ(tuned.exit_code, 0) << tuned.err;
  const nlohmann::json size =
      valid("resolve", "resolve --json --db " + db() + " \"gemm m=37 n=64 k=64 a=f16 b=f16:col\"");
  ASSERT_EQ(size.size(), 1u);
  EXPECT_EQ(size[0]["kernels"][0]["origin"], "tuned predicted");
  EXPECT_EQ(size[0]["kernels"][0]["binary"], "stored");
  const nlohmann::json any =
      valid("resolve", "resolve --json --db " + db() + " \"gemm m=? n=64 k=64 a=f16 b=f16:col\"");
  EXPECT_GE(any[0]["kernels"].size(), 2u);
  const fs::path missing = dir_ / "missing.db";
  const nlohmann::json none = valid(
      "resolve", "resolve --json --db " + shell_quote(missing.string()) + " " + shell_quote(kGemm));
  EXPECT_EQ(none[0]["kernels"][0]["origin"], "heuristic");
  EXPECT_EQ(none[0]["kernels"][0]["binary"], "to compile");
  EXPECT_TRUE(none[0]["database"].is_null());
  EXPECT_FALSE(fs::exists(missing));
}

TEST_F(JsonSchema, CompilePtxAndCubin) {
  valid("compile", "compile --json --no-ptxas -o " + shell_quote((dir_ / "a.ptx").string()) + " " +
                       shell_quote(kGemm));
  const nlohmann::json doc =
      valid("compile", "compile --json --cubin --config \"64x64x32 w32x32 s3 k2\" -o " +
                           shell_quote((dir_ / "a.cubin").string()) + " " + shell_quote(kGemm));
  EXPECT_EQ(doc["kernels"].size(), 2u) << "split-K's reduction is the module's second kernel";
}

TEST_F(JsonSchema, RunOkFailedAndError) {
  const fs::path wl = dir_ / "w.tcjit";
  std::ofstream(wl) << "g: " << kGemm << "\nc: " << kConv
                    << "\nsym: gemm m=? n=64 k=64 a=f16 b=f16\n";
  const nlohmann::json doc =
      valid("run", "run --json --device emu --db " + db() + " " + shell_quote(wl.string()), 1);
  ASSERT_EQ(doc.size(), 3u);
  EXPECT_EQ(doc[0]["result"], "ok");
  EXPECT_EQ(doc[1]["result"], "ok");
  EXPECT_EQ(doc[2]["result"], "error");
}

TEST_F(JsonSchema, TuneDoctorAndDb) {
  valid("tune", "tune --json --budget 2 --db " + db() + " " + shell_quote(kGemm));
  valid("doctor", "doctor --json --db " + db());
  valid("doctor", "doctor --json --db " + shell_quote((dir_ / "none.db").string()));
  const nlohmann::json ls = valid("db-ls", "db ls --json --db " + db());
  ASSERT_EQ(ls.size(), 1u);
  valid("db-show", "db show --json --db " + db() + " " + ls[0]["hash"].get<std::string>());
  valid("db-stats", "db stats --json --db " + db());
}

// `db show` of the spec as written (what `tcjit run` keys it by); prune's and rebuild's documents.
TEST_F(JsonSchema, DbShowOfTheSpecAsWrittenPruneAndRebuild) {
  valid("tune", "tune --json --budget 2 --db " + db() + " " + shell_quote(kGemm));
  const nlohmann::json ls = valid("db-ls", "db ls --json --db " + db());
  ASSERT_EQ(ls.size(), 1u);
  EXPECT_EQ(ls[0]["time_from"], "predicted") << "a tune on the emulator predicts";
  const nlohmann::json shown =
      valid("db-show", "db show --json --db " + db() + " " + shell_quote(kGemm));
  EXPECT_EQ(shown["hash"], ls[0]["hash"]);
  ASSERT_FALSE(shown["results"].empty());
  EXPECT_TRUE(shown["results"][0]["decides"]);
  EXPECT_EQ(shown["results"][0]["config"], ls[0]["config"]);
  const nlohmann::json preview =
      valid("db-prune", "db prune --stale --toolkit-version 99.0 --dry-run --json --db " + db());
  EXPECT_EQ(preview["rows"].size(), 1u);
  EXPECT_EQ(preview["kernels_missing"].size(), 1u);
  valid("db-prune", "db prune --stale --toolkit-version 99.0 --json --db " + db());
  const nlohmann::json rebuilt = valid("db-rebuild", "db rebuild --json --db " + db());
  EXPECT_EQ(rebuilt["compiled"], 1);
  valid("db-show", "db show --json --arch sm_80 --db " + db() + " " + shell_quote(kGemm));

  // A spec with no stored problem: exit 3, what to run.
  const ToolResult missing =
      run_tool("db show --db " + db() + " " + shell_quote("gemm m=64 n=64 k=128 a=f16 b=f16:col"));
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_NE(missing.err.find("no problem for 'gemm m=64 n=64 k=128"), std::string::npos)
      << missing.err;
  EXPECT_NE(missing.err.find("`tcjit tune \"gemm m=64 n=64 k=128"), std::string::npos)
      << missing.err;
}

} // namespace
} // namespace tcjit::testing
