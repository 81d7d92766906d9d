// cvt: every rounding mode on ties, NaN, Inf, subnormals and overflow.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "tests/emu/emu_test_util.h"

namespace tcjit::emu::test {
namespace {

uint64_t cvt1(const std::string &snippet, const std::string &result, uint64_t a) {
  return run_lanes(snippet, result, {{a, 0, 0}})[0];
}
uint64_t from_f32(const std::string &instr, float x, const std::string &result = "b16") {
  return cvt1(instr, result, f32_bits(x));
}

TEST(EmuConvert, F32ToF16AllModes) {
  const float tie_even = 1.0f + std::ldexp(1.0f, -11);    // halfway 0x3C00 / 0x3C01
  const float tie_odd = 1.0f + 3 * std::ldexp(1.0f, -11); // halfway 0x3C01 / 0x3C02
  EXPECT_EQ(from_f32("cvt.rn.f16.f32 %hd, %fa;", tie_even), 0x3C00u);
  EXPECT_EQ(from_f32("cvt.rn.f16.f32 %hd, %fa;", tie_odd), 0x3C02u);
  EXPECT_EQ(from_f32("cvt.rz.f16.f32 %hd, %fa;", tie_odd), 0x3C01u);
  EXPECT_EQ(from_f32("cvt.rp.f16.f32 %hd, %fa;", tie_even), 0x3C01u);
  EXPECT_EQ(from_f32("cvt.rm.f16.f32 %hd, %fa;", -tie_even), 0xBC01u);
  EXPECT_EQ(from_f32("cvt.rm.f16.f32 %hd, %fa;", tie_even), 0x3C00u);
  // overflow
  EXPECT_EQ(from_f32("cvt.rn.f16.f32 %hd, %fa;", 70000.0f), 0x7C00u);
  EXPECT_EQ(from_f32("cvt.rz.f16.f32 %hd, %fa;", 70000.0f), 0x7BFFu);
  EXPECT_EQ(from_f32("cvt.rm.f16.f32 %hd, %fa;", 70000.0f), 0x7BFFu);
  EXPECT_EQ(from_f32("cvt.rm.f16.f32 %hd, %fa;", -70000.0f), 0xFC00u);
  EXPECT_EQ(from_f32("cvt.rn.satfinite.f16.f32 %hd, %fa;", 70000.0f), 0x7BFFu);
  EXPECT_EQ(from_f32("cvt.rn.f16.f32 %hd, %fa;", 65519.0f), 0x7BFFu); // below the midpoint
  EXPECT_EQ(from_f32("cvt.rn.f16.f32 %hd, %fa;", 65520.0f), 0x7C00u); // midpoint: to inf
  // specials
  EXPECT_EQ(from_f32("cvt.rn.f16.f32 %hd, %fa;", INFINITY), 0x7C00u);
  EXPECT_EQ(from_f32("cvt.rn.f16.f32 %hd, %fa;", -INFINITY), 0xFC00u);
  EXPECT_EQ(from_f32("cvt.rn.f16.f32 %hd, %fa;", NAN), 0x7FFFu);
  EXPECT_EQ(from_f32("cvt.rn.f16.f32 %hd, %fa;", -0.0f), 0x8000u);
  // subnormals
  EXPECT_EQ(from_f32("cvt.rn.f16.f32 %hd, %fa;", std::ldexp(1.0f, -24)), 0x0001u);
  EXPECT_EQ(from_f32("cvt.rn.f16.f32 %hd, %fa;", std::ldexp(1.0f, -25)), 0x0000u); // tie to even
  EXPECT_EQ(from_f32("cvt.rn.f16.f32 %hd, %fa;", 3 * std::ldexp(1.0f, -25)), 0x0002u); // tie: even
  EXPECT_EQ(from_f32("cvt.rp.f16.f32 %hd, %fa;", std::ldexp(1.0f, -30)), 0x0001u);
  EXPECT_EQ(from_f32("cvt.rn.f16.f32 %hd, %fa;", std::ldexp(1.0f, -14)), 0x0400u);
}

TEST(EmuConvert, F16ToF32AndBf16Tf32) {
  EXPECT_EQ(bits_f32(cvt1("cvt.f32.f16 %fd, %ha;", "f32", 0x0001)), std::ldexp(1.0f, -24));
  EXPECT_EQ(bits_f32(cvt1("cvt.f32.f16 %fd, %ha;", "f32", 0x7C00)), INFINITY);
  EXPECT_TRUE(std::isnan(bits_f32(cvt1("cvt.f32.f16 %fd, %ha;", "f32", 0x7E00))));
  EXPECT_EQ(bits_f32(cvt1("cvt.f32.f16 %fd, %ha;", "f32", 0xC000)), -2.0f);
  EXPECT_EQ(bits_f32(cvt1("cvt.f32.bf16 %fd, %ha;", "f32", 0x3FC0)), 1.5f);
  EXPECT_EQ(from_f32("cvt.rn.bf16.f32 %hd, %fa;", 1.0f + std::ldexp(1.0f, -8)), 0x3F80u);
  EXPECT_EQ(from_f32("cvt.rn.bf16.f32 %hd, %fa;", 1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F82u);
  EXPECT_EQ(from_f32("cvt.rz.bf16.f32 %hd, %fa;", 1.0f + 3 * std::ldexp(1.0f, -8)), 0x3F81u);
  EXPECT_EQ(from_f32("cvt.rn.bf16.f32 %hd, %fa;", NAN), 0x7FFFu);
  EXPECT_EQ(from_f32("cvt.rn.bf16.f32 %hd, %fa;", std::numeric_limits<float>::max()), 0x7F80u);
  // tf32: 10 fraction bits, .rna rounds ties away from zero
  EXPECT_EQ(from_f32("cvt.rna.tf32.f32 %rd, %fa;", 1.0f + std::ldexp(1.0f, -11), "b32"),
            0x3F802000u);
  EXPECT_EQ(from_f32("cvt.rna.tf32.f32 %rd, %fa;", 1.0f + std::ldexp(1.0f, -12), "b32"),
            0x3F800000u);
  // packed: a goes to the upper half
  auto r =
      run_lanes("cvt.rn.f16x2.f32 %rd, %fa, %fb;", "b32", {{f32_bits(1.0f), f32_bits(2.0f), 0}});
  EXPECT_EQ(static_cast<uint32_t>(r[0]), 0x3C004000u);
  auto rb =
      run_lanes("cvt.rn.bf16x2.f32 %rd, %fa, %fb;", "b32", {{f32_bits(1.0f), f32_bits(-2.0f), 0}});
  EXPECT_EQ(static_cast<uint32_t>(rb[0]), 0x3F80C000u);
}

TEST(EmuConvert, FloatToIntegerRoundsAndSaturates) {
  auto s32 = [](const char *mode, float x) {
    return static_cast<int32_t>(
        from_f32(std::string("cvt.") + mode + ".s32.f32 %rd, %fa;", x, "b32"));
  };
  EXPECT_EQ(s32("rzi", -2.7f), -2);
  EXPECT_EQ(s32("rni", 2.5f), 2);
  EXPECT_EQ(s32("rni", 3.5f), 4);
  EXPECT_EQ(s32("rni", -2.5f), -2);
  EXPECT_EQ(s32("rmi", -2.5f), -3);
  EXPECT_EQ(s32("rpi", 2.1f), 3);
  EXPECT_EQ(s32("rzi", NAN), 0);
  EXPECT_EQ(s32("rzi", 1e10f), INT32_MAX);
  EXPECT_EQ(s32("rzi", -1e10f), INT32_MIN);
  EXPECT_EQ(s32("rzi", INFINITY), INT32_MAX);
  EXPECT_EQ(from_f32("cvt.rzi.u32.f32 %rd, %fa;", -5.0f, "b32"), 0u);
  EXPECT_EQ(from_f32("cvt.rni.u8.f32 %rd, %fa;", 300.0f, "b32") & 0xff, 255u);
  EXPECT_EQ(static_cast<int64_t>(cvt1("cvt.rzi.s64.f64 %d, %da;", "b64", f64_bits(-1e300))),
            INT64_MIN);
  EXPECT_EQ(cvt1("cvt.rzi.u64.f64 %d, %da;", "b64", f64_bits(1e19)), 10000000000000000000ull);
}

TEST(EmuConvert, IntegerToFloatAndInteger) {
  auto f32_of_s32 = [](const char *mode, int32_t v) {
    return bits_f32(
        cvt1(std::string("cvt.") + mode + ".f32.s32 %fd, %ra;", "f32", static_cast<uint32_t>(v)));
  };
  EXPECT_EQ(f32_of_s32("rn", 16777217), 16777216.0f);
  EXPECT_EQ(f32_of_s32("rz", 16777217), 16777216.0f);
  EXPECT_EQ(f32_of_s32("rp", 16777217), 16777218.0f);
  EXPECT_EQ(f32_of_s32("rn", 16777219), 16777220.0f);
  EXPECT_EQ(f32_of_s32("rm", -16777217), -16777218.0f);
  EXPECT_EQ(bits_f64(cvt1("cvt.rn.f64.u64 %dd, %a;", "f64", ~0ull)), 18446744073709551616.0);
  EXPECT_EQ(bits_f64(cvt1("cvt.rz.f64.u64 %dd, %a;", "f64", ~0ull)), 18446744073709549568.0);
  EXPECT_EQ(cvt1("cvt.rn.f16.s32 %hd, %ra;", "b16", 2049), 0x6800u); // 2048 (tie to even)
  // integer <-> integer: extension by the source type, truncation, .sat
  EXPECT_EQ(cvt1("cvt.s64.s32 %d, %ra;", "b64", 0xffffffffu), ~0ull);
  EXPECT_EQ(cvt1("cvt.u64.u32 %d, %ra;", "b64", 0xffffffffu), 0xffffffffull);
  EXPECT_EQ(cvt1("cvt.u8.u32 %rd, %ra;", "b32", 300), 44u);
  EXPECT_EQ(cvt1("cvt.sat.u8.u32 %rd, %ra;", "b32", 300), 255u);
  EXPECT_EQ(cvt1("cvt.sat.u8.s32 %rd, %ra;", "b32", static_cast<uint32_t>(-5)), 0u);
  EXPECT_EQ(cvt1("cvt.sat.s8.s32 %rd, %ra;", "b32", static_cast<uint32_t>(-500)) & 0xff, 0x80u);
  EXPECT_EQ(cvt1("cvt.s32.s8 %rd, %ra;", "b32", 0x80), 0xffffff80u);
  EXPECT_EQ(cvt1("cvt.s32.s16 %rd, %ha;", "b32", 0x8000), 0xffff8000u);
  EXPECT_EQ(cvt1("cvt.u32.u16 %rd, %ha;", "b32", 0x8000), 0x8000u);
  // a signed result narrower than its register is sign-extended to the register (as LLVM's
  // NVPTX backend assumes: cvt.s8.s32 into a .b16 register, then read as .s16)
  EXPECT_EQ(cvt1("cvt.s8.s32 %hd, %ra;", "b16", static_cast<uint32_t>(-16)), 0xfff0u);
  EXPECT_EQ(cvt1("cvt.s8.s32 %rd, %ra;", "b32", 0xf0u), 0xfffffff0u);
  EXPECT_EQ(cvt1("cvt.u8.u32 %rd, %ra;", "b32", 0xf0u), 0xf0u);
  EXPECT_EQ(cvt1("cvt.rni.s8.f32 %hd, %fa;", "b16", f32_bits(-3.0f)), 0xfffdu);
  EXPECT_EQ(bits_f32(cvt1("cvt.s8.s32 %hd, %ra; cvt.rn.f32.s16 %fd, %hd;", "f32",
                          static_cast<uint32_t>(-16))),
            -16.0f);
}

TEST(EmuConvert, FloatToFloat) {
  auto f32_of_f64 = [](const char *mode, double v) {
    return bits_f32(cvt1(std::string("cvt.") + mode + ".f32.f64 %fd, %da;", "f32", f64_bits(v)));
  };
  const double tie = 1.0 + std::ldexp(1.0, -24);
  EXPECT_EQ(f32_of_f64("rn", tie), 1.0f);
  EXPECT_EQ(f32_of_f64("rp", tie), 1.0f + std::ldexp(1.0f, -23));
  EXPECT_EQ(f32_of_f64("rn", 1e39), INFINITY);
  EXPECT_EQ(f32_of_f64("rz", 1e39), std::numeric_limits<float>::max());
  EXPECT_EQ(f32_of_f64("rn", 1e-46), 0.0f);
  EXPECT_EQ(f32_of_f64("rp", 1e-46), std::numeric_limits<float>::denorm_min());
  EXPECT_EQ(bits_f64(cvt1("cvt.f64.f32 %dd, %fa;", "f64", f32_bits(0.1f))), double(0.1f));
  EXPECT_EQ(bits_f32(cvt1("cvt.rni.f32.f32 %fd, %fa;", "f32", f32_bits(2.5f))), 2.0f);
  EXPECT_EQ(bits_f32(cvt1("cvt.rmi.f32.f32 %fd, %fa;", "f32", f32_bits(-2.5f))), -3.0f);
  EXPECT_EQ(bits_f32(cvt1("cvt.ftz.f32.f32 %fd, %fa;", "f32",
                          f32_bits(std::numeric_limits<float>::denorm_min()))),
            0.0f);
  EXPECT_EQ(bits_f32(cvt1("cvt.sat.f32.f32 %fd, %fa;", "f32", f32_bits(1.5f))), 1.0f);
  EXPECT_EQ(bits_f32(cvt1("cvt.sat.f32.f32 %fd, %fa;", "f32", f32_bits(NAN))), 0.0f);
}

} // namespace
} // namespace tcjit::emu::test
