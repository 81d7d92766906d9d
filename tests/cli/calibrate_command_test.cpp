// `tcjit calibrate` on the command line: a database without measured results (none at all, or only
// the cost model's predictions) is refused with what, where and how to fix, exit 3, and nothing is
// written beside it.
#include "run_tool.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <unistd.h>

namespace tcjit::testing {
namespace {

namespace fs = std::filesystem;

TEST(CalibrateCommand, RefusesADatabaseWithoutMeasuredResults) {
  const fs::path dir =
      fs::temp_directory_path() / ("tcjit-calibrate-cli-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string db = (dir / "k.db").string();
  ToolResult r = run_tool("calibrate --db " + shell_quote(db));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("tune on a GPU first: tcjit tune --device cuda"), std::string::npos)
      << r.err;
  // A tune on the emulator stores predictions only: they do not calibrate the model.
  r = run_tool("tune 'gemm m=64 n=64 k=64 a=f16 b=f16 c=f16' --budget 2 --db " + shell_quote(db));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_tool("calibrate --json --db " + shell_quote(db));
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("no measured results in " + db), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("tcjit tune --device cuda"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_FALSE(fs::exists(db + ".calibration.json"));
  fs::remove_all(dir);
}

// A replay file (a `tcjit db export` of 18 results measured on an A100, made by the cost model from
// known constants: DRAM 75% of the table's, f16 efficiency 0.85, 2500 cycles per wave) imported
// and calibrated: the constants come back, are stored in the database (a dry run leaves the file
// byte for byte as it was), `calibrate --show` lists the row, explain in another process says it
// predicts with them, and an export carries the calibration to another database.
TEST(CalibrateCommand, CalibratesFromAReplayFileAndExplainSaysSo) {
  const fs::path dir =
      fs::temp_directory_path() / ("tcjit-calibrate-replay-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string db = shell_quote((dir / "k.db").string());
  ToolResult r = run_tool(
      "db import " +
      shell_quote(std::string(TCJIT_SOURCE_DIR) + "/tests/cli/data/calibration_replay.jsonl") +
      " --db " + db);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string bytes = read_file(dir / "k.db");
  r = run_tool("calibrate --dry-run --db " + db);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("dry run: nothing stored"), std::string::npos) << r.out;
  EXPECT_TRUE(read_file(dir / "k.db") == bytes); // not a byte written
  r = run_tool("calibrate --show --db " + db);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("no calibration in"), std::string::npos) << r.out;
  r = run_tool("calibrate --json --db " + db);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["gpu"], "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(j["results"], 18);
  EXPECT_EQ(j["stored"], true);
  int checked = 0;
  for (const nlohmann::json &c : j["constants"]) {
    const double v = c["calibrated"].get<double>();
    if (c["name"] == "dram_bytes_per_s")
      checked += std::abs(v / (0.75 * 2.039e12) - 1) < 0.02;
    if (c["name"] == "mma_efficiency.f16")
      checked += std::abs(v - 0.85) < 0.02;
    if (c["name"] == "prologue_cycles")
      checked += std::abs(v / 2500 - 1) < 0.02;
  }
  EXPECT_EQ(checked, 3) << r.out;
  EXPECT_FALSE(fs::exists(dir / "k.db.calibration.json"));
  r = run_tool("calibrate --show --db " + db);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("NVIDIA A100-SXM4-80GB sm_80: calibrated on NVIDIA A100-SXM4-80GB (18 "
                       "results, "),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("mma_efficiency.f16: 0.95 -> 0.85"), std::string::npos) << r.out;
  r = run_tool("explain 'gemm m=4096 n=4096 k=4096 a=f16 b=f16 c=f16' --db " + db);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("the model: calibrated on NVIDIA A100-SXM4-80GB (18 results, "),
            std::string::npos)
      << r.out;
  // The calibration travels with an export.
  const std::string other = shell_quote((dir / "other.db").string());
  const std::string jsonl = shell_quote((dir / "k.jsonl").string());
  ASSERT_EQ(run_tool("db export --db " + db + " -o " + jsonl).exit_code, 0);
  r = run_tool("db import " + jsonl + " --db " + other);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(", 1 calibrations"), std::string::npos) << r.out;
  r = run_tool("explain 'gemm m=4096 n=4096 k=4096 a=f16 b=f16 c=f16' --db " + other);
  EXPECT_NE(r.out.find("the model: calibrated on NVIDIA A100-SXM4-80GB (18 results, "),
            std::string::npos)
      << r.out;
  fs::remove_all(dir);
}

} // namespace
} // namespace tcjit::testing
