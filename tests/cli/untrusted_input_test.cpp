// What a user or a handed-over file can give tcjit that must not hang it, exhaust its memory or
// reach the terminal raw: PTX and act=custom files that are FIFOs, devices, directories or huge;
// kernels and act=custom functions that never end (--timeout of run and tune); a memory rlimit
// under the machine's memory; a negative --seed; control characters in a PTX file's text.
#include "run_tool.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sys/stat.h>

namespace tcjit::testing {
namespace {

namespace fs = std::filesystem;

class UntrustedInput : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tcjit_untrusted_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string &name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

const std::string kEmuArgs = " --kernel k --grid 1 --block 1";

// A FIFO would block open() forever, /dev/zero would be read forever: both are refused by stat()
// before anything is opened, as is a directory; the message names the path (exit 2).
TEST_F(UntrustedInput, EmuRunRefusesAPtxFileThatIsNotARegularFile) {
  const std::string fifo = path("k.ptx");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string &file : {fifo, std::string("/dev/zero"), dir_.string()}) {
    const ToolResult r = run_tool("emu run " + shell_quote(file) + kEmuArgs);
    EXPECT_EQ(r.exit_code, 2) << file << ": " << r.err;
    EXPECT_NE(r.err.find("'" + file + "' is not a regular file (it is a"), std::string::npos)
        << r.err;
  }
  // a .npy buffer likewise (it is read, then written back)
  const std::string ptx = path("k2.ptx"), npy_fifo = path("x.npy");
  std::ofstream(ptx) << ".version 8.0\n.target sm_80\n.address_size 64\n"
                        ".visible .entry k(.param .u64 x) { ret; }\n";
  ASSERT_EQ(::mkfifo(npy_fifo.c_str(), 0600), 0);
  const ToolResult npy =
      run_tool("emu run " + shell_quote(ptx) + kEmuArgs + " -- " + shell_quote(npy_fifo));
  EXPECT_EQ(npy.exit_code, 2) << npy.err;
  EXPECT_NE(npy.err.find("'" + npy_fifo + "' is not a regular file (it is a FIFO)"),
            std::string::npos)
      << npy.err;
}

// A 1 GiB file (sparse: nothing written) is refused by its size before a byte is read.
TEST_F(UntrustedInput, EmuRunRefusesAPtxFileOverTheSizeLimit) {
  const std::string big = path("big.ptx");
  { std::ofstream(big) << ".version 8.0\n"; }
  fs::resize_file(big, uint64_t{1} << 30);
  const ToolResult r = run_tool("emu run " + shell_quote(big) + kEmuArgs);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("is 1073741824 bytes, over the limit of 67108864 bytes (64 MiB) for a PTX "
                       "file"),
            std::string::npos)
      << r.err;
}

// A control character quoted from a PTX file comes out as \x1b, never raw.
TEST_F(UntrustedInput, PtxLoadErrorsEscapeTheFilesControlCharacters) {
  const std::string ptx = path("esc.ptx");
  std::ofstream(ptx) << ".version 8.0\n.target sm_80\n.address_size 64\n"
                        ".visible .entry k() { \x1b]52;c;ZXZpbA==\x07 ret; }\n";
  const ToolResult r = run_tool("emu run " + shell_quote(ptx) + kEmuArgs);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(r.err.find('\x1b'), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\x07'), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\\x1b"), std::string::npos) << r.err;
}

// act=custom:FILE naming a FIFO or /dev/zero: refused before opening (exit 2), for run and tune.
TEST_F(UntrustedInput, CustomActivationFileThatIsNotARegularFileIsRefused) {
  const std::string fifo = path("act.cu");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string &file : {fifo, std::string("/dev/zero")}) {
    const std::string spec = "gemm m=16 n=16 k=16 a=f16 b=f16:col c=f16 act=custom:" + file;
    for (const std::string &command :
         {std::string("run --device emu --no-cache --backend nvrtc "),
          "tune --device emu --backend nvrtc --budget 1 --db " + shell_quote(path("k.db")) + " "}) {
      const ToolResult r = run_tool(command + shell_quote(spec));
      EXPECT_EQ(r.exit_code, 2) << command << file << ": " << r.err;
      EXPECT_NE(r.err.find("'" + file + "' is not a regular file"), std::string::npos) << r.err;
    }
  }
}

// An act=custom function that never returns: the run ends at --timeout with the spec, the limit
// and how to raise it (exit 3), not after minutes.
TEST_F(UntrustedInput, RunEndsAtItsTimeoutWithTheSpecAndTheLimit) {
  std::ofstream(path("spin.cu")) << "__device__ float act(float x) {\n"
                                    "  volatile float y = x;\n"
                                    "  while (y == y) y = y + 0.0f;\n"
                                    "  return y;\n}\n";
  const std::string spec =
      "gemm m=16 n=16 k=16 a=f16 b=f16:col c=f16 act=custom:" + path("spin.cu");
  const ToolResult r =
      run_tool("run --device emu --no-cache --backend nvrtc --timeout 2 " + shell_quote(spec));
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("tcjit run: error: gemm m=16 n=16 k=16"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("longer than the time limit of 2s (--timeout 2)"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("raise the limit with --timeout SECONDS (0: no limit)"), std::string::npos)
      << r.err;
  // tune: each candidate fails at the limit (not after minutes) and the tune ends
  const ToolResult t = run_tool("tune --device emu --backend nvrtc --budget 1 --timeout 2 --db " +
                                shell_quote(path("k.db")) + " " + shell_quote(spec));
  EXPECT_EQ(t.exit_code, 3) << t.out << t.err;
  EXPECT_NE(t.out.find("(none: every config failed)"), std::string::npos) << t.out << t.err;
  // the limit is checked as an option
  const ToolResult bad = run_tool("run --device emu --no-cache --timeout -5 " +
                                  shell_quote("gemm m=16 n=16 k=16 a=f16 b=f16"));
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  EXPECT_NE(bad.err.find("--timeout must be between 0 (no limit) and 1e9 seconds"),
            std::string::npos)
      << bad.err;
}

// Under a 2 GiB address-space rlimit (far below this machine's memory) a problem whose buffers
// need about 4 GiB is refused up front, naming the rlimit, instead of ending in bad_alloc.
TEST_F(UntrustedInput, HostMemoryCheckUsesTheAddressSpaceRlimit) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space, so any sanitized process "
                  "dies under a 2 GiB RLIMIT_AS; the release suite runs this test";
#endif
  // A: 128 rows x lda 2^23 f16 = 2 GiB, and its emulator copy
  const std::string spec = "gemm m=128 n=64 k=64 a=f16:row b=f16:col c=f16:row lda=8388608";
  const ToolResult r =
      run_tool("run --device emu --no-cache " + shell_quote(spec), "ulimit -v 2097152;");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("GiB of host memory for its buffers (A 2.0 GiB"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("the limit is what is left of this process's address-space limit "
                       "(RLIMIT_AS"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("bad_alloc"), std::string::npos) << r.err;
}

// --seed -1 would wrap to 2^64-1: refused by every command that takes --seed.
TEST_F(UntrustedInput, NegativeSeedIsRefused) {
  const std::string spec = shell_quote("gemm m=16 n=16 k=16 a=f16 b=f16");
  for (const std::string &command :
       {std::string("run --device emu --no-cache --seed -1 "),
        "tune --device emu --budget 1 --seed -1 --db " + shell_quote(path("k.db")) + " "}) {
    const ToolResult r = run_tool(command + spec);
    EXPECT_EQ(r.exit_code, 2) << command << r.out << r.err;
    EXPECT_NE(r.err.find("the seed must be a non-negative integer"), std::string::npos) << r.err;
  }
  const ToolResult ok = run_tool("run --device emu --no-cache --seed 18446744073709551615 " + spec);
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
}

} // namespace
} // namespace tcjit::testing
