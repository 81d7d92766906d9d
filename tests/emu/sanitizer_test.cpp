// The sanitizer catches planted bugs and names the kernel, the PTX line, the block and thread;
// the process and the device stay usable afterwards.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "tests/emu/emu_test_util.h"

namespace tcjit::emu::test {
namespace {

std::string launch_error(EmuDevice &dev, const std::string &body, const std::string &kernel,
                         device::Dim3 block, const std::vector<Arg> &args,
                         const std::string &file = "bug.ptx") {
  try {
    launch(dev, ptx_module(body), kernel, {1, 1, 1}, block, args, 0, file);
  } catch (const device::DeviceError &e) {
    EXPECT_EQ(e.kind(), device::ErrorKind::LaunchFailed) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "the launch did not fail";
  return "";
}

void expect_has(const std::string &msg, const std::string &part) {
  EXPECT_NE(msg.find(part), std::string::npos) << "missing '" << part << "' in: " << msg;
}

const char *kWriteN = R"(
.visible .entry write_n(.param .u64 out, .param .u32 n)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  mov.u32 %r1, %tid.x;
  ld.param.u32 %r2, [n];
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r1;
  ret;
}
)";

TEST(EmuSanitizer, OutOfBoundsGlobalWrite) {
  EmuDevice dev;
  auto buf = dev.allocate(40 * 4); // 40 elements, 64 threads write
  std::string e =
      launch_error(dev, kWriteN, "write_n", {64, 1, 1}, {Arg::of(buf), Arg::of(40u)}, "oob.ptx");
  expect_has(e, "kernel 'write_n'");
  expect_has(e, "oob.ptx:14");
  expect_has(e, "st.global.u32");
  expect_has(e, "block (0,0,0) thread (40,0,0)");
  expect_has(e, "out-of-bounds global write of 4 bytes");
  expect_has(e, "0 bytes past its end");
  // the device still works
  launch(dev, ptx_module(kWriteN), "write_n", {1, 1, 1}, {40, 1, 1}, {Arg::of(buf), Arg::of(40u)});
  EXPECT_EQ(download<uint32_t>(dev, buf, 40)[39], 39u);
}

TEST(EmuSanitizer, MisalignedAndUseAfterFree) {
  EmuDevice dev;
  auto buf = dev.allocate(1024);
  std::string e =
      launch_error(dev, kWriteN, "write_n", {32, 1, 1}, {Arg::of(buf + 2), Arg::of(0u)});
  expect_has(e, "misaligned global write");
  dev.free(buf);
  e = launch_error(dev, kWriteN, "write_n", {32, 1, 1}, {Arg::of(buf), Arg::of(0u)});
  expect_has(e, "use after free");
  expect_has(e, "freed allocation");
  EXPECT_THROW(dev.free(buf), device::DeviceError);
  EXPECT_THROW(dev.copy_to_host(nullptr, buf, 4), device::DeviceError);
}

TEST(EmuSanitizer, SharedOutOfBounds) {
  const char *k = R"(
.visible .entry sh()
{
  .shared .align 4 .b32 s[32];
  .reg .b32 %r<4>;
  mov.u32 %r1, %tid.x;
  shl.b32 %r2, %r1, 2;
  mov.u32 %r3, s;
  add.u32 %r2, %r2, %r3;
  st.shared.u32 [%r2], %r1;
  ret;
}
)";
  EmuDevice dev;
  std::string e = launch_error(dev, k, "sh", {64, 1, 1}, {});
  expect_has(e, "out-of-bounds shared write");
  expect_has(e, "thread (32,0,0)");
  expect_has(e, "128 bytes of shared memory");
}

TEST(EmuSanitizer, DivergentBarrierAndDeadlock) {
  const char *divergent = R"(
.visible .entry div_bar()
{
  .reg .b32 %r1;
  .reg .pred %p;
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p, %r1, 16;
  @%p bra SKIP;
  bar.sync 0;
SKIP:
  bar.sync 0;
  ret;
}
)";
  EmuDevice dev;
  std::string e = launch_error(dev, divergent, "div_bar", {64, 1, 1}, {}, "div.ptx");
  expect_has(e, "divergent barrier");
  expect_has(e, "div.ptx:14");
  expect_has(e, "kernel 'div_bar'");
  const char *deadlock = R"(
.visible .entry dead()
{
  .reg .b32 %r1;
  .reg .pred %p;
  mov.u32 %r1, %tid.x;
  setp.lt.u32 %p, %r1, 32;
  @%p bra OTHER;
  bar.sync 0;
  ret;
OTHER:
  bar.sync 1;
  ret;
}
)";
  e = launch_error(dev, deadlock, "dead", {64, 1, 1}, {});
  expect_has(e, "barrier deadlock");
}

TEST(EmuSanitizer, PartialWarpCollective) {
  const char *k = R"(
.visible .entry shfl_partial()
{
  .reg .b32 %r<3>;
  .reg .pred %p;
  mov.u32 %r1, %laneid;
  setp.lt.u32 %p, %r1, 20;
  @%p bra DONE;
  shfl.sync.bfly.b32 %r2, %r1, 1, 31, -1;
DONE:
  ret;
}
)";
  EmuDevice dev;
  std::string e = launch_error(dev, k, "shfl_partial", {32, 1, 1}, {});
  expect_has(e, "warp collective");
  expect_has(e, "0xfffff");
}

TEST(EmuSanitizer, ReadBeforeCpAsyncWait) {
  const char *k = R"(
.visible .entry early(.param .u64 src)
{
  .shared .align 16 .b8 buf[512];
  .reg .b32 %lane, %d, %v;
  .reg .b64 %p, %t;
  mov.u32 %lane, %laneid;
  mov.u32 %d, buf;
  shl.b32 %v, %lane, 4;
  add.u32 %d, %d, %v;
  ld.param.u64 %p, [src];
  mul.wide.u32 %t, %lane, 16;
  add.u64 %p, %p, %t;
  cp.async.cg.shared.global [%d], [%p], 16;
  cp.async.commit_group;
  ld.shared.u32 %v, [%d];
  cp.async.wait_group 0;
  ret;
}
)";
  EmuDevice dev;
  auto src = dev.allocate(512);
  std::string e = launch_error(dev, k, "early", {32, 1, 1}, {Arg::of(src)}, "early.ptx");
  expect_has(e, "early.ptx:19");
  expect_has(e, "cp.async that has not been waited for");
}

TEST(EmuSanitizer, InfiniteLoopHitsTheInstructionLimit) {
  const char *k = R"(
.visible .entry spin()
{
LOOP:
  bra.uni LOOP;
}
)";
  EmuDeviceOptions opt;
  opt.max_warp_instructions_per_cta = 100000;
  EmuDevice dev(opt);
  std::string e = launch_error(dev, k, "spin", {64, 1, 1}, {}, "spin.ptx");
  expect_has(e, "infinite loop");
  expect_has(e, "spin.ptx:8");
}

// Warp 0 polls a flag that nobody sets while warp 1 waits at the barrier: the launch fails at
// once (the library's default instruction limit, 2^34, would take hours), naming the spinning
// warp, its line and the barrier the other warp waits at. "At once" in steps, not seconds: the
// spin is found within kSpinFoundWithin warp instructions per block, far below the default limit
// (on one worker a handful of 2048-instruction rounds). With several workers a block's count
// also grows while it waits for the others to find theirs, by how long the system leaves them
// off the CPU: the bound there is 2^32, still a quarter of the default, reached only if the
// detector never fires.
constexpr uint64_t kSpinFoundWithin = uint64_t{1} << 20;
const char *kSpinOnFlag = R"(
.visible .entry spin_on_flag(.param .u64 flag)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<2>;
  .reg .pred %p<3>;
  ld.param.u64 %rd1, [flag];
  mov.u32 %r1, %tid.x;
  setp.ge.u32 %p1, %r1, 32;
  @%p1 bra WAIT;
SPIN:
  ld.volatile.global.u32 %r2, [%rd1];
  setp.eq.u32 %p2, %r2, 0;
  @%p2 bra SPIN;
WAIT:
  bar.sync 0;
  ret;
}
)";

TEST(EmuSanitizer, SpinWithoutProgressWhileOthersWaitAtABarrierFailsAtOnce) {
  struct Run {
    uint32_t blocks;
    unsigned workers; // 0: all hardware threads
    uint64_t instruction_limit;
  };
  for (const Run run :
       {Run{1, 1, kSpinFoundWithin}, Run{4, 1, kSpinFoundWithin}, Run{4, 0, uint64_t{1} << 32}}) {
    SCOPED_TRACE("blocks " + std::to_string(run.blocks) + ", workers " +
                 std::to_string(run.workers));
    EmuDeviceOptions opt;
    opt.worker_threads = run.workers;
    opt.max_warp_instructions_per_cta = run.instruction_limit;
    EmuDevice dev(opt);
    auto flag = dev.allocate(4);
    dev.memset(flag, 0, 4);
    std::string e;
    try {
      launch(dev, ptx_module(kSpinOnFlag), "spin_on_flag", {run.blocks, 1, 1}, {64, 1, 1},
             {Arg::of(flag)}, 0, "flag.ptx");
      ADD_FAILURE() << "the launch did not fail";
    } catch (const device::DeviceError &error) {
      EXPECT_EQ(error.kind(), device::ErrorKind::LaunchFailed);
      e = error.what();
    }
    expect_has(e, "kernel 'spin_on_flag'");
    expect_has(e, "warp 0 (threads 0..31)");
    expect_has(e, "spin without progress: warp 0 at line 1");
    expect_has(e, "loop(s) through the same state again and again without writing memory");
    expect_has(e, "warp 1 waits at barrier 0 (line 19, 32 of 64 threads arrived)");
    expect_has(e, "a flag that nobody sets");
    // found by the spin detector, within the instruction limit
    EXPECT_EQ(e.find("instruction limit"), std::string::npos) << e;
    // the line is one of the loop's: 15 ld, 16 setp, 17 bra
    const size_t at = e.find("warp 0 at line ");
    ASSERT_NE(at, std::string::npos);
    const int line = std::stoi(e.substr(at + 15));
    EXPECT_TRUE(line >= 15 && line <= 17) << e;
  }
}

// Block 1 polls a global flag (warp 0; warp 1 waits at the barrier) that block 0 sets after a
// long computation without any write: block 0 still runs, so block 1 is not judged spinning.
TEST(EmuSanitizer, PollingAFlagAnotherBlockSetsLaterIsNotASpin) {
  const char *k = R"(
.visible .entry poll(.param .u64 flag, .param .u64 out, .param .u32 work)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<3>;
  .reg .pred %p<4>;
  ld.param.u64 %rd1, [flag];
  ld.param.u64 %rd2, [out];
  ld.param.u32 %r5, [work];
  mov.u32 %r1, %tid.x;
  mov.u32 %r3, %ctaid.x;
  setp.ne.u32 %p3, %r3, 0;
  @%p3 bra CONSUMER;
  mov.u32 %r4, 0;
COUNT:
  add.u32 %r4, %r4, 1;
  setp.lt.u32 %p1, %r4, %r5;
  @%p1 bra COUNT;
  setp.ne.u32 %p2, %r1, 0;
  @%p2 bra DONE;
  st.volatile.global.u32 [%rd1], %r4;
  bra.uni DONE;
CONSUMER:
  setp.ge.u32 %p1, %r1, 32;
  @%p1 bra DONE;
SPIN:
  ld.volatile.global.u32 %r2, [%rd1];
  setp.eq.u32 %p2, %r2, 0;
  @%p2 bra SPIN;
  st.global.u32 [%rd2], %r2;
DONE:
  bar.sync 0;
  ret;
}
)";
  EmuDeviceOptions opt;
  opt.worker_threads = 2; // both blocks at once
  EmuDevice dev(opt);
  auto flag = dev.allocate(4);
  auto out = dev.allocate(4);
  dev.memset(flag, 0, 4);
  dev.memset(out, 0, 4);
  launch(dev, ptx_module(k), "poll", {2, 1, 1}, {64, 1, 1},
         {Arg::of(flag), Arg::of(out), Arg::of(300000u)});
  EXPECT_EQ(download<uint32_t>(dev, out, 1)[0], 300000u);
}

// Warp 0 polls a shared flag that warp 1 sets after a long computation, while warp 2 waits at
// the barrier: warp 1 makes progress, so warp 0 is not judged spinning.
TEST(EmuSanitizer, WaitingForAWarpOfTheBlockThatRunsIsNotASpin) {
  const char *k = R"(
.visible .entry intra(.param .u64 out, .param .u32 work)
{
  .shared .align 4 .u32 flag;
  .reg .b32 %r<8>;
  .reg .b64 %rd<2>;
  .reg .pred %p<3>;
  ld.param.u32 %r5, [work];
  mov.u32 %r1, %tid.x;
  shr.u32 %r3, %r1, 5;
  setp.eq.u32 %p1, %r3, 2;
  @%p1 bra DONE;
  setp.eq.u32 %p1, %r3, 1;
  @%p1 bra PRODUCER;
SPIN:
  ld.volatile.shared.u32 %r2, [flag];
  setp.eq.u32 %p2, %r2, 0;
  @%p2 bra SPIN;
  setp.ne.u32 %p2, %r1, 0;
  @%p2 bra DONE;
  ld.param.u64 %rd1, [out];
  st.global.u32 [%rd1], %r2;
  bra.uni DONE;
PRODUCER:
  mov.u32 %r4, 0;
COUNT:
  add.u32 %r4, %r4, 1;
  setp.lt.u32 %p2, %r4, %r5;
  @%p2 bra COUNT;
  setp.ne.u32 %p2, %r1, 32;
  @%p2 bra DONE;
  atom.shared.exch.b32 %r6, [flag], %r4;
DONE:
  bar.sync 0;
  ret;
}
)";
  EmuDevice dev;
  auto out = dev.allocate(4);
  dev.memset(out, 0, 4);
  launch(dev, ptx_module(k), "intra", {1, 1, 1}, {96, 1, 1}, {Arg::of(out), Arg::of(200000u)});
  EXPECT_EQ(download<uint32_t>(dev, out, 1)[0], 200000u);
}

// As above, but the producer's registers repeat (it keeps only a predicate of the counter it
// increments in shared memory): its progress is in memory only, which the writes show.
TEST(EmuSanitizer, ProgressSeenOnlyInMemoryIsNotASpin) {
  const char *k = R"(
.visible .entry counter(.param .u64 out, .param .u32 work)
{
  .shared .align 4 .u32 flag;
  .shared .align 4 .u32 count;
  .reg .b32 %r<10>;
  .reg .b64 %rd<2>;
  .reg .pred %p<3>;
  ld.param.u32 %r5, [work];
  mov.u32 %r1, %tid.x;
  shr.u32 %r3, %r1, 5;
  setp.eq.u32 %p1, %r3, 2;
  @%p1 bra DONE;
  setp.eq.u32 %p1, %r3, 1;
  @%p1 bra PRODUCER;
SPIN:
  ld.volatile.shared.u32 %r2, [flag];
  setp.eq.u32 %p2, %r2, 0;
  @%p2 bra SPIN;
  setp.ne.u32 %p2, %r1, 0;
  @%p2 bra DONE;
  ld.param.u64 %rd1, [out];
  st.global.u32 [%rd1], %r2;
  bra.uni DONE;
PRODUCER:
  setp.ne.u32 %p2, %r1, 32;
  @%p2 bra DONE;
COUNT:
  atom.shared.add.u32 %r9, [count], 1;
  setp.lt.u32 %p2, %r9, %r5;
  mov.u32 %r9, 0;
  @%p2 bra COUNT;
  atom.shared.exch.b32 %r6, [flag], 7;
DONE:
  bar.sync 0;
  ret;
}
)";
  EmuDeviceOptions opt;
  opt.worker_threads = 1;
  EmuDevice dev(opt);
  auto out = dev.allocate(4);
  dev.memset(out, 0, 4);
  launch(dev, ptx_module(k), "counter", {1, 1, 1}, {96, 1, 1}, {Arg::of(out), Arg::of(100000u)});
  EXPECT_EQ(download<uint32_t>(dev, out, 1)[0], 7u);
}

} // namespace
} // namespace tcjit::emu::test

namespace tcjit::emu::test {
namespace {

// Each thread writes its word of a shared array, then reads its neighbour's (thread t reads
// t + `shift` modulo the block), with `sync` between them ("" for none); the result goes to out.
std::string neighbour_kernel(const std::string &sync, int shift, const std::string &store = "u32") {
  return R"(
.visible .entry neighbour(.param .u64 out)
{
  .shared .align 4 .b8 tile[256];
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ntid.x;
  shl.b32 %r3, %r1, 2;
  mov.u32 %r4, tile;
  add.u32 %r5, %r4, %r3;
  st.shared.)" +
         store +
         R"( [%r5], %r1;
  )" + sync +
         R"(
  add.u32 %r6, %r1, )" +
         std::to_string(shift) + R"(;
  rem.u32 %r6, %r6, %r2;
  shl.b32 %r6, %r6, 2;
  add.u32 %r6, %r4, %r6;
  ld.shared.u32 %r7, [%r6];
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r7;
  ret;
}
)";
}

// The tests that plant races check every block.
EmuDeviceOptions all_blocks() {
  EmuDeviceOptions opt;
  opt.racecheck = RaceCheck::All;
  return opt;
}

TEST(EmuRacecheck, AReadOfAnotherThreadsWriteWithoutABarrierIsARace) {
  EmuDevice dev(all_blocks());
  auto out = dev.allocate(64 * 4);
  const std::string e = launch_error(dev, neighbour_kernel("", 33), "neighbour", {64, 1, 1},
                                     {Arg::of(out)}, "race.ptx");
  expect_has(e, "shared-memory race (racecheck)");
  expect_has(e, "ld.shared.u32");
  expect_has(e, "race.ptx:15 (st.shared.u32)"); // the other side of the race, named
  expect_has(e, "have no bar.sync between them");
  // With the barrier: no race, and every thread reads its neighbour's value.
  launch(dev, ptx_module(neighbour_kernel("bar.sync 0;", 33)), "neighbour", {1, 1, 1}, {64, 1, 1},
         {Arg::of(out)});
  const auto got = download<uint32_t>(dev, out, 64);
  for (uint32_t t = 0; t < 64; ++t)
    EXPECT_EQ(got[t], (t + 33) % 64);
}

TEST(EmuRacecheck, WithinOneWarpBarWarpSyncOrdersTheLanes) {
  EmuDevice dev(all_blocks());
  auto out = dev.allocate(32 * 4);
  // Lanes of one warp reading each other's words: a race without bar.warp.sync, none with it.
  const std::string e =
      launch_error(dev, neighbour_kernel("", 1), "neighbour", {32, 1, 1}, {Arg::of(out)});
  expect_has(e, "shared-memory race (racecheck)");
  launch(dev, ptx_module(neighbour_kernel("bar.warp.sync -1;", 1)), "neighbour", {1, 1, 1},
         {32, 1, 1}, {Arg::of(out)});
  EXPECT_EQ(download<uint32_t>(dev, out, 32)[31], 0u);
}

TEST(EmuRacecheck, DifferentBytesOfOneWordAreNotARace) {
  // Thread t stores 2 bytes at 2t (two threads per 4-byte word), then reads its own 2 bytes back.
  const std::string body = R"(
.visible .entry halves(.param .u64 out)
{
  .shared .align 4 .b8 tile[128];
  .reg .b16 %h<2>;
  .reg .b32 %r<6>;
  .reg .b64 %rd<4>;
  mov.u32 %r1, %tid.x;
  cvt.u16.u32 %h1, %r1;
  shl.b32 %r2, %r1, 1;
  mov.u32 %r3, tile;
  add.u32 %r4, %r3, %r2;
  st.shared.u16 [%r4], %h1;
  ld.shared.u16 %h1, [%r4];
  cvt.u32.u16 %r5, %h1;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r5;
  ret;
}
)";
  EmuDevice dev(all_blocks());
  auto out = dev.allocate(64 * 4);
  launch(dev, ptx_module(body), "halves", {1, 1, 1}, {64, 1, 1}, {Arg::of(out)});
  EXPECT_EQ(download<uint32_t>(dev, out, 64)[63], 63u);
}

// Block `racy_block` of the grid reads its neighbour thread's word without a barrier (thread t
// reads word (t + 33) % 64); every other block reads its own words.
const char *kRaceInOneBlock = R"(
.visible .entry race_in_block(.param .u64 out, .param .u32 racy_block)
{
  .shared .align 4 .b8 tile[256];
  .reg .pred %p<2>;
  .reg .b32 %r<12>;
  .reg .b64 %rd<4>;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  ld.param.u32 %r3, [racy_block];
  setp.eq.u32 %p1, %r2, %r3;
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
  shl.b32 %r10, %r2, 6;
  add.u32 %r10, %r10, %r1;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r10, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r9;
  ret;
}
)";

std::string race_in_block_error(EmuDeviceOptions opt, uint32_t racy_block) {
  EmuDevice dev(opt);
  auto out = dev.allocate(64 * 64 * 4);
  try {
    launch(dev, ptx_module(kRaceInOneBlock), "race_in_block", {64, 1, 1}, {64, 1, 1},
           {Arg::of(out), Arg::of(racy_block)});
  } catch (const device::DeviceError &e) {
    return e.what();
  }
  return "";
}

TEST(EmuRacecheck, AllChecksEveryBlockTheDefaultASample) {
  unsetenv("TCJIT_EMU_RACECHECK");
  // Block 5 of 64 is outside the sample (the first block, every 16th, the grid's corners):
  // found with RaceCheck::All (or TCJIT_EMU_RACECHECK=all), not by default.
  const std::string all = race_in_block_error(all_blocks(), 5);
  expect_has(all, "shared-memory race (racecheck)");
  expect_has(all, "block (5,0,0)");
  EXPECT_EQ(race_in_block_error({}, 5), "");
  setenv("TCJIT_EMU_RACECHECK", "all", 1);
  expect_has(race_in_block_error({}, 5), "block (5,0,0)");
  EmuDeviceOptions sampled;
  sampled.racecheck = RaceCheck::Sampled; // the option wins over the environment
  EXPECT_EQ(race_in_block_error(sampled, 5), "");
  unsetenv("TCJIT_EMU_RACECHECK");
  // Blocks in the sample are checked by default: the first, every 16th and the last.
  for (uint32_t b : {0u, 16u, 48u, 63u})
    expect_has(race_in_block_error({}, b), "block (" + std::to_string(b) + ",0,0)");
}

TEST(EmuRacecheck, AnUnknownEnvironmentValueIsAnErrorNamingIt) {
  setenv("TCJIT_EMU_RACECHECK", "everything", 1);
  EmuDevice dev{EmuDeviceOptions{}};
  auto out = dev.allocate(64 * 64 * 4);
  std::string error;
  try {
    launch(dev, ptx_module(kRaceInOneBlock), "race_in_block", {64, 1, 1}, {64, 1, 1},
           {Arg::of(out), Arg::of(uint32_t{5})});
  } catch (const std::exception &e) {
    error = e.what();
  }
  unsetenv("TCJIT_EMU_RACECHECK");
  expect_has(error, "TCJIT_EMU_RACECHECK='everything'");
  expect_has(error, "all");
  expect_has(error, "sampled");
}

} // namespace
} // namespace tcjit::emu::test
