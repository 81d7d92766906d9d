// ldmatrix x1/x2/x4 with and without .trans; cp.async zero-fill, ignore-src, groups.
#include <gtest/gtest.h>

#include "tests/emu/emu_test_util.h"

namespace tcjit::emu::test {
namespace {

// Fills a shared tile of 1024 halves with their index, then each lane gives the byte offset
// rows[lane] as its row address.
std::string ldmatrix_kernel(int num, bool trans) {
  std::string regs, list;
  for (int j = 0; j < num; ++j) {
    list += std::string(j ? ", " : "") + "%m" + std::to_string(j);
  }
  std::string body = R"(
.visible .entry ldm(.param .u64 rows, .param .u64 out)
{
  .shared .align 16 .b16 tile[1024];
  .reg .b32 %m<4>, %lane, %i, %base, %a, %v;
  .reg .b16 %h;
  .reg .b64 %p, %t;
  .reg .pred %more;
  mov.u32 %lane, %laneid;
  mov.u32 %base, tile;
  shl.b32 %i, %lane, 5;
FILL:
  cvt.u16.u32 %h, %i;
  shl.b32 %a, %i, 1;
  add.u32 %a, %a, %base;
  st.shared.b16 [%a], %h;
  add.u32 %i, %i, 1;
  and.b32 %v, %i, 31;
  setp.ne.u32 %more, %v, 0;
  @%more bra FILL;
  bar.sync 0;
  ld.param.u64 %p, [rows];
  mul.wide.u32 %t, %lane, 4;
  add.u64 %p, %p, %t;
  ld.global.u32 %a, [%p];
  add.u32 %a, %a, %base;
  ldmatrix.sync.aligned.m8n8.x)" +
                     std::to_string(num) + (trans ? ".trans" : "") + R"(.shared.b16 {)" + list +
                     R"(}, [%a];
  ld.param.u64 %p, [out];
  mul.wide.u32 %t, %lane, 16;
  add.u64 %p, %p, %t;
)";
  for (int j = 0; j < num; ++j)
    body += "  st.global.u32 [%p+" + std::to_string(4 * j) + "], %m" + std::to_string(j) + ";\n";
  body += "  ret;\n}\n";
  return ptx_module(body);
}

TEST(EmuLdmatrix, AllCountsWithAndWithoutTrans) {
  // row addresses: 16-byte aligned, scattered over the tile
  std::vector<uint32_t> rows(32);
  for (uint32_t l = 0; l < 32; ++l)
    rows[l] = ((l * 37) % 128) * 16;
  for (int num : {1, 2, 4}) {
    for (bool trans : {false, true}) {
      EmuDevice dev;
      auto drows = upload(dev, rows);
      auto dout = dev.allocate(32 * 16);
      dev.memset(dout, 0, 32 * 16);
      launch(dev, ldmatrix_kernel(num, trans), "ldm", {1, 1, 1}, {32, 1, 1},
             {Arg::of(drows), Arg::of(dout)});
      auto out = download<uint32_t>(dev, dout, 32 * 4);
      auto elem = [&](int j, int r, int c) { return rows[8 * j + r] / 2 + c; }; // M_j[r][c]
      for (int t = 0; t < 32; ++t) {
        for (int j = 0; j < num; ++j) {
          uint32_t lo, hi;
          if (!trans) {
            lo = elem(j, t / 4, 2 * (t % 4));
            hi = elem(j, t / 4, 2 * (t % 4) + 1);
          } else {
            lo = elem(j, 2 * (t % 4), t / 4);
            hi = elem(j, 2 * (t % 4) + 1, t / 4);
          }
          EXPECT_EQ(out[t * 4 + j], lo | (hi << 16))
              << "x" << num << (trans ? ".trans" : "") << " lane " << t << " matrix " << j;
        }
      }
    }
  }
}

std::string cp_async_kernel(const std::string &copy) {
  return ptx_module(R"(
.visible .entry cpa(.param .u64 src, .param .u64 out)
{
  .shared .align 16 .b8 buf[512];
  .reg .b32 %lane, %dst, %size, %v0, %v1, %v2, %v3, %odd;
  .reg .b64 %p, %t, %q;
  .reg .pred %ignore;
  mov.u32 %lane, %laneid;
  mov.u32 %dst, buf;
  shl.b32 %size, %lane, 4;
  add.u32 %dst, %dst, %size;
  // pre-fill the destination with a marker
  st.shared.v4.u32 [%dst], {0xAAAAAAAA, 0xAAAAAAAA, 0xAAAAAAAA, 0xAAAAAAAA};
  rem.u32 %size, %lane, 17;
  and.b32 %odd, %lane, 1;
  setp.eq.u32 %ignore, %odd, 1;
  ld.param.u64 %p, [src];
  mul.wide.u32 %t, %lane, 16;
  add.u64 %p, %p, %t;
  )" + copy + R"(
  cp.async.commit_group;
  cp.async.wait_group 0;
  ld.shared.v4.u32 {%v0, %v1, %v2, %v3}, [%dst];
  ld.param.u64 %q, [out];
  add.u64 %q, %q, %t;
  st.global.v4.u32 [%q], {%v0, %v1, %v2, %v3};
  ret;
}
)");
}

std::vector<uint8_t> run_cp_async(const std::string &copy) {
  EmuDevice dev;
  std::vector<uint8_t> src(512);
  for (int i = 0; i < 512; ++i)
    src[i] = static_cast<uint8_t>(i * 3 + 1);
  auto dsrc = upload(dev, src);
  auto dout = dev.allocate(512);
  launch(dev, cp_async_kernel(copy), "cpa", {1, 1, 1}, {32, 1, 1}, {Arg::of(dsrc), Arg::of(dout)});
  return download<uint8_t>(dev, dout, 512);
}

TEST(EmuCpAsync, ZeroFillIgnoreSrcAndSizes) {
  auto full = run_cp_async("cp.async.cg.shared.global [%dst], [%p], 16;");
  for (int i = 0; i < 512; ++i)
    EXPECT_EQ(full[i], static_cast<uint8_t>(i * 3 + 1)) << i;
  auto partial = run_cp_async("cp.async.ca.shared.global [%dst], [%p], 16, %size;");
  for (int l = 0; l < 32; ++l)
    for (int b = 0; b < 16; ++b)
      EXPECT_EQ(partial[l * 16 + b], b < l % 17 ? static_cast<uint8_t>((l * 16 + b) * 3 + 1) : 0)
          << "lane " << l << " byte " << b;
  auto ignored = run_cp_async("cp.async.cg.shared.global [%dst], [%p], 16, %ignore;");
  for (int l = 0; l < 32; ++l)
    for (int b = 0; b < 16; ++b)
      EXPECT_EQ(ignored[l * 16 + b], l % 2 ? 0 : static_cast<uint8_t>((l * 16 + b) * 3 + 1));
  auto four = run_cp_async("cp.async.ca.shared.global [%dst], [%p], 4;");
  for (int l = 0; l < 32; ++l) {
    for (int b = 0; b < 4; ++b)
      EXPECT_EQ(four[l * 16 + b], static_cast<uint8_t>((l * 16 + b) * 3 + 1));
    for (int b = 4; b < 16; ++b)
      EXPECT_EQ(four[l * 16 + b], 0xAA); // untouched
  }
  auto eight = run_cp_async("cp.async.ca.shared.global [%dst+8], [%p+8], 8;");
  for (int l = 0; l < 32; ++l) {
    for (int b = 0; b < 8; ++b)
      EXPECT_EQ(eight[l * 16 + b], 0xAA);
    for (int b = 8; b < 16; ++b)
      EXPECT_EQ(eight[l * 16 + b], static_cast<uint8_t>((l * 16 + b) * 3 + 1));
  }
}

TEST(EmuCpAsync, TwoLanesCopyingToOneDestinationFault) {
  // lanes 2k and 2k+1 copy to the same 16 bytes: the second copy touches the first's destination
  // before any wait (the warp-wide path leaves it to the per-lane check, which names lane 1)
  EmuDevice dev;
  auto dsrc = dev.allocate(512), dout = dev.allocate(512);
  try {
    launch(dev,
           cp_async_kernel("and.b32 %odd, %dst, -32;\n"
                           "  cp.async.cg.shared.global [%odd], [%p], 16;"),
           "cpa", {1, 1, 1}, {32, 1, 1}, {Arg::of(dsrc), Arg::of(dout)});
    ADD_FAILURE() << "no fault";
  } catch (const device::DeviceError &e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("touches the destination of a cp.async that has not been waited for"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("thread (1,0,0)"), std::string::npos) << what;
  }
}

TEST(EmuCpAsync, GroupsCompleteInOrder) {
  // two groups; wait_group 1 completes only the first; wait_all the second
  const char *k = R"(
.visible .entry groups(.param .u64 src, .param .u64 out)
{
  .shared .align 16 .b8 buf[1024];
  .reg .b32 %lane, %d0, %d1, %v, %w;
  .reg .b64 %p, %t, %q;
  mov.u32 %lane, %laneid;
  mov.u32 %d0, buf;
  shl.b32 %v, %lane, 4;
  add.u32 %d0, %d0, %v;
  add.u32 %d1, %d0, 512;
  ld.param.u64 %p, [src];
  mul.wide.u32 %t, %lane, 16;
  add.u64 %p, %p, %t;
  cp.async.cg.shared.global [%d0], [%p], 16;
  cp.async.commit_group;
  cp.async.cg.shared.global [%d1], [%p+512], 16;
  cp.async.commit_group;
  cp.async.wait_group 1;
  ld.shared.u32 %v, [%d0];
  cp.async.wait_all;
  ld.shared.u32 %w, [%d1];
  ld.param.u64 %q, [out];
  mul.wide.u32 %t, %lane, 8;
  add.u64 %q, %q, %t;
  st.global.v2.u32 [%q], {%v, %w};
  ret;
}
)";
  EmuDevice dev;
  std::vector<uint32_t> src(256);
  for (uint32_t i = 0; i < 256; ++i)
    src[i] = i * 10;
  auto dsrc = upload(dev, src);
  auto dout = dev.allocate(32 * 8);
  launch(dev, ptx_module(k), "groups", {1, 1, 1}, {32, 1, 1}, {Arg::of(dsrc), Arg::of(dout)});
  auto out = download<uint32_t>(dev, dout, 64);
  for (uint32_t l = 0; l < 32; ++l) {
    EXPECT_EQ(out[2 * l], l * 4 * 10);
    EXPECT_EQ(out[2 * l + 1], (128 + l * 4) * 10);
  }
}

} // namespace
} // namespace tcjit::emu::test
