// Limits checked before work, with the limit and the value in the message: unknown commands, an
// operand too large for any buffer, the host memory of `tcjit run`, and the emulator's time
// estimate (refused beyond 10 minutes unless --allow-long).
#include "run_tool.h"

#include <gtest/gtest.h>

#include <unistd.h>

namespace tcjit::testing {
namespace {

double physical_memory_gib() {
  return static_cast<double>(sysconf(_SC_PHYS_PAGES)) *
         static_cast<double>(sysconf(_SC_PAGE_SIZE)) / (1024.0 * 1024 * 1024);
}

TEST(CliLimits, UnknownCommandIsNamedAndTheCommandsListed) {
  ToolResult r = run_tool("nosuchcommand");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("tcjit: unknown command 'nosuchcommand'; the commands are: explain, "
                       "compile, run, tune, resolve, emu, db, doctor"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("A subcommand is required"), std::string::npos) << r.err;
  r = run_tool("db nosuchcommand");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("tcjit db: unknown command 'nosuchcommand'; the commands are: ls,"),
            std::string::npos)
      << r.err;
  r = run_tool("emu nosuchcommand");
  EXPECT_NE(r.err.find("tcjit emu: unknown command 'nosuchcommand'; the commands are: run"),
            std::string::npos)
      << r.err;
  // a missing command still says so; known commands still work
  r = run_tool("db");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("A subcommand is required"), std::string::npos) << r.err;
  r = run_tool("explain " + shell_quote("gemm m=64 n=64 k=64 a=f16 b=f16"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(CliLimits, HugeLeadingDimensionIsABadSpecNotBadAlloc) {
  // A: 1024 rows x lda 2^31-1 f16 elements = 4 TiB
  const ToolResult r =
      run_tool("run --device emu --no-cache " +
               shell_quote("gemm m=1024 n=64 k=64 a=f16:row b=f16:col c=f16:row lda=2147483647"));
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("a is too large: 1024 x 2147483647 elements of 16 bits are 4398046509056 "
                       "bytes; an operand is limited to 1099511627776 bytes (1 TiB"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("bad_alloc"), std::string::npos) << r.err;
}

TEST(CliLimits, HostMemoryIsCheckedBeforeAllocating) {
  // A: 128 x (2^31-1) f16 = 512 GiB, under the 1 TiB operand limit, over this machine's memory
  if (physical_memory_gib() > 900)
    GTEST_SKIP() << "this machine has more memory than the test's problem needs";
  const ToolResult r =
      run_tool("run --device emu --no-cache " +
               shell_quote("gemm m=128 n=64 k=64 a=f16:row b=f16:col c=f16:row lda=2147483647"));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.err.find("GiB of host memory for its buffers (A 512.0 GiB"), std::string::npos)
      << r.err;
  // the least of the physical memory, the rlimits and the cgroup's limit, named
  EXPECT_NE(r.err.find("the limit is "), std::string::npos) << r.err;
}

TEST(CliLimits, LongEmulatorRunsPrintAnEstimateAndNeedAllowLong) {
  // 20000^3 f16: about 4 G mma, far beyond 10 minutes; its buffers need about 6 GiB
  if (physical_memory_gib() < 8)
    GTEST_SKIP() << "the host-memory check would refuse first on this machine";
  const std::string spec =
      shell_quote("gemm m=20000 n=20000 k=20000 a=f16:row b=f16:col c=f16:row acc=f32");
  const ToolResult r = run_tool("run --device emu --no-cache " + spec);
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("estimate: ~1."), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("e+10 warp-instructions, "), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("the emulator would take about "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("the limit is 10 min: pass --allow-long"), std::string::npos) << r.err;
  // a small problem prints its estimate and runs
  const ToolResult small = run_tool("run --device emu --no-cache " +
                                    shell_quote("gemm m=64 n=64 k=64 a=f16:row b=f16:col"));
  EXPECT_EQ(small.exit_code, 0) << small.out << small.err;
  EXPECT_NE(small.out.find("estimate: ~"), std::string::npos) << small.out;
  EXPECT_NE(small.out.find("under a second on the emulator"), std::string::npos) << small.out;
}

} // namespace
} // namespace tcjit::testing
