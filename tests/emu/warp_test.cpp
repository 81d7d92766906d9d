// Warp collectives and atomics.
#include <gtest/gtest.h>

#include "tests/emu/emu_test_util.h"

namespace tcjit::emu::test {
namespace {

std::vector<uint32_t> per_lane(const std::string &snippet) {
  std::vector<std::array<uint64_t, 3>> rows(32);
  for (uint64_t l = 0; l < 32; ++l)
    rows[l] = {l * 10 + 1, l % 3 == 0 ? 1u : 0u, 0};
  auto r = run_lanes(snippet, "b32", rows);
  return {r.begin(), r.end()};
}

TEST(EmuWarp, ShuffleModesAndWidths) {
  auto up = per_lane("shfl.sync.up.b32 %rd, %ra, 3, 0, -1;");
  auto down = per_lane("shfl.sync.down.b32 %rd, %ra, 5, 31, 0xffffffff;");
  auto bfly = per_lane("shfl.sync.bfly.b32 %rd, %ra, 6, 31, -1;");
  auto idx = per_lane("shfl.sync.idx.b32 %rd, %ra, 7, 31, -1;");
  // width 8 (segmask 0x18 << 8): idx within each group of 8, down clamped at the group end
  auto idx8 = per_lane("shfl.sync.idx.b32 %rd, %ra, 2, 0x1807, -1;");
  auto down8 = per_lane("shfl.sync.down.b32 %rd, %ra, 3, 0x1807, -1;");
  auto pred = per_lane(
      ".reg .pred %ok; shfl.sync.down.b32 %rd|%ok, %ra, 5, 31, -1; selp.u32 %rd, 1, 0, %ok;");
  for (uint32_t l = 0; l < 32; ++l) {
    auto v = [](uint32_t lane) { return lane * 10 + 1; };
    EXPECT_EQ(up[l], v(l >= 3 ? l - 3 : l)) << l;
    EXPECT_EQ(down[l], v(l + 5 <= 31 ? l + 5 : l)) << l;
    EXPECT_EQ(bfly[l], v(l ^ 6)) << l;
    EXPECT_EQ(idx[l], v(7)) << l;
    EXPECT_EQ(idx8[l], v((l & ~7u) + 2)) << l;
    EXPECT_EQ(down8[l], v((l & 7) + 3 <= 7 ? l + 3 : l)) << l;
    EXPECT_EQ(pred[l], l + 5 <= 31 ? 1u : 0u) << l;
  }
}

TEST(EmuWarp, VoteAndRedux) {
  // %q = (lane % 3 == 0)
  auto ballot = per_lane("vote.sync.ballot.b32 %rd, %q, -1;");
  auto any = per_lane("vote.sync.any.pred %pd, %q, -1; selp.u32 %rd, 1, 0, %pd;");
  auto all = per_lane("vote.sync.all.pred %pd, %q, -1; selp.u32 %rd, 1, 0, %pd;");
  auto all_not = per_lane(
      "setp.lt.u32 %pd, %ra, 1000; vote.sync.all.pred %pd, %pd, -1; selp.u32 %rd, 1, 0, %pd;");
  auto uni = per_lane("vote.sync.uni.pred %pd, !%q, -1; selp.u32 %rd, 1, 0, %pd;");
  auto sum = per_lane("redux.sync.add.u32 %rd, %ra, -1;");
  auto mx = per_lane("redux.sync.max.s32 %rd, %ra, -1;");
  auto active = per_lane("activemask.b32 %rd;");
  uint32_t expect_ballot = 0, expect_sum = 0;
  for (uint32_t l = 0; l < 32; ++l) {
    expect_ballot |= (l % 3 == 0 ? 1u : 0u) << l;
    expect_sum += l * 10 + 1;
  }
  for (uint32_t l = 0; l < 32; ++l) {
    EXPECT_EQ(ballot[l], expect_ballot);
    EXPECT_EQ(any[l], 1u);
    EXPECT_EQ(all[l], 0u);
    EXPECT_EQ(all_not[l], 1u);
    EXPECT_EQ(uni[l], 0u);
    EXPECT_EQ(sum[l], expect_sum);
    EXPECT_EQ(mx[l], 311u);
    EXPECT_EQ(active[l], 0xffffffffu);
  }
}

TEST(EmuWarp, AtomicsGlobalAndShared) {
  const char *k = R"(
.visible .entry atomics(.param .u64 g)
{
  .shared .align 8 .b8 s[64];
  .reg .b32 %r<8>, %old;
  .reg .b64 %p, %sp;
  .reg .f32 %f;
  .reg .pred %first;
  mov.u32 %r1, %tid.x;
  ld.param.u64 %p, [g];
  mov.u32 %r2, s;
  setp.eq.u32 %first, %r1, 0;
  @%first st.shared.u32 [%r2], 0;
  @%first st.shared.u32 [%r2+4], 0x7fffffff;
  bar.sync 0;
  atom.global.add.u32 %old, [%p], 1;
  red.global.add.u32 [%p+4], %r1;
  atom.global.min.s32 %old, [%p+8], %r1;
  sub.s32 %r3, 0, %r1;
  atom.global.max.s32 %old, [%p+12], %r3;
  atom.global.or.b32 %old, [%p+16], %r1;
  and.b32 %r4, %r1, 7;
  mov.u32 %r5, 1;
  shl.b32 %r5, %r5, %r4;
  atom.global.xor.b32 %old, [%p+20], %r5;
  atom.global.inc.u32 %old, [%p+24], 9;
  cvt.rn.f32.u32 %f, %r1;
  atom.global.add.f32 %f, [%p+28], %f;
  atom.global.add.u64 %sp, [%p+32], 3;
  atom.global.cas.b32 %old, [%p+40], %r1, 1000;
  atom.shared.add.u32 %old, [%r2], %r1;
  atom.shared.min.u32 %old, [%r2+4], %r1;
  bar.sync 0;
  @%first ld.shared.u32 %r6, [%r2];
  @%first st.global.u32 [%p+44], %r6;
  @%first ld.shared.u32 %r6, [%r2+4];
  @%first st.global.u32 [%p+48], %r6;
  ret;
}
)";
  EmuDevice dev;
  std::vector<uint32_t> init(13, 0);
  init[2] = 1000;        // min
  init[3] = 0x80000000u; // max starts at INT_MIN
  init[10] = 5;          // cas: only thread 5 succeeds
  auto g = upload(dev, init);
  // several CTAs on several host threads hit the same global words
  const uint32_t blocks = 8, threads = 96;
  launch(dev, ptx_module(k), "atomics", {blocks, 1, 1}, {threads, 1, 1}, {Arg::of(g)});
  auto r = download<uint32_t>(dev, g, 13);
  EXPECT_EQ(r[0], blocks * threads);
  EXPECT_EQ(r[1], blocks * (threads * (threads - 1) / 2));
  EXPECT_EQ(static_cast<int32_t>(r[2]), 0);
  EXPECT_EQ(static_cast<int32_t>(r[3]), 0);
  EXPECT_EQ(r[4], 127u);
  EXPECT_EQ(r[5], 0u); // each bit toggled an even number of times (96 threads, 8 blocks)
  EXPECT_EQ(r[6], (blocks * threads) % 10);
  float fsum;
  std::memcpy(&fsum, &r[7], 4);
  EXPECT_EQ(fsum, blocks * (threads * (threads - 1) / 2.0f));
  EXPECT_EQ(uint64_t{r[8]} | (uint64_t{r[9]} << 32), uint64_t{blocks} * threads * 3);
  EXPECT_EQ(r[10], 1000u);
  EXPECT_EQ(r[11], threads * (threads - 1) / 2); // shared add (last block to write wins, all equal)
  EXPECT_EQ(r[12], 0u);
}

} // namespace
} // namespace tcjit::emu::test
