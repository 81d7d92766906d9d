// `tcjit emu run`: .npy buffers written back, scalars, --stats --json, sanitizer exit codes.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "cli/emu_command.h"
#include "cli/exit_codes.h"
#include "runtime/device/npy_file.h"
#include "tests/emu/emu_test_util.h"

namespace tcjit::emu::test {
namespace {

namespace fs = std::filesystem;

void write_npy_f32(const fs::path &p, const std::vector<float> &v) {
  std::string dict =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (" + std::to_string(v.size()) + ",), }";
  while ((10 + dict.size() + 1) % 64 != 0)
    dict += ' ';
  dict += '\n';
  std::ofstream out(p, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  uint16_t len = static_cast<uint16_t>(dict.size());
  out.write(reinterpret_cast<const char *>(&len), 2);
  out.write(dict.data(), static_cast<std::streamsize>(dict.size()));
  out.write(reinterpret_cast<const char *>(v.data()), static_cast<std::streamsize>(v.size() * 4));
}

int run_cli(std::vector<std::string> args) {
  CLI::App app{"tcjit"};
  tcjit::cli::add_emu_command(app);
  std::vector<const char *> argv{"tcjit"};
  for (const auto &a : args)
    argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), const_cast<char **>(argv.data()));
  } catch (const CLI::RuntimeError &e) {
    return e.get_exit_code();
  } catch (const CLI::ParseError &e) {
    return tcjit::cli::kExitUsage;
  }
  return 0;
}

const char *kAxpy = R"(.version 8.0
.target sm_80
.address_size 64
.visible .entry axpy(.param .u32 n, .param .f32 a, .param .u64 x, .param .u64 y)
{
  .reg .b32 %r<4>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<6>;
  .reg .pred %p;
  mov.u32 %r1, %tid.x;
  ld.param.u32 %r2, [n];
  setp.ge.u32 %p, %r1, %r2;
  @%p bra DONE;
  ld.param.f32 %f1, [a];
  ld.param.u64 %rd1, [x];
  ld.param.u64 %rd2, [y];
  mul.wide.u32 %rd3, %r1, 4;
  add.u64 %rd4, %rd1, %rd3;
  add.u64 %rd5, %rd2, %rd3;
  ld.global.f32 %f2, [%rd4];
  ld.global.f32 %f3, [%rd5];
  fma.rn.f32 %f3, %f1, %f2, %f3;
  st.global.f32 [%rd5], %f3;
DONE:
  ret;
}
)";

TEST(EmuCli, RunWritesBuffersBackAndPrintsJsonStats) {
  fs::path dir = fs::temp_directory_path() / ("tcjit_emu_cli_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "axpy.ptx") << kAxpy;
  write_npy_f32(dir / "x.npy", {1, 2, 3, 4, 5});
  write_npy_f32(dir / "y.npy", {10, 20, 30, 40, 50});
  testing::internal::CaptureStdout();
  int rc = run_cli({"emu", "run", (dir / "axpy.ptx").string(), "--kernel", "axpy", "--grid", "1",
                    "--block", "32", "--stats", "--json", "--", "u32:5", "f32:2.5",
                    (dir / "x.npy").string(), (dir / "y.npy").string()});
  std::string out = testing::internal::GetCapturedStdout();
  ASSERT_EQ(rc, 0) << out;
  auto j = nlohmann::json::parse(out);
  EXPECT_EQ(j["status"], "ok");
  EXPECT_EQ(j["counters"]["global_load_requests"], 2);
  device::NpyArray y = device::read_npy((dir / "y.npy").string());
  std::vector<float> yv(5);
  std::memcpy(yv.data(), y.data.data(), 20);
  EXPECT_EQ(yv, (std::vector<float>{12.5f, 25, 37.5f, 50, 62.5f}));
  // a sanitizer error: n larger than the buffers
  testing::internal::CaptureStderr();
  rc = run_cli({"emu", "run", (dir / "axpy.ptx").string(), "--kernel", "axpy", "--grid", "1",
                "--block", "32", "--", "u32:9", "f32:1", (dir / "x.npy").string(),
                (dir / "y.npy").string()});
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, tcjit::cli::kExitFailure);
  EXPECT_NE(err.find("out-of-bounds global read"), std::string::npos) << err;
  EXPECT_NE(err.find("axpy.ptx:20"), std::string::npos) << err;
  // usage errors
  testing::internal::CaptureStderr();
  rc = run_cli({"emu", "run", (dir / "axpy.ptx").string(), "--kernel", "axpy", "--grid", "1",
                "--block", "32", "--", "u32:5"});
  err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(rc, tcjit::cli::kExitUsage);
  EXPECT_NE(err.find("takes 4 parameters"), std::string::npos) << err;
  fs::remove_all(dir);
}

// Runs `tcjit emu run` in-process and returns {exit code, stdout, stderr}.
struct CliResult {
  int rc = 0;
  std::string out, err;
};
CliResult run_captured(const std::vector<std::string> &args) {
  testing::internal::CaptureStdout();
  testing::internal::CaptureStderr();
  CliResult r;
  r.rc = run_cli(args);
  r.out = testing::internal::GetCapturedStdout();
  r.err = testing::internal::GetCapturedStderr();
  return r;
}

TEST(EmuCli, JsonStaysValidWithInvalidUtf8) {
  fs::path dir = fs::temp_directory_path() / ("tcjit_emu_utf8_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "axpy.ptx") << kAxpy;
  // a --kernel name that is not UTF-8
  CliResult r = run_captured({"emu", "run", (dir / "axpy.ptx").string(), "--kernel", "ax\xffpy",
                              "--grid", "1", "--block", "32", "--json"});
  EXPECT_EQ(r.rc, tcjit::cli::kExitFailure) << r.err; // NotFound
  nlohmann::json j = nlohmann::json::parse(r.out);    // throws on invalid JSON
  EXPECT_EQ(j["status"], "error");
  EXPECT_NE(j["error"].get<std::string>().find("has no kernel 'ax\xEF\xBF\xBDpy'"),
            std::string::npos)
      << r.out;
  // a non-UTF-8 byte in an operand of the PTX file, quoted in the load error
  std::string bad = kAxpy;
  bad.replace(bad.find("%r2, [n]"), 3, "%r\xfe");
  std::ofstream(dir / "bad.ptx") << bad;
  r = run_captured({"emu", "run", (dir / "bad.ptx").string(), "--kernel", "axpy", "--grid", "1",
                    "--block", "32", "--json"});
  EXPECT_EQ(r.rc, tcjit::cli::kExitFailure) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["status"], "error");
  EXPECT_NE(j["error"].get<std::string>().find("bad.ptx:11"), std::string::npos) << r.out;
  fs::remove_all(dir);
}

TEST(EmuCli, LaunchDimensionsAreCheckedBeforeLoading) {
  // the file does not exist: the limits are checked first
  CliResult r = run_captured({"emu", "run", "/nonexistent/k.ptx", "--kernel", "k", "--grid",
                              "2147483648", "--block", "32"});
  EXPECT_EQ(r.rc, tcjit::cli::kExitUsage);
  EXPECT_NE(r.err.find("--grid x is 2147483648, the limit is 2147483647"), std::string::npos)
      << r.err;
  r = run_captured(
      {"emu", "run", "/nonexistent/k.ptx", "--kernel", "k", "--grid", "1,65536", "--block", "32"});
  EXPECT_NE(r.err.find("--grid y is 65536, the limit is 65535"), std::string::npos) << r.err;
  r = run_captured(
      {"emu", "run", "/nonexistent/k.ptx", "--kernel", "k", "--grid", "1", "--block", "2048"});
  EXPECT_NE(r.err.find("--block x is 2048, the limit is 1024"), std::string::npos) << r.err;
  r = run_captured(
      {"emu", "run", "/nonexistent/k.ptx", "--kernel", "k", "--grid", "1", "--block", "64,32"});
  EXPECT_NE(r.err.find("--block x*y*z (threads per block) is 2048, the limit is 1024"),
            std::string::npos)
      << r.err;
  r = run_captured(
      {"emu", "run", "/nonexistent/k.ptx", "--kernel", "k", "--grid", "1", "--block", "1,1,65"});
  EXPECT_NE(r.err.find("--block z is 65, the limit is 64"), std::string::npos) << r.err;
}

const char *kSpin = R"(.version 8.0
.target sm_80
.address_size 64
.visible .entry spin()
{
LOOP:
  bra.uni LOOP;
}
)";

TEST(EmuCli, InstructionBudgetAndTimeoutAreOptions) {
  fs::path dir = fs::temp_directory_path() / ("tcjit_emu_spin_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "spin.ptx") << kSpin;
  CliResult r =
      run_captured({"emu", "run", (dir / "spin.ptx").string(), "--kernel", "spin", "--grid", "1",
                    "--block", "32", "--max-instructions", "100000", "--json"});
  EXPECT_EQ(r.rc, tcjit::cli::kExitFailure) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_NE(j["error"].get<std::string>().find(
                "instruction limit reached: the block executed more than 100000 warp "
                "instructions"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.err.find("--max-instructions"), std::string::npos) << r.err;
  const auto t = std::chrono::steady_clock::now();
  r = run_captured({"emu", "run", (dir / "spin.ptx").string(), "--kernel", "spin", "--grid", "1",
                    "--block", "32", "--max-instructions", "1000000000000000", "--timeout", "0.5"});
  EXPECT_EQ(r.rc, tcjit::cli::kExitFailure) << r.err;
  EXPECT_NE(r.err.find("time limit reached: the launch ran longer than 0.5 s"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("spin.ptx:7"), std::string::npos) << r.err;
  // the limit, not cut short (a lower bound, whatever the machine's load)
  EXPECT_GE(std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count(), 0.5);
  r = run_captured({"emu", "run", (dir / "spin.ptx").string(), "--kernel", "spin", "--grid", "1",
                    "--block", "32", "--timeout", "-1"});
  EXPECT_EQ(r.rc, tcjit::cli::kExitUsage);
  EXPECT_NE(r.err.find("--timeout must be between 0"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

// Block 5 of the grid reads its neighbour thread's word without a barrier; the others their own.
const char *kRaceInBlock5 = R"(.version 8.0
.target sm_80
.address_size 64
.visible .entry race5()
{
  .shared .align 4 .b8 tile[256];
  .reg .pred %p<2>;
  .reg .b32 %r<10>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  setp.eq.u32 %p1, %r2, 5;
  selp.u32 %r4, 33, 0, %p1;
  mov.u32 %r5, tile;
  shl.b32 %r6, %r1, 2;
  add.u32 %r7, %r5, %r6;
  st.shared.u32 [%r7], %r1;
  add.u32 %r8, %r1, %r4;
  rem.u32 %r8, %r8, 64;
  shl.b32 %r8, %r8, 2;
  add.u32 %r8, %r5, %r8;
  ld.shared.u32 %r9, [%r8];
  ret;
}
)";

TEST(EmuCli, RacecheckAllChecksEveryBlock) {
  unsetenv("TCJIT_EMU_RACECHECK");
  fs::path dir = fs::temp_directory_path() / ("tcjit_emu_race_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "race.ptx") << kRaceInBlock5;
  const std::vector<std::string> run = {"emu",      "run",     (dir / "race.ptx").string(),
                                        "--kernel", "race5",   "--grid",
                                        "64",       "--block", "64"};
  EXPECT_EQ(run_captured(run).rc, 0); // block 5 is not in the default sample
  std::vector<std::string> all = run;
  all.push_back("--racecheck-all");
  const CliResult r = run_captured(all);
  EXPECT_EQ(r.rc, tcjit::cli::kExitFailure);
  EXPECT_NE(r.err.find("shared-memory race (racecheck)"), std::string::npos) << r.err;
  fs::remove_all(dir);
}

} // namespace
} // namespace tcjit::emu::test
