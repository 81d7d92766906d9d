// Counters: bank conflicts of shared tiles, global sectors of coalesced and strided access,
// instruction classes.
#include <gtest/gtest.h>

#include "tests/emu/emu_test_util.h"

namespace tcjit::emu::test {
namespace {

// One warp: each lane writes row `lane` of a 32x32 f32 tile, then reads either along a row
// (tile[r][lane], conflict-free) or down a column (tile[lane][c], 32-way conflicts).
std::string tile_kernel(bool column) {
  std::string addr = column ? "mad.lo.u32 %a, %lane, 128, %c4;" : "mad.lo.u32 %a, %c, 128, %lane4;";
  return ptx_module(R"(
.visible .entry tile(.param .u64 out)
{
  .shared .align 4 .f32 t[1024];
  .reg .b32 %lane, %lane4, %c, %c4, %a, %base;
  .reg .f32 %v, %acc;
  .reg .pred %more;
  .reg .b64 %p, %off;
  mov.u32 %lane, %laneid;
  shl.b32 %lane4, %lane, 2;
  mov.u32 %base, t;
  mov.f32 %acc, 0f00000000;
  mov.u32 %c, 0;
LOOP:
  shl.b32 %c4, %c, 2;
  )" + addr + R"(
  add.u32 %a, %a, %base;
  ld.shared.f32 %v, [%a];
  add.f32 %acc, %acc, %v;
  add.u32 %c, %c, 1;
  setp.lt.u32 %more, %c, 32;
  @%more bra LOOP;
  ld.param.u64 %p, [out];
  mul.wide.u32 %off, %lane, 4;
  add.u64 %p, %p, %off;
  st.global.f32 [%p], %acc;
  ret;
}
)");
}

TEST(EmuCounters, SharedBankConflicts) {
  EmuDevice dev;
  auto out = dev.allocate(32 * 4);
  launch(dev, tile_kernel(false), "tile", {1, 1, 1}, {32, 1, 1}, {Arg::of(out)});
  LaunchCounters rows = dev.last_counters();
  EXPECT_EQ(rows.shared_load_requests, 32u);
  EXPECT_EQ(rows.shared_wavefronts, 32u);
  EXPECT_EQ(rows.shared_bank_conflicts, 0u);
  launch(dev, tile_kernel(true), "tile", {1, 1, 1}, {32, 1, 1}, {Arg::of(out)});
  LaunchCounters cols = dev.last_counters();
  EXPECT_EQ(cols.shared_load_requests, 32u);
  EXPECT_EQ(cols.shared_wavefronts, 32u * 32u);
  EXPECT_EQ(cols.shared_bank_conflicts, 32u * 31u);
}

std::string copy_kernel(int stride) {
  return ptx_module(R"(
.visible .entry copy(.param .u64 in, .param .u64 out)
{
  .reg .b32 %tid, %i;
  .reg .f32 %v;
  .reg .b64 %p, %q, %off;
  mov.u32 %tid, %tid.x;
  mul.lo.u32 %i, %tid, )" +
                    std::to_string(stride) + R"(;
  ld.param.u64 %p, [in];
  mul.wide.u32 %off, %i, 4;
  add.u64 %p, %p, %off;
  ld.global.f32 %v, [%p];
  ld.param.u64 %q, [out];
  mul.wide.u32 %off, %tid, 4;
  add.u64 %q, %q, %off;
  st.global.f32 [%q], %v;
  ret;
}
)");
}

TEST(EmuCounters, GlobalSectorsCoalescedVsStrided) {
  EmuDevice dev;
  auto in = dev.allocate(32 * 32 * 4);
  auto out = dev.allocate(32 * 4);
  launch(dev, copy_kernel(1), "copy", {1, 1, 1}, {32, 1, 1}, {Arg::of(in), Arg::of(out)});
  LaunchCounters c = dev.last_counters();
  EXPECT_EQ(c.global_load_requests, 1u);
  EXPECT_EQ(c.global_load_sectors, 4u);
  EXPECT_DOUBLE_EQ(c.global_load_efficiency(), 1.0);
  EXPECT_EQ(c.global_store_sectors, 4u);
  EXPECT_EQ(c.global_bytes_read, 128u);
  launch(dev, copy_kernel(32), "copy", {1, 1, 1}, {32, 1, 1}, {Arg::of(in), Arg::of(out)});
  c = dev.last_counters();
  EXPECT_EQ(c.global_load_sectors, 32u);
  EXPECT_DOUBLE_EQ(c.global_load_sectors_per_request(), 32.0);
  EXPECT_DOUBLE_EQ(c.global_load_efficiency(), 4.0 / 32.0);
  EXPECT_EQ(c.global_store_sectors, 4u);
  // instruction classes of this straight-line kernel (one warp, 11 instructions)
  EXPECT_EQ(c.warp_instructions, 11u);
  EXPECT_EQ(c.warp_instructions_by_class[static_cast<size_t>(InstrClass::Memory)], 4u);
  EXPECT_EQ(c.warp_instructions_by_class[static_cast<size_t>(InstrClass::Control)], 1u);
  EXPECT_EQ(c.ctas, 1u);
  EXPECT_EQ(c.threads, 32u);
  EXPECT_NE(format_counters(c).find("global load sectors"), std::string::npos);
}

TEST(EmuCounters, BroadcastLoadCountsItsBytesOnce) {
  // stride 0: all 32 lanes read the same 4 bytes: one sector, 4 useful bytes, efficiency 1/8.
  EmuDevice dev;
  auto in = dev.allocate(32 * 4);
  auto out = dev.allocate(32 * 4);
  launch(dev, copy_kernel(0), "copy", {1, 1, 1}, {32, 1, 1}, {Arg::of(in), Arg::of(out)});
  const LaunchCounters c = dev.last_counters();
  EXPECT_EQ(c.global_load_sectors, 1u);
  EXPECT_EQ(c.global_bytes_read, 4u);
  EXPECT_DOUBLE_EQ(c.global_load_efficiency(), 4.0 / 32.0);
}

} // namespace
} // namespace tcjit::emu::test
