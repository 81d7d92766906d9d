// tcjit_gpu_bench's command line: `info` without a CUDA driver exits 4 with one line on stderr
// (bench/gpu prints it and exits 0), `info --json` on the fake driver describes the device, and
// `race` refuses fewer than 20 repetitions and writes nothing without a GPU.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;

struct ToolRun {
  int code = -1;
  std::string out, err;
};

std::string read_file(const fs::path &path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs the tool with `args`; `driver_dir` first on LD_LIBRARY_PATH ("" : LD_LIBRARY_PATH unset).
ToolRun run_tool(const std::string &args, const std::string &driver_dir, const fs::path &dir) {
  const fs::path out = dir / "stdout", err = dir / "stderr";
  const std::string env =
      driver_dir.empty() ? "env -u LD_LIBRARY_PATH " : "env LD_LIBRARY_PATH='" + driver_dir + "' ";
  const std::string command =
      env + "'" TCJIT_GPU_BENCH "' " + args + " >'" + out.string() + "' 2>'" + err.string() + "'";
  const int status = std::system(command.c_str());
  ToolRun r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

class GpuBenchCli : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tcjit_gpu_bench_cli_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(GpuBenchCli, NoDriverIsExit4AndOneLine) {
  const ToolRun info = run_tool("info --json", "", dir_);
  if (info.code == 0)
    GTEST_SKIP() << "this machine has a CUDA driver and a GPU: the no-GPU path cannot be shown";
  EXPECT_EQ(info.code, 4) << info.err;
  EXPECT_EQ(info.out, "");
  ASSERT_TRUE(info.err.starts_with("no GPU: ")) << info.err;
  EXPECT_EQ(info.err.find('\n'), info.err.size() - 1) << "one line: " << info.err;

  const fs::path json = dir_ / "race.json";
  const ToolRun race = run_tool("race --quick --db '" + (dir_ / "b.db").string() + "' --json '" +
                                    json.string() + "'",
                                "", dir_);
  EXPECT_EQ(race.code, 4);
  EXPECT_TRUE(race.err.starts_with("no GPU: ")) << race.err;
  EXPECT_FALSE(fs::exists(json)) << "nothing measured, nothing written";
}

TEST_F(GpuBenchCli, InfoJsonOnTheFakeDriver) {
  const ToolRun info = run_tool("info --json", TCJIT_FAKE_LIBCUDA_DIR, dir_);
  ASSERT_EQ(info.code, 0) << info.err;
  const nlohmann::json j = nlohmann::json::parse(info.out);
  EXPECT_EQ(j["name"], "Fake H100");
  EXPECT_EQ(j["arch"], "sm_90");
  EXPECT_EQ(j["sms"], 132);
  EXPECT_EQ(j["sm_clock_mhz"], 1980);
  EXPECT_EQ(j["memory_clock_mhz"], 2619);
  EXPECT_EQ(j["driver"], "CUDA 13.0");
  EXPECT_EQ(j["l2_bytes"], 50 * 1024 * 1024);
  EXPECT_EQ(j["peaks"]["gpu"], "H100-SXM5-80GB");
}

TEST_F(GpuBenchCli, RaceRefusesFewerThanTwentyRepetitions) {
  const ToolRun race = run_tool("race --reps 5 --db '" + (dir_ / "b.db").string() + "' --json '" +
                                    (dir_ / "r.json").string() + "'",
                                TCJIT_FAKE_LIBCUDA_DIR, dir_);
  EXPECT_EQ(race.code, 2);
  EXPECT_NE(race.err.find("at least 20"), std::string::npos) << race.err;
  EXPECT_EQ(run_tool("race --json x", TCJIT_FAKE_LIBCUDA_DIR, dir_).code, 2) << "--db required";
}

} // namespace

namespace {

// The whole command on the fake driver: the JSON file with the device and every quick GEMM, each
// with tcjit's column measured (its output reported wrong: the fake runs no kernel) and the
// anchor columns present.
TEST_F(GpuBenchCli, RaceWritesTheReportOnTheFakeDriver) {
  const fs::path json = dir_ / "race.json";
  const ToolRun race = run_tool("race --quick --gemm-only --no-tune --reps 20 --db '" +
                                    (dir_ / "b.db").string() + "' --json '" + json.string() + "'",
                                TCJIT_FAKE_LIBCUDA_DIR, dir_);
  ASSERT_EQ(race.code, 0) << race.err;
  const nlohmann::json j = nlohmann::json::parse(read_file(json));
  EXPECT_EQ(j["device"]["name"], "Fake H100");
  EXPECT_EQ(j["options"]["quick"], true);
  EXPECT_EQ(j["options"]["tune"], false);
  ASSERT_EQ(j["problems"].size(), 6u);
  for (const nlohmann::json &p : j["problems"]) {
    EXPECT_EQ(p["kind"], "gemm");
    const nlohmann::json &tcjit = p["columns"][0];
    EXPECT_EQ(tcjit["column"], "tcjit heuristic");
    EXPECT_EQ(tcjit["measured"], true) << tcjit.dump();
    EXPECT_EQ(tcjit["timing"]["reps"], 20);
    EXPECT_EQ(tcjit["verification"]["ok"], false);
    EXPECT_GE(p["columns"].size(), 3u) << "the anchors' columns";
  }
  EXPECT_NE(race.err.find("WRONG OUTPUT"), std::string::npos) << race.err;
}

} // namespace
