// `tcjit tune` end to end on this GPU-less machine (the cost model, each candidate verified on the
// emulator): a workload of every dtype fills the database and a second run resumes it; shards
// cover a workload exactly once and merge; Ctrl-C keeps what is done and the next run continues;
// a size range stores a dispatch table; bad flags are refused with a clear message.
#include "run_tool.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <set>

namespace tcjit::testing {
namespace {

class TuneCommand : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tcjit_tune_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string path(const std::string &name) const { return (dir_ / name).string(); }
  std::string db(const std::string &name = "kernels.db") const { return shell_quote(path(name)); }
  std::string workload(const std::string &text) const {
    std::ofstream(path("workload.tcjit")) << text;
    return shell_quote(path("workload.tcjit"));
  }
  std::filesystem::path dir_;
};

constexpr const char *kEveryDtype =
    "f16: gemm m=128 n=128 k=128 a=f16 b=f16:col c=f16 acc=f32\n"
    "bf16: gemm m=64 n=128 k=64 a=bf16 b=bf16 c=f32 acc=f32 act=relu\n"
    "tf32: gemm m=64 n=64 k=64 a=f32 b=f32:col c=f32 acc=f32 math=tf32\n"
    "f32: gemm m=64 n=64 k=32 a=f32 b=f32 c=f32 acc=f32 math=f32\n"
    "s8: gemm m=64 n=64 k=128 a=s8 b=s8:col c=s32 acc=s32\n"
    "f64: gemm m=32 n=32 k=32 a=f64 b=f64 c=f64 acc=f64\n";

std::set<std::string> problem_keys(const std::string &db_arg) {
  const ToolResult ls = run_tool("db ls --json --db " + db_arg);
  std::set<std::string> keys;
  for (const auto &p : nlohmann::json::parse(ls.out))
    keys.insert(p["key"].get<std::string>());
  return keys;
}

TEST_F(TuneCommand, EveryDtypeIsTunedStoredAndThenSkipped) {
  const std::string wl = workload(kEveryDtype);
  const ToolResult first =
      run_tool("tune " + wl + " --device emu --budget 3 --jobs 2 --json --db " + db());
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  const nlohmann::json j = nlohmann::json::parse(first.out);
  ASSERT_EQ(j.size(), 6u);
  for (const auto &problem : j) {
    const auto &size = problem["sizes"][0];
    EXPECT_FALSE(size["already_tuned"].get<bool>()) << problem;
    EXPECT_EQ(size["measured"], 3) << problem;
    ASSERT_TRUE(size.contains("config")) << problem;
    EXPECT_EQ(size["provenance"], "predicted") << problem;
    EXPECT_GT(size["time_us"].get<double>(), 0) << problem;
  }
  EXPECT_EQ(problem_keys(db()).size(), 6u);
  // The table on a second run: everything already tuned, nothing measured.
  const ToolResult second = run_tool("tune " + wl + " --device emu --budget 3 --db " + db());
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  EXPECT_NE(second.out.find("best config"), std::string::npos) << second.out;
  EXPECT_NE(second.out.find("already tuned"), std::string::npos) << second.out;
  EXPECT_NE(second.out.find("predicted by the cost model, not measured"), std::string::npos);
  // Not a terminal: plain log lines, one per problem start and end.
  EXPECT_NE(second.err.find("[6/6] f64: started"), std::string::npos) << second.err;
  // The runtime now uses the tuned kernels: `tcjit run` finds them in the database.
  const ToolResult run = run_tool("run --device emu --db " + db() +
                                  " 'gemm m=128 n=128 k=128 a=f16 b=f16:col c=f16 acc=f32'");
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("cache:    tuned (predicted), hit"), std::string::npos) << run.out;
}

// On a terminal (util-linux's `script` gives the command one): one progress line redrawn in
// place, with the problem, candidates done of planned, the best so far and an ETA.
TEST_F(TuneCommand, OnATerminalProgressIsOneLineRedrawn) {
  if (std::system("command -v script >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "util-linux `script` is not installed";
  const std::string cmd = shell_quote(TCJIT_TOOL) +
                          " tune 'gemm m=64 n=64 k=64 a=f16 b=f16:col c=f16 acc=f32' "
                          "--device emu --budget 3 --jobs 1 --db " +
                          db();
  const std::string script =
      "script -qec " + shell_quote(cmd) + " /dev/null >" + shell_quote(path("tty")) + " 2>&1";
  ASSERT_EQ(std::system(script.c_str()), 0);
  const std::string tty = read_file(path("tty"));
  EXPECT_NE(tty.find("\r\033[K[1/1] line 1  candidates 1/3  best "), std::string::npos) << tty;
  EXPECT_NE(tty.find("candidates 3/3"), std::string::npos) << tty;
  EXPECT_NE(tty.find("  ETA "), std::string::npos) << tty;
  EXPECT_EQ(tty.find(": started"), std::string::npos) << tty; // no log lines on a terminal
}

TEST_F(TuneCommand, HeavierProblemsAreTunedFirst) {
  const std::string wl = workload("light: gemm m=64 n=64 k=64 a=f16 b=f16 c=f16 acc=f32\n"
                                  "heavy: gemm m=128 n=64 k=64 a=f16 b=f16 c=f16 acc=f32 "
                                  "weight=5\n");
  const ToolResult r = run_tool("tune " + wl + " --device emu --budget 1 --db " + db());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("[1/2] heavy: started"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("[2/2] light: started"), std::string::npos) << r.err;
}

TEST_F(TuneCommand, ShardsCoverTheWorkloadOnceAndMerge) {
  const std::string wl = workload("a: gemm m=64 n=64 k=64 a=f16 b=f16:col c=f16 acc=f32\n"
                                  "b: gemm m=64 n=128 k=64 a=f16 b=f16:col c=f16 acc=f32\n"
                                  "c: gemm m=128 n=64 k=64 a=f16 b=f16:col c=f16 acc=f32\n"
                                  "d: gemm m=128 n=128 k=64 a=f16 b=f16:col c=f16 acc=f32\n"
                                  "e: gemm m=32 n=32 k=64 a=f16 b=f16:col c=f16 acc=f32\n");
  std::set<std::string> all;
  size_t total = 0;
  for (int i = 0; i < 3; ++i) {
    const std::string shard_db = db("shard" + std::to_string(i) + ".db");
    const ToolResult r = run_tool("tune " + wl + " --device emu --budget 1 --shard " +
                                  std::to_string(i) + "/3 --db " + shard_db);
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    const std::set<std::string> keys = problem_keys(shard_db);
    total += keys.size();
    all.insert(keys.begin(), keys.end());
    const ToolResult merge = run_tool("db merge " + shard_db + " --db " + db());
    ASSERT_EQ(merge.exit_code, 0) << merge.out << merge.err;
  }
  EXPECT_EQ(total, 5u); // no problem twice
  EXPECT_EQ(all.size(), 5u);
  EXPECT_EQ(problem_keys(db()), all);
  const ToolResult bad = run_tool("tune " + wl + " --shard 3/3 --db " + db());
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--shard '3/3' must be I/N with 0 <= I < N"), std::string::npos)
      << bad.err;
}

TEST_F(TuneCommand, InterruptKeepsTheResultsAndTheNextRunContinues) {
  const std::string wl = workload("big: gemm m=512 n=512 k=512 a=f16 b=f16:col c=f16 acc=f32\n");
  const std::string args = "tune " + wl + " --device emu --budget 400 --jobs 1 --db " + db();
  // Start it, wait until results are being stored (polling the database, read-only, for up to
  // 5 minutes: slow under the sanitizers), then Ctrl-C (SIGINT).
  const std::string poll = shell_quote(TCJIT_TOOL) + " db ls --json --db " + db() +
                           " 2>/dev/null | grep -q '\"results\": [1-9]'";
  const std::string script = shell_quote(TCJIT_TOOL) + " " + args + " >" +
                             shell_quote(path("out")) + " 2>" + shell_quote(path("err")) +
                             " & pid=$!; i=0; until " + poll +
                             " || [ $i -ge 600 ]; do sleep 0.5; i=$((i+1)); done; "
                             "kill -INT $pid; wait $pid; echo $? >" +
                             shell_quote(path("status"));
  ASSERT_EQ(std::system(("sh -c " + shell_quote(script)).c_str()), 0);
  const std::string status = read_file(path("status"));
  ASSERT_EQ(std::stoi(status), 130) << status << read_file(path("err"));
  EXPECT_NE(read_file(path("err")).find("interrupted: every result so far is stored"),
            std::string::npos)
      << read_file(path("err"));
  const ToolResult check = run_tool("db check --db " + db());
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
  const auto ls = nlohmann::json::parse(run_tool("db ls --json --db " + db()).out);
  ASSERT_EQ(ls.size(), 1u);
  const int stored = ls[0]["results"].get<int>();
  EXPECT_GT(stored, 0);
  EXPECT_LT(stored, 400);
  // The next run resumes: it reuses what was stored and measures only the rest, up to the budget
  // (a smaller budget than the first run's here, to finish quickly).
  const ToolResult again = run_tool("tune " + wl + " --device emu --budget " +
                                    std::to_string(stored + 2) + " --json --db " + db());
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  const auto j = nlohmann::json::parse(again.out)[0]["sizes"][0];
  EXPECT_EQ(j["resumed"].get<int>(), stored) << j;
  EXPECT_EQ(j["measured"].get<int>(), 2) << j;
}

TEST_F(TuneCommand, ASizeRangeStoresADispatchTable) {
  const ToolResult r = run_tool(
      "tune 'gemm m=1..256 n=128 k=128 a=f16 b=f16:col c=f16 acc=f32' --device emu --budget 2 "
      "--json --db " +
      db());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out)[0];
  EXPECT_EQ(j["sizes"].size(), 9u); // 1, 2, 4, ..., 128, 256
  ASSERT_TRUE(j.contains("dispatch_entries"));
  EXPECT_GE(j["dispatch_entries"].get<int>(), 1);
  const ToolResult show = run_tool("db stats --json --db " + db());
  EXPECT_NE(show.out.find("dispatch"), std::string::npos) << show.out;
}

TEST_F(TuneCommand, BadFlagsAndSpecsGetClearErrors) {
  const std::string spec = "'gemm m=64 n=64 k=64 a=f16 b=f16 c=f16 acc=f32'";
  struct Case {
    std::string args;
    int exit_code;
    std::string message;
  };
  for (const Case &c : std::vector<Case>{
           {"--budget 10x", 2, "unknown unit 'x'"},
           {"--budget 0", 2, "is not a positive number"},
           {"--strategy greedy", 2, "is not one of exhaustive, random, anneal, model-topk"},
           {"--jobs 999", 2, "must be 0 (all cores) to 256"},
           {"--arch sm_75", 2, "unknown arch 'sm_75'"},
           {"--replay " + shell_quote(path("missing.jsonl")), 3, "missing.jsonl"},
       }) {
    const ToolResult r = run_tool("tune " + spec + " " + c.args + " --db " + db());
    EXPECT_EQ(r.exit_code, c.exit_code) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << "\n" << r.err;
  }
  const ToolResult any =
      run_tool("tune 'gemm m=? n=64 k=64 a=f16 b=f16 c=f16 acc=f32' --device emu --db " + db());
  EXPECT_EQ(any.exit_code, 1);
  EXPECT_NE(any.err.find("m=? cannot be tuned: give the sizes it will take as a range"),
            std::string::npos)
      << any.err;
}

TEST_F(TuneCommand, ReplayAnswersFromAnotherMachinesExport) {
  const std::string spec = "'gemm m=128 n=128 k=128 a=f16 b=f16:col c=f16 acc=f32'";
  ASSERT_EQ(run_tool("tune " + spec + " --device emu --budget 4 --db " + db("a.db")).exit_code, 0);
  const ToolResult exported = run_tool("db export --db " + db("a.db"));
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  std::ofstream(path("a.jsonl")) << exported.out;
  const ToolResult replayed =
      run_tool("tune " + spec + " --replay " + shell_quote(path("a.jsonl")) +
               " --budget 4 --json --db " + db("b.db"));
  ASSERT_EQ(replayed.exit_code, 0) << replayed.out << replayed.err;
  const auto original = nlohmann::json::parse(
      run_tool("tune " + spec + " --device emu --budget 4 --json --db " + db("a.db")).out);
  const auto j = nlohmann::json::parse(replayed.out);
  EXPECT_EQ(j[0]["sizes"][0]["config"], original[0]["sizes"][0]["config"]);
  EXPECT_EQ(j[0]["sizes"][0]["time_us"], original[0]["sizes"][0]["time_us"]);
}

} // namespace
} // namespace tcjit::testing

namespace tcjit::testing {
namespace {

// A workload of convolutions (scaled-down ResNet-50 layers: the C = 3 stem, a 3x3 and its dgrad
// and wgrad, a strided 1x1 downsample, a depthwise layer) tuned, stored, then run from the
// database and verified; a convolution with a symbolic batch is refused by tune with the reason.
// The README's full ResNet-50 workload runs in the long suite (tests/cli/workloads_test.cpp).
TEST_F(TuneCommand, ConvolutionWorkloadTunesAndRuns) {
  const std::string wl =
      workload("stem: conv2d n=1 h=32 w=32 c=3 k=16 r=7 s=7 pad=3 stride=2 x=f16 acc=f32 "
               "bias=col act=relu\n"
               "b3x3: conv2d n=1 h=8 w=8 c=32 k=32 r=3 s=3 pad=1 x=f16 acc=f32\n"
               "b3x3_dgrad: conv2d n=1 h=8 w=8 c=32 k=32 r=3 s=3 pad=1 pass=dgrad x=f16 acc=f32\n"
               "b3x3_wgrad: conv2d n=1 h=8 w=8 c=32 k=32 r=3 s=3 pad=1 pass=wgrad x=f16 acc=f32\n"
               "down: conv2d n=1 h=8 w=8 c=32 k=64 r=1 s=1 stride=2 x=f16 acc=f32\n"
               "dw: conv2d n=1 h=8 w=8 c=32 k=32 groups=32 r=3 s=3 pad=1 x=f16 acc=f32\n");
  const ToolResult tune =
      run_tool("tune " + wl + " --device emu --budget 2 --jobs 2 --json --db " + db());
  ASSERT_EQ(tune.exit_code, 0) << tune.out << tune.err;
  const nlohmann::json j = nlohmann::json::parse(tune.out);
  EXPECT_EQ(j.size(), 6u);
  for (const auto &problem : j)
    EXPECT_TRUE(problem["sizes"][0]["config"].is_string()) << problem;
  const ToolResult run = run_tool("run " + wl + " --device emu --db " + db());
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  auto count = [&](const std::string &what) {
    size_t n = 0;
    for (size_t at = run.out.find(what); at != std::string::npos; at = run.out.find(what, at + 1))
      ++n;
    return n;
  };
  EXPECT_EQ(count("result:   ok"), 6u) << run.out;
  EXPECT_EQ(count("cache:    tuned (predicted), hit"), 6u) << run.out;
  const ToolResult symbolic =
      run_tool("tune " + shell_quote("conv2d n=? h=8 w=8 c=8 k=8 r=3 s=3 x=f16") + " --db " + db());
  EXPECT_EQ(symbolic.exit_code, 1);
  EXPECT_NE(symbolic.err.find("is tuned at one batch size: give n"), std::string::npos)
      << symbolic.err;
}

} // namespace
} // namespace tcjit::testing
