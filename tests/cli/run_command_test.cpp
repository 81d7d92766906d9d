// `tcjit run` end to end: compile, run on the emulator, verify against the CPU reference, cache.
#include "../common/cubin_elf.h"
#include "run_tool.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <regex>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tcjit::testing {
namespace {

class RunCommand : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tcjit_run_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string db() const { return shell_quote((dir_ / "kernels.db").string()); }
  std::filesystem::path dir_;
};

// --json: one array, an object per operation with the keys of docs/cli.md, nothing else on
// stdout; a failing operation is "error" with its exit status. A workload's text report ends
// with a summary table.
TEST_F(RunCommand, JsonAndTheWorkloadSummary) {
  const std::string wl = (dir_ / "w.tcjit").string();
  std::ofstream(wl) << "g: gemm m=32 n=32 k=32 a=f16 b=f16:col c=f16 acc=f32\n"
                       "c: conv2d n=1 h=6 w=6 c=8 k=8 r=3 s=3 pad=1 x=f16\n";
  const ToolResult j = run_tool("run --device emu --json --db " + db() + " " + shell_quote(wl));
  ASSERT_EQ(j.exit_code, 0) << j.out << j.err;
  const nlohmann::json all = nlohmann::json::parse(j.out);
  ASSERT_EQ(all.size(), 2u);
  for (const auto &op : all) {
    for (const char *key : {"name", "spec", "key", "config", "kernel", "cache", "device",
                            "estimate", "verify", "counters", "recorded", "result", "exit_status"})
      EXPECT_TRUE(op.contains(key)) << key << " in " << op;
    EXPECT_EQ(op["result"], "ok");
    EXPECT_EQ(op["verify"]["mismatches"], 0);
    EXPECT_GT(op["verify"]["elements"].get<int64_t>(), 0);
  }
  EXPECT_EQ(all[0]["name"], "g");
  EXPECT_EQ(all[1]["verify"]["elements"], 6 * 6 * 8);
  const ToolResult text = run_tool("run --device emu --db " + db() + " " + shell_quote(wl));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("problem  result  elements  worst err/tol  config\ng        ok"),
            std::string::npos)
      << text.out;
  const ToolResult bad = run_tool("run --device emu --json --no-cache " +
                                  shell_quote("gemm m=? n=8 k=8 a=f16 b=f16 c=f16 acc=f32"));
  EXPECT_EQ(bad.exit_code, 1);
  const nlohmann::json one = nlohmann::json::parse(bad.out);
  EXPECT_EQ(one[0]["result"], "error");
  EXPECT_EQ(one[0]["exit_status"], 1);
}

// One meaning for --config: `db ptx`/`db cubin` take the config as `tcjit run` prints it (or its
// stored JSON), like compile, run and tune.
TEST_F(RunCommand, DbPtxTakesTheConfigAsRunPrintsIt) {
  const std::string spec = shell_quote("gemm m=32 n=32 k=32 a=f16 b=f16:col c=f16 acc=f32");
  const ToolResult run = run_tool("run --device emu --json --db " + db() + " --config " +
                                  shell_quote("32x32x32 w16x16 s2") + " " + spec);
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json r = nlohmann::json::parse(run.out)[0];
  const std::string key = r["key"], config = r["config"];
  const ToolResult text =
      run_tool("db ptx " + key + " --db " + db() + " --config " + shell_quote(config));
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find(".entry " + r["kernel"].get<std::string>()), std::string::npos);
  const ToolResult json =
      run_tool("db ptx " + key + " --db " + db() + " --config " +
               shell_quote(R"({"bk":32,"bm":32,"bn":32,"raster_group":1,"split_k":1,"stages":2,)"
                           R"("vec_a":8,"vec_b":8,"wm":16,"wn":16})"));
  EXPECT_EQ(json.exit_code, 0) << json.err;
  const ToolResult bad =
      run_tool("db ptx " + key + " --db " + db() + " --config " + shell_quote("tile_m=64"));
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("not a tile config; give it as `tcjit run` prints it"), std::string::npos)
      << bad.err;
}

TEST_F(RunCommand, CompilesOnceThenHitsTheCache) {
  const std::string spec =
      shell_quote("gemm m=64 n=48 k=40 a=f16:row b=f16:col c=f16:row acc=f32 bias=col act=relu");
  const ToolResult first = run_tool("run --device emu --db " + db() + " " + spec);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  EXPECT_NE(first.out.find("cache:    miss, compiled in"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("0 outside tolerance"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("result:   ok, verified on the emulator and recorded"),
            std::string::npos)
      << first.out;

  const ToolResult second = run_tool("run --device emu --db " + db() + " " + spec);
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  EXPECT_NE(second.out.find("cache:    hit (database"), std::string::npos) << second.out;
  EXPECT_EQ(second.out.find("compiled in"), std::string::npos) << second.out;
  EXPECT_NE(second.out.find("0 outside tolerance"), std::string::npos) << second.out;

  // The database holds the problem, its binary and both verified runs' result (deduplicated).
  const ToolResult ls = run_tool("db ls --json --db " + db());
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_NE(ls.out.find("gemm m=64 n=48 k=40"), std::string::npos) << ls.out;
}

// The kernel `tcjit run` stores carries its cubin (ptxas, whole program, for the arch it was
// compiled for), which `tcjit db cubin` writes out and a GPU loads without compiling; the
// resources `tcjit db show` lists are that cubin's; the binary is current for `tcjit db` (its
// default versions are those binaries are stored with), so prune --stale keeps it.
TEST_F(RunCommand, StoresTheCubinWithThePtx) {
  const std::string spec = shell_quote("gemm m=32 n=32 k=32 a=f16 b=f16:col c=f16 acc=f32");
  const ToolResult first = run_tool("run --device emu --db " + db() + " " + spec);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(first.out, m, std::regex(R"(cubin ([0-9]+) B by ptxas -arch=sm_80)")))
      << first.out;
  const std::string bytes = m[1];
  ASSERT_TRUE(std::regex_search(first.out, m, std::regex(R"(key:      ([0-9a-f]{16}))")));
  const std::string hash = m[1];
  const ToolResult second = run_tool("run --device emu --db " + db() + " " + spec);
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  EXPECT_NE(second.out.find("earlier, cubin " + bytes + " B)"), std::string::npos) << second.out;

  const std::filesystem::path cubin = dir_ / "k.cubin";
  const ToolResult exported =
      run_tool("db cubin --db " + db() + " " + hash + " -o " + shell_quote(cubin.string()));
  ASSERT_EQ(exported.exit_code, 0) << exported.out << exported.err;
  const std::string image = read_file(cubin);
  EXPECT_EQ(std::to_string(image.size()), bytes);
  EXPECT_EQ(elf_machine(image), kElfMachineCuda);
  EXPECT_EQ(cubin_sm(image), 80);

  // `tcjit db show` lists the registers, spills and shared memory of the cubin it stores.
  const ToolResult shown = run_tool("db show --json --db " + db() + " " + hash);
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  ASSERT_TRUE(std::regex_search(shown.out, m,
                                std::regex(R"("binaries":\s*\[[\s\S]*?"registers":\s*([0-9]+))")))
      << shown.out;
  const int registers = std::stoi(m[1]);
  ASSERT_TRUE(std::regex_search(image, m, std::regex(R"(\.text\.(tcjit_gemm_\w+))")));
  EXPECT_EQ(registers, cubin_registers(image, m[1])) << "db show: the shipped cubin's registers";
  const ToolResult table = run_tool("db show --db " + db() + " " + hash);
  EXPECT_TRUE(std::regex_search(
      table.out, std::regex("  " + std::to_string(registers) + R"(\s+0\s+[0-9]+\s+)" + bytes)))
      << "REGS, SPILL_B (0), SMEM_B, CUBIN_B columns:\n"
      << table.out;

  const ToolResult pruned = run_tool("db prune --stale --db " + db());
  ASSERT_EQ(pruned.exit_code, 0) << pruned.out << pruned.err;
  const ToolResult stats = run_tool("db stats --db " + db());
  EXPECT_NE(stats.out.find("binaries        1 (0 stale"), std::string::npos) << stats.out;
}

TEST_F(RunCommand, WithoutPtxasTheCubinComesFromNvJitLink) {
  const std::string spec = shell_quote("gemm m=32 n=32 k=32 a=f16 b=f16:col c=f16 acc=f32");
  const ToolResult first =
      run_tool("run --device emu --db " + db() + " " + spec, "TCJIT_PTXAS=/nonexistent/ptxas");
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  EXPECT_TRUE(
      std::regex_search(first.out, std::regex(R"(cubin [0-9]+ B by nvJitLink -arch=sm_80)")))
      << first.out;
}

// ptxas that is there but cannot be used (no scratch directory) is a problem of the environment,
// not of the spec: the cubin comes from nvJitLink, and the run goes on.
TEST_F(RunCommand, PtxasWithoutAScratchDirectoryFallsBackToNvJitLink) {
  const std::string spec = shell_quote("gemm m=32 n=32 k=32 a=f16 b=f16:col c=f16 acc=f32");
  const ToolResult r =
      run_tool("run --device emu --db " + db() + " " + spec, "TMPDIR=/nonexistent_tcjit_tmpdir");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(cubin [0-9]+ B by nvJitLink -arch=sm_80)")))
      << r.out;
}

TEST_F(RunCommand, WithoutPtxasOrNvJitLinkStoresThePtxOnly) {
  const std::string spec = shell_quote("gemm m=32 n=32 k=32 a=f16 b=f16:col c=f16 acc=f32");
  const std::string env =
      "TCJIT_PTXAS=/nonexistent/ptxas TCJIT_NVJITLINK_LIBRARY=/nonexistent/libnvJitLink.so";
  const ToolResult first = run_tool("run --device emu --db " + db() + " " + spec, env);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  EXPECT_NE(first.out.find("no cubin: neither ptxas (cannot run ptxas at /nonexistent/ptxas, set "
                           "TCJIT_PTXAS) nor "
                           "nvJitLink ("),
            std::string::npos)
      << first.out;
  const ToolResult second = run_tool("run --device emu --db " + db() + " " + spec);
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  EXPECT_NE(second.out.find("earlier, PTX only)"), std::string::npos) << second.out;
}

// With s8 operands loaded byte by byte, wide warp tiles of this spec spill: the default chooser
// ranks them out by their estimated registers, and the runtime still reads ptxas's report of the
// cubin and falls back to smaller configs until one does not spill (saying so), stores that one,
// and finds it again in the cache.
TEST_F(RunCommand, ADefaultConfigThatSpillsFallsBackToOneThatDoesNot) {
  const std::string spec = shell_quote(
      "gemm m=128 n=128 k=31 a=s8:row b=s8:col c=s8:row acc=s32 act=gelu beta=1 bias=col");
  const ToolResult first = run_tool("run --device emu --db " + db() + " " + spec);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  EXPECT_TRUE(std::regex_search(
      first.out, std::regex(R"(\([0-9]+ registers, 0 spill bytes, 0 B stack, [0-9]+ B shared\), )"
                            R"((config [0-9x ksgvabw]+ \([0-9x ksgvabw]+ needs [0-9]+ B of spills )"
                            R"(and stack[^)]*\), )?cubin)")))
      << first.out;
  EXPECT_NE(first.out.find("0 outside tolerance"), std::string::npos) << first.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(first.out, m, std::regex(R"(config:   ([^\n]+))")));
  const ToolResult second = run_tool("run --device emu --db " + db() + " " + spec);
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  EXPECT_NE(second.out.find("cache:    hit (database"), std::string::npos) << second.out;
  EXPECT_NE(second.out.find("config:   " + m[1].str()), std::string::npos) << second.out;
}

TEST_F(RunCommand, NoCacheNeverTouchesTheDatabase) {
  const ToolResult r = run_tool("run --device emu --no-cache --db " + db() + " " +
                                shell_quote("gemm m=16 n=16 k=16 a=f16 b=f16:col"));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("cache:    miss"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(dir_ / "kernels.db"));
}

TEST_F(RunCommand, CudaWithoutDriverSaysSo) {
  const ToolResult r = run_tool("run --device cuda --db " + db() + " " +
                                shell_quote("gemm m=16 n=16 k=16 a=f16 b=f16:col"));
  if (r.exit_code == 0)
    GTEST_SKIP() << "a CUDA driver and device exist here";
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("no CUDA driver (libcuda.so.1 not found); use --device emu"),
            std::string::npos)
      << r.err;
}

TEST_F(RunCommand, SymbolicSizesNeedNumbers) {
  const ToolResult r =
      run_tool("run --device emu --no-cache " + shell_quote("gemm m=? n=16 k=16 a=f16 b=f16:col"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("the spec has symbolic sizes"), std::string::npos) << r.err;
}

TEST_F(RunCommand, ConvolutionsRunAndVerify) {
  const ToolResult r =
      run_tool("run --device emu --no-cache " +
               shell_quote("conv2d n=1 h=8 w=8 c=32 k=32 r=3 s=3 pad=1 x=f16:nhwc bias=col"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("verify:   2048 elements, 0 outside tolerance"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("result:   ok, verified on the emulator"), std::string::npos) << r.out;
}

TEST_F(RunCommand, ChannelsFirstConvolutionsAreRefusedWithTheConversion) {
  const ToolResult r = run_tool("run --device emu --no-cache " +
                                shell_quote("conv2d n=1 h=8 w=8 c=32 k=32 r=3 s=3 x=f16:nchw"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("x is nchw: the implicit-GEMM kernels read channels-last tensors only"),
            std::string::npos)
      << r.err;
}

TEST_F(RunCommand, AnEmptyDbPathIsAnErrorNotTheDefaultDatabase) {
  const std::string fallback = (dir_ / "default.db").string();
  const std::string env = "TCJIT_DB=" + shell_quote(fallback);
  const std::string spec = shell_quote("gemm m=16 n=16 k=16 a=f16:row b=f16:col c=f16:row acc=f32");
  for (const std::string &args : {"run --device emu --db '' " + spec, "tune --db '' " + spec,
                                  std::string("db ls --db ''"), std::string("doctor --db ''")}) {
    const ToolResult r = run_tool(args, env);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find("empty path"), std::string::npos) << args << "\n" << r.err;
  }
  EXPECT_FALSE(std::filesystem::exists(fallback));
}

// A long emulator launch shows its blocks on a terminal (one line redrawn with "\r\033[K" and
// erased before the report goes on); elsewhere (a file, as here without a terminal) progress is
// plain lines only (at most one per 10 s), never a redrawn one.
TEST_F(RunCommand, EmulatorProgressOnATerminalOnly) {
  // ~0.5 s of emulation on an idle 2-core machine (2.5x the first report, at 0.2 s)
  const std::string spec = "gemm m=2048 n=1024 k=1024 a=f16 b=f16:col";
  const std::filesystem::path out = dir_ / "tty.txt";
  // script(1) gives the command a pseudo-terminal for stdout and stderr
  const std::string cmd =
      "script -qec " +
      shell_quote(shell_quote(TCJIT_TOOL) + " run --device emu --no-cache " + shell_quote(spec)) +
      " /dev/null >" + shell_quote(out.string()) + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << read_file(out);
  const std::string tty = read_file(out);
  EXPECT_TRUE(
      std::regex_search(tty, std::regex("\r\x1b\\[Ktcjit run: [0-9]+/[0-9]+ blocks \\([0-9]+%\\)")))
      << tty;
  // the live line is erased before the report's next line: "verify:" starts a line of its own
  EXPECT_NE(tty.find("\r\x1b[Kverify:   "), std::string::npos) << tty;
  EXPECT_NE(tty.find("result:   ok"), std::string::npos) << tty;

  const ToolResult plain =
      run_tool("run --device emu --no-cache \"gemm m=256 n=256 k=256 a=f16 b=f16:col\"");
  EXPECT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.err.find('\r'), std::string::npos) << plain.err;
  EXPECT_EQ(plain.err.find('\x1b'), std::string::npos) << plain.err;
  EXPECT_NE(plain.out.find("result:   ok"), std::string::npos) << plain.out;
}

// act=custom:FILE from a workload file: read from the workload's folder, compiled by the NVRTC
// backend, verified and cached; the LLVM backend says to use nvrtc; the user's compile errors come
// at the user's own lines; both exit with status 1 (the spec's problem); tune checks the function
// once and stores nothing for a broken one; --emit cuda shows the text.
TEST_F(RunCommand, CustomActivationThroughTheNvrtcBackend) {
  std::filesystem::create_directories(dir_ / "acts");
  std::ofstream(dir_ / "acts" / "hardswish.cu")
      << "// hard swish\n__device__ float act(float x) {\n"
         "  const float r = fminf(fmaxf(x + 3.0f, 0.0f), 6.0f);\n  return x * r / 6.0f;\n}\n";
  std::ofstream(dir_ / "acts" / "typo.cu")
      << "__device__ float act(float x) {\n  return x *\n    slope;\n}\n";
  const std::string gemm = "gemm m=48 n=40 k=64 a=f16 b=f16:col c=f16 beta=1 bias=col";
  std::ofstream(dir_ / "w.tcjit") << "hs: " << gemm << " act=custom:acts/hardswish.cu\n";
  std::ofstream(dir_ / "bad.tcjit") << gemm << " act=custom:acts/typo.cu\n";
  const std::string wl = shell_quote((dir_ / "w.tcjit").string());

  const ToolResult ok = run_tool("run --device emu --backend nvrtc --db " + db() + " " + wl);
  ASSERT_EQ(ok.exit_code, 0) << ok.err << ok.out;
  EXPECT_NE(ok.out.find("act=custom:acts/hardswish.cu"), std::string::npos) << ok.out;
  EXPECT_NE(ok.out.find("result:   ok, verified on the emulator"), std::string::npos) << ok.out;
  const ToolResult again = run_tool("run --device emu --backend nvrtc --db " + db() + " " + wl);
  EXPECT_NE(again.out.find("cache:    hit"), std::string::npos) << again.out;

  const ToolResult llvm = run_tool("run --device emu --db " + db() + " " + wl);
  EXPECT_EQ(llvm.exit_code, 1) << "the spec's problem, as for compile";
  EXPECT_NE(llvm.err.find("only the CUDA C++ backend compiles it; use --backend nvrtc"),
            std::string::npos)
      << llvm.err;

  const ToolResult bad = run_tool("run --device emu --backend nvrtc --db " + db() + " " +
                                  shell_quote((dir_ / "bad.tcjit").string()));
  EXPECT_EQ(bad.exit_code, 1) << bad.err;
  EXPECT_NE(bad.err.find("act=custom:acts/typo.cu does not compile"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("acts/typo.cu:3: error: identifier \"slope\" is undefined"),
            std::string::npos)
      << bad.err;

  const ToolResult tune_bad = run_tool("tune --device emu --backend nvrtc --budget 3 --db " + db() +
                                       " " + shell_quote((dir_ / "bad.tcjit").string()));
  EXPECT_NE(tune_bad.exit_code, 0);
  EXPECT_NE(tune_bad.out.find("acts/typo.cu:3: error"), std::string::npos)
      << tune_bad.out << tune_bad.err;
  const ToolResult tune_llvm = run_tool("tune --device emu --budget 3 --db " + db() + " " + wl);
  EXPECT_NE(tune_llvm.exit_code, 0);
  EXPECT_NE((tune_llvm.out + tune_llvm.err).find("use --backend nvrtc"), std::string::npos)
      << tune_llvm.out << tune_llvm.err;
  const ToolResult ls = run_tool("db ls --json --db " + db());
  EXPECT_EQ(ls.out.find("illegal"), std::string::npos) << "tune stored illegal results: " << ls.out;

  const ToolResult missing = run_tool("run --device emu --backend nvrtc --db " + db() + " " +
                                      shell_quote(gemm + " act=custom:nowhere.cu"));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("act=custom:nowhere.cu: no such file"), std::string::npos)
      << missing.err;
  EXPECT_NE(missing.err.find("how to fix: act=custom:FILE names a CUDA C++ file"),
            std::string::npos)
      << missing.err;

  const ToolResult cuda = run_tool("compile --emit cuda " + wl);
  ASSERT_EQ(cuda.exit_code, 0) << cuda.err;
  EXPECT_NE(cuda.out.find("#line 1 \"acts/hardswish.cu\"\n// hard swish"), std::string::npos)
      << cuda.out;
  EXPECT_NE(cuda.out.find("return tcjit_user::act(x);"), std::string::npos);
}

// A --db that is not a tcjit database (a workload file) or not a regular file (a FIFO, which the
// test holds open so that a build that opens it fails instead of blocking) is a bad command line
// for run, tune, doctor and db, said at once; the file is left alone. Issue 24.
TEST_F(RunCommand, ADbThatIsNotADatabaseOrNotAFileIsABadCommandLine) {
  const std::filesystem::path workload = dir_ / "w.tcjit";
  std::ofstream(workload) << "gemm m=16 n=16 k=16 a=f16 b=f16:col\n";
  const std::string before = read_file(workload);
  const std::filesystem::path fifo = dir_ / "fifo.db";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int held = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK);
  ASSERT_GE(held, 0);
  const std::string spec = shell_quote(workload.string());
  for (const auto &[given, expected] : std::vector<std::pair<std::filesystem::path, std::string>>{
           {workload, "not a tcjit kernel database"}, {fifo, "not a regular file"}}) {
    const std::string quoted = shell_quote(given.string());
    for (const std::string &command :
         {"run --device emu --db " + quoted + " " + spec,
          "tune " + spec + " --device emu --budget 1 --db " + quoted, "db ls --db " + quoted,
          "db check --db " + quoted, "db vacuum --db " + quoted,
          "db merge " + quoted + " --db " + db()}) {
      const ToolResult r = run_tool(command);
      EXPECT_EQ(r.exit_code, 2) << command << "\n" << r.out << r.err;
      EXPECT_NE(r.err.find(expected), std::string::npos) << command << "\n" << r.err;
      EXPECT_EQ(r.err.find("delete the file"), std::string::npos) << command << "\n" << r.err;
    }
    const ToolResult doctor = run_tool("doctor --db " + quoted);
    EXPECT_NE(doctor.out.find(expected), std::string::npos) << doctor.out << doctor.err;
  }
  ::close(held);
  EXPECT_EQ(read_file(workload), before);
}

// A database holding a trigger tcjit did not create is refused by `run` (exit 3, naming it) and
// its kernels stay; `db check` lists it.
TEST_F(RunCommand, ADatabaseWithAForeignTriggerIsRefusedAndItsKernelsStay) {
  if (std::system("command -v sqlite3 >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "no sqlite3 command here to plant the trigger";
  const std::string spec = shell_quote("gemm m=16 n=16 k=16 a=f16 b=f16:col");
  ASSERT_EQ(run_tool("run --device emu --db " + db() + " " + spec).exit_code, 0);
  const std::string sql = "CREATE TRIGGER evil AFTER INSERT ON results BEGIN DELETE FROM "
                          "binaries; DELETE FROM dispatch_tables; END";
  ASSERT_EQ(std::system(("sqlite3 " + db() + " " + shell_quote(sql)).c_str()), 0);
  const std::string before = read_file(dir_ / "kernels.db");
  const ToolResult r = run_tool("run --device emu --db " + db() + " " + spec);
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("trigger 'evil' on table 'results' was not created by tcjit"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(read_file(dir_ / "kernels.db"), before);
  const ToolResult check = run_tool("db check --full --db " + db());
  EXPECT_EQ(check.exit_code, 3);
  EXPECT_NE(check.out.find("trigger 'evil' on table 'results' was not created by tcjit"),
            std::string::npos)
      << check.out;
}

// A concrete size inside a range tuned by `tcjit tune` runs its bucket's config, from the kernel
// the tune stored (docs/tuner.md, "Which decision serves a spec").
TEST_F(RunCommand, ASizeInsideATunedRangeRunsItsBucketsKernel) {
  const ToolResult tuned = run_tool("tune --device emu --budget 2 --jobs 1 --db " + db() +
                                    " \"gemm m=1..64 n=64 k=64 a=f16 b=f16:col\"");
  ASSERT_EQ(tuned.exit_code, 0) << tuned.err;
  const ToolResult run =
      run_tool("run --device emu --json --db " + db() + " \"gemm m=37 n=64 k=64 a=f16 b=f16:col\"");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const nlohmann::json doc = nlohmann::json::parse(run.out);
  const std::string cache = doc[0]["cache"];
  EXPECT_NE(cache.find("tuned (predicted"), std::string::npos) << cache;
  EXPECT_NE(cache.find("of m=1..64 n=64 k=64"), std::string::npos) << cache;
  EXPECT_NE(cache.find("hit (database"), std::string::npos) << cache;
  EXPECT_EQ(doc[0]["recorded"], true);
}

} // namespace
} // namespace tcjit::testing
