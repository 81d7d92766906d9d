// The device interface of the emulator: memory, modules, functions, errors.
#include <gtest/gtest.h>

#include "tests/emu/emu_test_util.h"

namespace tcjit::emu::test {
namespace {

TEST(EmuDevice, MemoryModulesAndErrors) {
  EmuDevice dev;
  device::DeviceInfo info = dev.info();
  EXPECT_TRUE(info.is_emulator);
  EXPECT_EQ(info.warp_size, 32u);
  auto p = dev.allocate(100);
  EXPECT_NE(p, 0u);
  dev.memset(p, 7, 100);
  EXPECT_EQ(download<uint8_t>(dev, p, 100)[99], 7);
  EXPECT_THROW(dev.copy_to_device(p + 90, std::vector<uint8_t>(20).data(), 20),
               device::DeviceError);
  auto m = dev.load_module(ptx_module(R"(
.global .align 4 .u32 counter = 5;
.global .align 4 .f32 table[4] = {1.0, 2.0, 0f40400000, 4};
.const .align 4 .u32 scale = 3;
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<4>;
  .reg .f32 %f;
  .reg .b64 %rd<3>;
  ld.global.u32 %r1, [counter];
  ld.const.u32 %r2, [scale];
  mul.lo.u32 %r1, %r1, %r2;
  ld.global.f32 %f, [table+8];
  ld.param.u64 %rd1, [out];
  st.global.u32 [%rd1], %r1;
  st.global.f32 [%rd1+4], %f;
  mov.u64 %rd2, table;
  cvta.global.u64 %rd2, %rd2;
  ld.f32 %f, [%rd2+12];
  st.global.f32 [%rd1+8], %f;
  ret;
}
)"),
                           "globals.ptx");
  EXPECT_THROW(dev.get_function(m, "nope"), device::DeviceError);
  auto f = dev.get_function(m, "k");
  device::ParamBuffer params(dev.kernel_info(f));
  EXPECT_THROW(params.set<uint32_t>(0, 1), device::DeviceError);
  params.set(0, p);
  dev.launch(f, {{1, 1, 1}, {1, 1, 1}, 0}, params.bytes());
  auto out = download<uint32_t>(dev, p, 3);
  EXPECT_EQ(out[0], 15u);
  EXPECT_EQ(bits_f32(out[1]), 3.0f);
  EXPECT_EQ(bits_f32(out[2]), 4.0f);
  // bad configurations are InvalidArgument, not crashes
  try {
    dev.launch(f, {{1, 1, 1}, {2048, 1, 1}, 0}, params.bytes());
    FAIL();
  } catch (const device::DeviceError &e) {
    EXPECT_EQ(e.kind(), device::ErrorKind::InvalidArgument);
  }
  EXPECT_THROW(dev.launch(f, {{1, 1, 1}, {1, 1, 1}, 0}, {}), device::DeviceError);
  dev.unload_module(m);
  EXPECT_THROW(dev.get_function(m, "k"), device::DeviceError);
}

TEST(EmuDevice, LocalMemoryAndGenericAddressing) {
  const char *k = R"(
.visible .entry k(.param .u64 out)
{
  .local .align 8 .b8 depot[64];
  .shared .align 4 .b32 sh[32];
  .reg .b32 %r<6>;
  .reg .b64 %rd<8>;
  .reg .pred %p1, %p2;
  mov.u32 %r1, %tid.x;
  mov.u64 %rd1, depot;
  cvta.local.u64 %rd2, %rd1;
  mul.wide.u32 %rd3, %r1, 2;
  st.u32 [%rd2+16], %r1;
  ld.local.u32 %r2, [depot+16];
  mov.u64 %rd4, sh;
  cvta.shared.u64 %rd5, %rd4;
  mul.wide.u32 %rd6, %r1, 4;
  add.u64 %rd5, %rd5, %rd6;
  st.u32 [%rd5], %r2;
  isspacep.shared %p1, %rd5;
  isspacep.global %p2, %rd5;
  bar.sync 0;
  cvta.to.shared.u64 %rd7, %rd5;
  cvt.u32.u64 %r3, %rd7;
  ld.shared.u32 %r4, [%r3];
  selp.u32 %r5, 100, 0, %p1;
  add.u32 %r4, %r4, %r5;
  selp.u32 %r5, 1000, 0, %p2;
  add.u32 %r4, %r4, %r5;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd3, %r1, 8;
  add.u64 %rd1, %rd1, %rd3;
  st.global.v2.u32 [%rd1], {%r4, %r1};
  ret;
}
)";
  EmuDevice dev;
  auto out = dev.allocate(32 * 8);
  launch(dev, ptx_module(k), "k", {1, 1, 1}, {16, 1, 1}, {Arg::of(out)});
  auto r = download<uint32_t>(dev, out, 32);
  for (uint32_t i = 0; i < 16; ++i) {
    EXPECT_EQ(r[2 * i], i + 100) << i; // local round trip, shared via generic, isspacep
    EXPECT_EQ(r[2 * i + 1], i);
  }
}

} // namespace
} // namespace tcjit::emu::test
