// EmuDevice reuses the decoded program when the same PTX is loaded again (a tuner's probes), except
// for modules with .global/.const variables, which own device memory.
#include <gtest/gtest.h>

#include "runtime/emu/program.h"
#include "tests/emu/emu_test_util.h"

namespace tcjit::emu::test {
namespace {

const char *kStore = R"(
.visible .entry store(.param .u64 out, .param .u32 v)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<4>;
  ld.param.u32 %r1, [v];
  mov.u32 %r2, %tid.x;
  add.u32 %r1, %r1, %r2;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r2, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r1;
  ret;
}
)";

const char *kCounter = R"(
.global .align 4 .u32 calls = 5;
.visible .entry bump(.param .u64 out)
{
  .reg .b32 %r<2>;
  .reg .b64 %rd<2>;
  ld.global.u32 %r1, [calls];
  add.u32 %r1, %r1, 1;
  st.global.u32 [calls], %r1;
  ld.param.u64 %rd1, [out];
  st.global.u32 [%rd1], %r1;
  ret;
}
)";

TEST(EmuProgramCache, TheSamePtxLoadsOnce) {
  EmuDevice dev;
  const std::string ptx = ptx_module(kStore);
  const device::ModuleHandle m1 = dev.load_module(ptx, "a.ptx");
  const device::ModuleHandle m2 = dev.load_module(ptx, "a.ptx");
  EXPECT_EQ(&dev.program(m1), &dev.program(m2));
  EXPECT_NE(&dev.program(m1), &dev.program(dev.load_module(ptx, "b.ptx"))); // names in errors
  dev.unload_module(m1);
  auto out = dev.allocate(32 * 4);
  launch(dev, ptx, "store", {1, 1, 1}, {32, 1, 1}, {Arg::of(out), Arg::of(100u)});
  EXPECT_EQ(download<uint32_t>(dev, out, 32)[31], 131u);
}

TEST(EmuProgramCache, ModulesWithVariablesKeepTheirOwn) {
  EmuDevice dev;
  const std::string ptx = ptx_module(kCounter);
  auto out = dev.allocate(4);
  for (int i = 0; i < 2; ++i) { // each load starts from the initializer
    launch(dev, ptx, "bump", {1, 1, 1}, {1, 1, 1}, {Arg::of(out)});
    EXPECT_EQ(download<uint32_t>(dev, out, 1)[0], 6u);
  }
  EXPECT_NE(&dev.program(dev.load_module(ptx, "c.ptx")),
            &dev.program(dev.load_module(ptx, "c.ptx")));
}

} // namespace
} // namespace tcjit::emu::test
