// Control flow: divergence and reconvergence, divergent loops, early exit, predication,
// barriers with several warps, calls to .func.
#include <gtest/gtest.h>

#include <numeric>

#include "tests/emu/emu_test_util.h"

namespace tcjit::emu::test {
namespace {

// out[tid] = collatz steps of tid+1 (divergent loop with per-lane trip counts), then a
// warp-wide value computed after reconvergence.
const char *kCollatz = R"(
.visible .entry collatz(.param .u64 out)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  .reg .pred %p<4>;
  mov.u32 %r1, %tid.x;
  add.u32 %r2, %r1, 1;
  mov.u32 %r3, 0;
LOOP:
  setp.eq.u32 %p1, %r2, 1;
  @%p1 bra DONE;
  and.b32 %r4, %r2, 1;
  setp.eq.u32 %p2, %r4, 0;
  @%p2 bra EVEN;
  mad.lo.u32 %r2, %r2, 3, 1;
  bra.uni NEXT;
EVEN:
  shr.u32 %r2, %r2, 1;
NEXT:
  add.u32 %r3, %r3, 1;
  bra LOOP;
DONE:
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r3;
  ret;
}
)";

uint32_t collatz(uint32_t n) {
  uint32_t s = 0;
  while (n != 1) {
    n = (n & 1) ? 3 * n + 1 : n / 2;
    ++s;
  }
  return s;
}

TEST(EmuControl, DivergentLoops) {
  EmuDevice dev;
  auto out = dev.allocate(100 * 4);
  launch(dev, ptx_module(kCollatz), "collatz", {1, 1, 1}, {100, 1, 1}, {Arg::of(out)});
  auto r = download<uint32_t>(dev, out, 100);
  for (uint32_t i = 0; i < 100; ++i)
    EXPECT_EQ(r[i], collatz(i + 1)) << i;
}

// Early exit of some lanes, then a barrier and shared-memory exchange among the rest, then a
// predicated store.
TEST(EmuControl, EarlyExitBarrierAndPredication) {
  const char *k = R"(
.visible .entry k(.param .u64 out, .param .u32 n)
{
  .shared .align 4 .b32 buf[128];
  .reg .b32 %r<10>;
  .reg .b64 %rd<5>;
  .reg .pred %p<3>;
  mov.u32 %r1, %tid.x;
  ld.param.u32 %r2, [n];
  setp.ge.u32 %p1, %r1, %r2;
  @%p1 exit;
  mov.u32 %r3, buf;
  shl.b32 %r4, %r1, 2;
  add.u32 %r5, %r3, %r4;
  mul.lo.u32 %r6, %r1, %r1;
  st.shared.u32 [%r5], %r6;
  bar.sync 0;
  add.u32 %r7, %r1, 1;
  rem.u32 %r7, %r7, %r2;
  shl.b32 %r7, %r7, 2;
  add.u32 %r7, %r3, %r7;
  ld.shared.u32 %r8, [%r7];
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd3, %rd1, %rd2;
  and.b32 %r9, %r1, 1;
  setp.eq.u32 %p2, %r9, 0;
  @%p2 st.global.u32 [%rd3], %r8;
  @!%p2 st.global.u32 [%rd3], %r1;
  ret;
}
)";
  EmuDevice dev;
  const uint32_t n = 77;
  auto out = dev.allocate(128 * 4);
  dev.memset(out, 0xff, 128 * 4);
  launch(dev, ptx_module(k), "k", {1, 1, 1}, {128, 1, 1}, {Arg::of(out), Arg::of(n)});
  auto r = download<uint32_t>(dev, out, 128);
  for (uint32_t i = 0; i < 128; ++i) {
    uint32_t expect = i >= n ? 0xffffffffu : (i % 2 == 0 ? ((i + 1) % n) * ((i + 1) % n) : i);
    EXPECT_EQ(r[i], expect) << i;
  }
}

// Blocks laid out out of order (the join point with bar.sync and shfl.sync comes before the
// else-block): lanes that reach the collective first wait for the others (no false positive).
TEST(EmuControl, CollectivesAtJoinPointsLaidOutOfOrder) {
  const char *k = R"(
.visible .entry k(.param .u64 out)
{
  .shared .align 4 .b32 buf[64];
  .reg .b32 %r<10>;
  .reg .b64 %rd<4>;
  .reg .pred %p;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, buf;
  shl.b32 %r3, %r1, 2;
  add.u32 %r3, %r2, %r3;
  and.b32 %r4, %r1, 31;
  setp.lt.u32 %p, %r4, 16;
  @%p bra ELSE;
  mul.lo.u32 %r5, %r1, 3;
  st.shared.u32 [%r3], %r5;
JOIN:
  bar.sync 0;
  xor.b32 %r6, %r1, 1;
  shl.b32 %r6, %r6, 2;
  add.u32 %r6, %r2, %r6;
  ld.shared.u32 %r7, [%r6];
  shfl.sync.bfly.b32 %r8, %r7, 16, 31, -1;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r8;
  ret;
ELSE:
  mul.lo.u32 %r5, %r1, 5;
  st.shared.u32 [%r3], %r5;
  bra.uni JOIN;
}
)";
  EmuDevice dev;
  auto out = dev.allocate(64 * 4);
  launch(dev, ptx_module(k), "k", {1, 1, 1}, {64, 1, 1}, {Arg::of(out)});
  auto r = download<uint32_t>(dev, out, 64);
  auto stored = [](uint32_t t) { return (t % 32) < 16 ? t * 5 : t * 3; };
  for (uint32_t t = 0; t < 64; ++t) {
    uint32_t src_lane = t ^ 16; // shfl partner
    EXPECT_EQ(r[t], stored(src_lane ^ 1)) << t;
  }
}

TEST(EmuControl, CallsToFunctions) {
  const char *k = R"(
.func (.param .b32 ret0) square_plus(.param .b32 x, .param .b32 y)
{
  .reg .b32 %r<4>;
  ld.param.b32 %r1, [x];
  ld.param.b32 %r2, [y];
  mad.lo.s32 %r3, %r1, %r1, %r2;
  st.param.b32 [ret0], %r3;
  ret;
}
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<6>;
  .reg .b64 %rd<4>;
  .reg .pred %p1;
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, 0;
  and.b32 %r5, %r1, 1;
  setp.eq.u32 %p1, %r5, 1;
  @%p1 bra SKIP;
  {
    .param .b32 param0;
    st.param.b32 [param0], %r1;
    .param .b32 param1;
    st.param.b32 [param1], 7;
    .param .b32 retval0;
    call.uni (retval0), square_plus, (param0, param1);
    ld.param.b32 %r2, [retval0];
  }
SKIP:
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r2;
  ret;
}
)";
  EmuDevice dev;
  auto out = dev.allocate(64 * 4);
  launch(dev, ptx_module(k), "k", {1, 1, 1}, {64, 1, 1}, {Arg::of(out)});
  auto r = download<uint32_t>(dev, out, 64);
  for (uint32_t i = 0; i < 64; ++i)
    EXPECT_EQ(r[i], i % 2 ? 0u : i * i + 7) << i;
}

TEST(EmuControl, MultiDimensionalGridAndBlock) {
  const char *k = R"(
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<20>;
  .reg .b64 %rd<4>;
  mov.u32 %r1, %tid.x;  mov.u32 %r2, %tid.y;  mov.u32 %r3, %tid.z;
  mov.u32 %r4, %ntid.x; mov.u32 %r5, %ntid.y; mov.u32 %r6, %ntid.z;
  mov.u32 %r7, %ctaid.x; mov.u32 %r8, %ctaid.y; mov.u32 %r9, %ctaid.z;
  mov.u32 %r10, %nctaid.x; mov.u32 %r11, %nctaid.y;
  // linear block id and thread id
  mad.lo.u32 %r12, %r9, %r11, %r8;
  mad.lo.u32 %r12, %r12, %r10, %r7;
  mad.lo.u32 %r13, %r3, %r5, %r2;
  mad.lo.u32 %r13, %r13, %r4, %r1;
  mul.lo.u32 %r14, %r4, %r5;
  mul.lo.u32 %r14, %r14, %r6;
  mad.lo.u32 %r15, %r12, %r14, %r13;
  shl.b32 %r16, %r9, 16;
  shl.b32 %r17, %r3, 8;
  or.b32 %r16, %r16, %r17;
  or.b32 %r16, %r16, %r1;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r15, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r16;
  ret;
}
)";
  EmuDevice dev;
  const device::Dim3 grid{3, 2, 2}, block{5, 3, 2};
  const size_t total = grid.count() * block.count();
  auto out = dev.allocate(total * 4);
  launch(dev, ptx_module(k), "k", grid, block, {Arg::of(out)});
  auto r = download<uint32_t>(dev, out, total);
  size_t i = 0;
  for (uint32_t bz = 0; bz < 2; ++bz)
    for (uint32_t by = 0; by < 2; ++by)
      for (uint32_t bx = 0; bx < 3; ++bx)
        for (uint32_t tz = 0; tz < 2; ++tz)
          for (uint32_t ty = 0; ty < 3; ++ty)
            for (uint32_t tx = 0; tx < 5; ++tx)
              EXPECT_EQ(r[i++], (bz << 16) | (tz << 8) | tx);
}

} // namespace
} // namespace tcjit::emu::test
