// The example workloads the README runs end to end, through the real binary (ctest -L long: the
// ResNet-50 workload tunes 23 layers on the emulator, minutes under the sanitizers).
#include "run_tool.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <unistd.h>

namespace tcjit::testing {
namespace {

size_t occurrences(const std::string &text, const std::string &what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
    ++n;
  return n;
}

// examples/workloads/resnet50.tcjit: every layer tuned (one candidate each, verified on the
// emulator) and stored, then run from the database and verified.
TEST(Workloads, ResNet50TunesAndRuns) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("tcjit_workloads_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string db = shell_quote((dir / "kernels.db").string());
  const std::string wl =
      shell_quote(std::string(TCJIT_SOURCE_DIR) + "/examples/workloads/resnet50.tcjit");
  const ToolResult tune =
      run_tool("tune " + wl + " --device emu --budget 1 --jobs 2 --json --db " + db);
  ASSERT_EQ(tune.exit_code, 0) << tune.out << tune.err;
  const nlohmann::json j = nlohmann::json::parse(tune.out);
  EXPECT_EQ(j.size(), 23u);
  const ToolResult run = run_tool("run " + wl + " --device emu --db " + db);
  EXPECT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_EQ(occurrences(run.out, "result:   ok"), 23u) << run.out;
  EXPECT_EQ(occurrences(run.out, "cache:    tuned (predicted), hit"), 23u) << run.out;
  std::filesystem::remove_all(dir);
}

} // namespace
} // namespace tcjit::testing
