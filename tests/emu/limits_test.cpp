// The loader's declaration limits (registers, .local, .shared per .target) and each kernel's own
// shared variables; the wall-clock limit of a launch. Errors name the file, the line and the limit.
#include <gtest/gtest.h>

#include <chrono>

#include "runtime/emu/program.h"
#include "tests/emu/emu_test_util.h"

namespace tcjit::emu::test {
namespace {

// The loader's error for `ptx`, which must not load.
std::string refused(const std::string &ptx) {
  std::string error = load_error(ptx);
  if (error.empty())
    ADD_FAILURE() << "the module loaded";
  return error;
}

void expect_has(const std::string &msg, const std::string &part) {
  EXPECT_NE(msg.find(part), std::string::npos) << "missing '" << part << "' in: " << msg;
}

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// "At once": the declaration is refused by its count before any of its registers is created (the
// message's total is the declared count); a loader that created them first would allocate 2^31
// names and fail with bad_alloc or be killed, not with this error.
TEST(EmuLimits, HugeRegisterDeclarationIsRejectedAtOnce) {
  std::string e = refused(ptx_module(R"(
.visible .entry k()
{
  .reg .b32 %r<2147483647>;
  ret;
}
)"));
  expect_has(e, "kernel.ptx:7: too many .b32 registers: '%r<2147483647>'");
  expect_has(e, "brings function 'k' to 2147483647;");
  expect_has(e, "at most 65536 registers of one type per function");
  // 2^32 does not wrap to 0 (the count was truncated to 32 bits)
  e = refused(ptx_module(".visible .entry k() { .reg .pred %p<4294967296>; ret; }"));
  expect_has(e, "too many .pred registers");
  // the per-type count adds up over declarations
  e = refused(ptx_module(".visible .entry k() { .reg .f32 %f<60000>; .reg .f32 %g<6000>; ret; }"));
  expect_has(e, "'%g<6000>' brings function 'k' to 66000");
}

TEST(EmuLimits, RegistersAtTheCapLoadAndTheModuleTotalIsBounded) {
  EmuDevice dev;
  auto m = dev.load_module(
      ptx_module(".visible .entry k() { .reg .b32 %r<65536>; mov.u32 %r65535, 1; ret; }"), "k.ptx");
  EXPECT_GE(dev.kernel_info(dev.get_function(m, "k")).registers_per_thread, 65536u);
  std::string e = refused(ptx_module(R"(
.visible .entry k()
{
  .reg .b32 %r<65536>;
  .reg .b64 %rd<65000>;
  .reg .f32 %f<1000>;
  ret;
}
)"));
  expect_has(e, "kernel.ptx:9: too many registers: '%f<1000>' brings the module to 131563");
  expect_has(e, "at most 131072 registers per module");
}

TEST(EmuLimits, HugeLocalArrayIsRejected) {
  std::string e = refused(ptx_module(R"(
.visible .entry k()
{
  .local .align 4 .b8 buf[4294967296];
  ret;
}
)"));
  expect_has(e, "kernel.ptx:7: .local variable 'buf' is 4294967296 bytes (4194304 KiB)");
  expect_has(e, "the limit is 524288 bytes (512 KiB) of local memory per thread");
  // dimensions whose product overflows 64 bits
  e = refused(ptx_module(".visible .entry k() { .local .b32 buf[4294967296][4294967296]; ret; }"));
  expect_has(e, ".local variable 'buf' is 18446744073709551615 bytes");
  // 512 KiB fits; two arrays that together exceed it do not
  EmuDevice dev;
  dev.load_module(ptx_module(".visible .entry k() { .local .b8 buf[524288]; ret; }"), "k.ptx");
  e = refused(ptx_module(".visible .entry k() { .local .b8 a[524288]; .local .b8 b[1]; ret; }"));
  expect_has(e, ".local variable 'b' is 1 bytes (at offset 524288");
}

TEST(EmuLimits, SharedBeyondTheTargetsMaximumIsRejected) {
  // sm_90: 227 KiB per block
  EmuDevice dev;
  dev.load_module(ptx_module(".shared .b8 s[232448];\n.visible .entry k() { ret; }", "sm_90"),
                  "k.ptx");
  std::string e =
      refused(ptx_module(".shared .b8 s[232449];\n.visible .entry k() { ret; }", "sm_90"));
  expect_has(e, "kernel.ptx:4: .shared variable 's' is 232449 bytes; sm_90 allows at most "
                "232448 bytes (227 KiB) of shared memory per block");
  // sm_80: 163 KiB; the kernel's total counts
  e = refused(ptx_module(R"(
.visible .entry k()
{
  .shared .b8 a[100000];
  .shared .b8 b[100000];
  ret;
}
)"));
  expect_has(e, "kernel.ptx:8: kernel 'k' needs 200000 bytes of static shared memory with 'b'; "
                "sm_80 allows at most 166912 bytes (163 KiB) per block");
  EXPECT_EQ(max_shared_bytes_for_target("sm_75"), 64u * 1024);
  EXPECT_EQ(max_shared_bytes_for_target("sm_86"), 99u * 1024);
  EXPECT_EQ(max_shared_bytes_for_target("sm_90a"), 227u * 1024);
}

const char *kTwoKernels = R"(
.shared .align 4 .b32 sa[256];
.shared .align 4 .b32 sb[1024];
.shared .align 4 .b32 sc[16];

.func touch_sc()
{
  .reg .b32 %r<2>;
  mov.u32 %r1, sc;
  st.shared.u32 [%r1], 3;
  ret;
}

.visible .entry ka(.param .u32 off)
{
  .reg .b32 %r<4>;
  mov.u32 %r1, sa;
  ld.param.u32 %r2, [off];
  add.u32 %r3, %r1, %r2;
  st.shared.u32 [%r3], 7;
  ret;
}

.visible .entry kb()
{
  .shared .align 8 .b64 own[4];
  .reg .b32 %r<2>;
  mov.u32 %r1, sb;
  st.shared.u32 [%r1], 1;
  mov.u32 %r1, own;
  st.shared.u32 [%r1], 2;
  ret;
}

.visible .entry kc()
{
  call touch_sc, ();
  ret;
}
)";

TEST(EmuLimits, EachKernelGetsOnlyTheSharedVariablesItUses) {
  EmuDevice dev;
  auto m = dev.load_module(ptx_module(kTwoKernels), "two.ptx");
  EXPECT_EQ(dev.kernel_info(dev.get_function(m, "ka")).static_shared_bytes, 1024u);
  EXPECT_EQ(dev.kernel_info(dev.get_function(m, "kb")).static_shared_bytes, 4096u + 32);
  // through a call
  EXPECT_EQ(dev.kernel_info(dev.get_function(m, "kc")).static_shared_bytes, 64u);
  launch(dev, ptx_module(kTwoKernels), "kb", {1, 1, 1}, {1, 1, 1}, {});
  launch(dev, ptx_module(kTwoKernels), "kc", {1, 1, 1}, {1, 1, 1}, {});
  launch(dev, ptx_module(kTwoKernels), "ka", {1, 1, 1}, {1, 1, 1}, {Arg::of(uint32_t{1020})});
  // one past ka's array: the memory another kernel's array had; out of bounds for ka
  try {
    launch(dev, ptx_module(kTwoKernels), "ka", {1, 1, 1}, {1, 1, 1}, {Arg::of(uint32_t{1024})}, 0,
           "two.ptx");
    ADD_FAILURE() << "the access past sa was not detected";
  } catch (const device::DeviceError &e) {
    expect_has(e.what(), "out-of-bounds shared write");
    expect_has(e.what(), "1024 bytes of shared memory (static 1024, dynamic 0)");
  }
}

TEST(EmuLimits, DynamicSharedFollowsTheKernelsOwnStatics) {
  // k1 has 16 static bytes, k2 4096: k1's extern array starts right after its own variables
  const std::string ptx = ptx_module(R"(
.extern .shared .align 16 .b8 dyn[];
.shared .align 4 .b32 big[1024];
.visible .entry k1(.param .u64 out)
{
  .shared .align 4 .b32 small[4];
  .reg .b32 %r<3>;
  .reg .b64 %rd<2>;
  mov.u32 %r1, dyn;
  mov.u32 %r2, small;
  st.shared.u32 [%r2], 0;
  ld.param.u64 %rd1, [out];
  st.global.u32 [%rd1], %r1;
  ret;
}
.visible .entry k2()
{
  .reg .b32 %r<2>;
  mov.u32 %r1, big;
  st.shared.u32 [%r1+4092], 1;
  ret;
}
)");
  EmuDevice dev;
  auto m = dev.load_module(ptx, "dyn.ptx");
  EXPECT_EQ(dev.kernel_info(dev.get_function(m, "k1")).static_shared_bytes, 16u);
  EXPECT_EQ(dev.kernel_info(dev.get_function(m, "k2")).static_shared_bytes, 4096u);
  device::DevicePtr out = upload<uint32_t>(dev, {99});
  launch(dev, ptx, "k1", {1, 1, 1}, {1, 1, 1}, {Arg::of(out)}, 64);
  EXPECT_EQ(download<uint32_t>(dev, out, 1)[0], 16u);
}

TEST(EmuLimits, WallClockLimitStopsASpinningLaunch) {
  const char *spin = R"(
.visible .entry spin()
{
LOOP:
  bra.uni LOOP;
}
)";
  EmuDeviceOptions opt;
  opt.timeout_seconds = 0.5;
  opt.max_warp_instructions_per_cta = uint64_t{1} << 50;
  EmuDevice dev(opt);
  const auto t = Clock::now();
  try {
    launch(dev, ptx_module(spin), "spin", {4, 1, 1}, {64, 1, 1}, {}, 0, "spin.ptx");
    ADD_FAILURE() << "the launch did not stop";
  } catch (const device::DeviceError &e) {
    EXPECT_EQ(e.kind(), device::ErrorKind::LaunchFailed);
    expect_has(e.what(), "time limit reached: the launch ran longer than 0.5 s");
    expect_has(e.what(), "spin.ptx:8");
    expect_has(e.what(), "--timeout");
  }
  // The limit is honoured, not cut short (a lower bound: load only lengthens it); the instruction
  // limit (2^50) is out of reach, so the time limit is what stopped it.
  EXPECT_GE(seconds_since(t), 0.5);
}

} // namespace
} // namespace tcjit::emu::test
