// Registers with disjoint live ranges share slots (register_compaction.h): fewer slots, the same
// results, loop-carried values and registers read before their first write intact.
#include <gtest/gtest.h>

#include "runtime/emu/program.h"
#include "tests/emu/emu_test_util.h"

namespace tcjit::emu::test {
namespace {

// out[t] = sum over i < n of (i * 3 + t), with %r9 read at the top of the loop before the write
// at its bottom (a value carried around the loop), and a chain of short-lived registers after it.
const char *kLoop = R"(
.visible .entry loop(.param .u64 out, .param .u32 n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<20>;
  .reg .b64 %rd<4>;
  mov.u32 %r1, %tid.x;
  ld.param.u32 %r2, [n];
  mov.u32 %r3, 0;
  mov.u32 %r4, 0;
  mov.u32 %r9, 0;
LOOP:
  add.u32 %r4, %r4, %r9;
  mul.lo.u32 %r5, %r3, 3;
  add.u32 %r9, %r5, %r1;
  add.u32 %r3, %r3, 1;
  setp.lt.u32 %p1, %r3, %r2;
  @%p1 bra LOOP;
  add.u32 %r4, %r4, %r9;
  add.u32 %r10, %r4, 1;
  add.u32 %r11, %r10, 1;
  add.u32 %r12, %r11, 1;
  add.u32 %r13, %r12, 1;
  sub.u32 %r14, %r13, 4;
  add.u32 %r15, %r14, %r16;
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r15;
  ret;
}
)";

TEST(EmuRegisterCompaction, FewerSlotsSameResults) {
  EmuDevice dev;
  const std::string ptx = ptx_module(kLoop);
  const device::ModuleHandle m = dev.load_module(ptx, "loop.ptx");
  const Program &prog = dev.program(m);
  // 20 + 4 + 2 declared after the reserved ones; the straight-line chain shares slots
  EXPECT_LT(prog.num_regs, kReservedRegs + 26);
  EXPECT_EQ(dev.kernel_info(dev.get_function(m, "loop")).registers_per_thread,
            kReservedRegs + 26); // what the kernel declares, as before
  auto out = dev.allocate(64 * 4);
  const uint32_t n = 10;
  launch(dev, ptx, "loop", {1, 1, 1}, {64, 1, 1}, {Arg::of(out), Arg::of(n)});
  const auto got = download<uint32_t>(dev, out, 64);
  for (uint32_t t = 0; t < 64; ++t) {
    uint32_t want = 0;
    for (uint32_t i = 0; i < n; ++i)
      want += i * 3 + t;
    EXPECT_EQ(got[t], want) << "thread " << t; // %r16 is never written: it reads 0
  }
}

} // namespace
} // namespace tcjit::emu::test
