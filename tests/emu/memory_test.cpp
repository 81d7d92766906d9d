// Vector loads/stores and dynamic shared memory.
#include <gtest/gtest.h>

#include "tests/emu/emu_test_util.h"

namespace tcjit::emu::test {
namespace {

TEST(EmuMemory, VectorAccessAndDynamicShared) {
  const char *k = R"(
.extern .shared .align 16 .b8 dyn[];
.visible .entry k(.param .u64 in, .param .u64 out)
{
  .reg .b32 %r<8>;
  .reg .f32 %f<4>;
  .reg .b64 %rd<6>;
  mov.u32 %r1, %tid.x;
  ld.param.u64 %rd1, [in];
  mul.wide.u32 %rd2, %r1, 16;
  add.u64 %rd3, %rd1, %rd2;
  ld.global.v4.f32 {%f0, %f1, %f2, %f3}, [%rd3];
  mov.u32 %r2, dyn;
  shl.b32 %r3, %r1, 4;
  add.u32 %r4, %r2, %r3;
  st.shared.v4.f32 [%r4], {%f3, %f2, %f1, %f0};
  bar.sync 0;
  xor.b32 %r5, %r1, 1;
  shl.b32 %r5, %r5, 4;
  add.u32 %r5, %r2, %r5;
  ld.shared.v2.f32 {%f0, %f1}, [%r5+8];
  ld.param.u64 %rd4, [out];
  mul.wide.u32 %rd2, %r1, 8;
  add.u64 %rd5, %rd4, %rd2;
  st.global.v2.f32 [%rd5], {%f0, %f1};
  ret;
}
)";
  EmuDevice dev;
  std::vector<float> in(64 * 4);
  for (int i = 0; i < 256; ++i)
    in[i] = static_cast<float>(i);
  auto din = upload(dev, in);
  auto dout = dev.allocate(64 * 8);
  launch(dev, ptx_module(k), "k", {1, 1, 1}, {64, 1, 1}, {Arg::of(din), Arg::of(dout)}, 64 * 16);
  auto out = download<float>(dev, dout, 128);
  for (int t = 0; t < 64; ++t) {
    int o = t ^ 1;
    EXPECT_EQ(out[2 * t], in[o * 4 + 1]);
    EXPECT_EQ(out[2 * t + 1], in[o * 4 + 0]);
  }
  // without enough dynamic shared memory the sanitizer reports it
  EXPECT_THROW(
      launch(dev, ptx_module(k), "k", {1, 1, 1}, {64, 1, 1}, {Arg::of(din), Arg::of(dout)}, 16),
      device::DeviceError);
}

} // namespace
} // namespace tcjit::emu::test
