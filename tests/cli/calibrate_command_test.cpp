// `tcjit calibrate` on the command line: a database without measured results (none at all, or only
// the cost model's predictions) is refused with what, where and how to fix, exit 3, and nothing is
// written beside it.
#include "run_tool.h"

#include <gtest/gtest.h>

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

} // namespace
} // namespace tcjit::testing
