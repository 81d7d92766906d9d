// f32/f64 and f16/bf16 arithmetic: rounding modes, ftz, NaN rules, packed halves.
#include <gtest/gtest.h>

#include <bit>
#include <cfenv>
#include <cmath>
#include <cstring>
#include <limits>

#include "runtime/emu/float_format.h"
#include "tests/emu/emu_test_util.h"

namespace tcjit::emu::test {
namespace {

float f(uint64_t b) {
  return bits_f32(b);
}

std::vector<uint64_t> f32_lanes(const std::string &snippet,
                                const std::vector<std::array<float, 3>> &in) {
  std::vector<std::array<uint64_t, 3>> rows;
  for (const auto &r : in)
    rows.push_back({f32_bits(r[0]), f32_bits(r[1]), f32_bits(r[2])});
  return run_lanes(snippet, "f32", rows);
}

// The decode tables every f16 / bf16 operand goes through (mma, cvt, the half instructions): each
// of the 65536 bit patterns of both formats is its value by the IEEE fields, computed here with
// ldexp in double; a NaN is the canonical quiet NaN with the input's sign, bit for bit.
TEST(EmuFloat, EveryHalfAndBf16BitPatternDecodesToItsValue) {
  struct Format {
    const char *name;
    const float *table;
    int exponent_bits, mantissa_bits;
  };
  for (const Format &fmt :
       {Format{"f16", f16_table(), 5, 10}, Format{"bf16", bf16_table(), 8, 7}}) {
    SCOPED_TRACE(fmt.name);
    const uint32_t exp_all_ones = (1u << fmt.exponent_bits) - 1;
    const int bias = (1 << (fmt.exponent_bits - 1)) - 1;
    int wrong = 0;
    for (uint32_t b = 0; b < 65536; ++b) {
      const bool negative = b & 0x8000u;
      const uint32_t exponent = (b >> fmt.mantissa_bits) & exp_all_ones;
      const uint32_t mant = b & ((1u << fmt.mantissa_bits) - 1);
      uint32_t expected;
      if (exponent == exp_all_ones && mant != 0) {
        expected = (negative ? 0x80000000u : 0u) | 0x7fc00000u;
      } else {
        double v = exponent == exp_all_ones ? std::numeric_limits<double>::infinity()
                   : exponent == 0          ? std::ldexp(double(mant), 1 - bias - fmt.mantissa_bits)
                                            : std::ldexp(double(mant | (1u << fmt.mantissa_bits)),
                                                         int(exponent) - bias - fmt.mantissa_bits);
        expected = std::bit_cast<uint32_t>(static_cast<float>(negative ? -v : v));
      }
      const uint32_t got = std::bit_cast<uint32_t>(fmt.table[b]);
      if (got != expected && ++wrong <= 5)
        ADD_FAILURE() << std::hex << "0x" << b << " decodes to 0x" << got << ", not 0x" << expected;
    }
    EXPECT_EQ(wrong, 0);
  }
}

TEST(EmuFloat, AddRoundingModes) {
  const float one = 1.0f, half_ulp = std::ldexp(1.0f, -24), ulp = std::ldexp(1.0f, -23);
  const std::vector<std::array<float, 3>> in = {{one, half_ulp, 0}, {-one, -half_ulp, 0}};
  auto rn = f32_lanes("add.rn.f32 %fd, %fa, %fb;", in);
  auto rz = f32_lanes("add.rz.f32 %fd, %fa, %fb;", in);
  auto rm = f32_lanes("add.rm.f32 %fd, %fa, %fb;", in);
  auto rp = f32_lanes("add.rp.f32 %fd, %fa, %fb;", in);
  EXPECT_EQ(f(rn[0]), one);
  EXPECT_EQ(f(rz[0]), one);
  EXPECT_EQ(f(rm[0]), one);
  EXPECT_EQ(f(rp[0]), one + ulp);
  EXPECT_EQ(f(rn[1]), -one);
  EXPECT_EQ(f(rm[1]), -one - ulp);
  EXPECT_EQ(f(rp[1]), -one);
  // the default mode is back to nearest afterwards
  auto again = f32_lanes("add.f32 %fd, %fa, %fb;", in);
  EXPECT_EQ(f(again[0]), one);
  auto mul_rz = f32_lanes("mul.rz.f32 %fd, %fa, %fb;", {{1.0f + ulp, 1.0f + ulp, 0}});
  EXPECT_EQ(f(mul_rz[0]), 1.0f + 2 * ulp);
}

TEST(EmuFloat, FmaDivSqrtMinMax) {
  const std::vector<std::array<float, 3>> in = {
      {1.0f + std::ldexp(1.0f, -12), 1.0f - std::ldexp(1.0f, -12), 1.0f},
      {3.0f, 7.0f, 0.1f},
      {-0.0f, 0.0f, 2.0f},
      {NAN, 1.0f, 4.0f},
      {1e30f, 1e-30f, 1.0f}};
  auto fma = f32_lanes("fma.rn.f32 %fd, %fa, %fb, %fc;", in);
  auto div = f32_lanes("div.rn.f32 %fd, %fa, %fb;", in);
  auto sq = f32_lanes("sqrt.rn.f32 %fd, %fc;", in);
  auto mn = f32_lanes("min.f32 %fd, %fa, %fb;", in);
  auto mx = f32_lanes("max.f32 %fd, %fa, %fb;", in);
  for (size_t i = 0; i < in.size(); ++i) {
    float e = std::fma(in[i][0], in[i][1], in[i][2]);
    if (std::isnan(e)) {
      EXPECT_TRUE(std::isnan(f(fma[i])));
    } else {
      EXPECT_EQ(f(fma[i]), e) << i;
    }
    float d = in[i][0] / in[i][1];
    if (!std::isnan(d)) {
      EXPECT_EQ(f(div[i]), d) << i;
    }
    EXPECT_EQ(f(sq[i]), std::sqrt(in[i][2])) << i; // all inputs non-negative
  }
  EXPECT_EQ(f(mn[3]), 1.0f); // min/max ignore a single NaN
  EXPECT_EQ(f(mx[3]), 1.0f);
  EXPECT_TRUE(std::signbit(f(mn[2])));
  EXPECT_FALSE(std::signbit(f(mx[2])));
  EXPECT_EQ(f(mn[1]), 3.0f);
  auto mn_nan = f32_lanes("min.NaN.f32 %fd, %fa, %fb;", in);
  EXPECT_TRUE(std::isnan(f(mn_nan[3])));
  EXPECT_EQ(f(mn_nan[1]), 3.0f);
  EXPECT_EQ(f(mx[1]), 7.0f);
}

TEST(EmuFloat, FtzSatAbsNeg) {
  const float sub = std::numeric_limits<float>::denorm_min() * 5;
  auto r = f32_lanes("add.ftz.f32 %fd, %fa, %fb;", {{sub, 0.0f, 0}, {-sub, -0.0f, 0}});
  EXPECT_EQ(f(r[0]), 0.0f);
  EXPECT_TRUE(std::signbit(f(r[1])));
  auto nf = f32_lanes("add.f32 %fd, %fa, %fb;", {{sub, 0.0f, 0}});
  EXPECT_EQ(f(nf[0]), sub);
  auto sat =
      f32_lanes("add.sat.f32 %fd, %fa, %fb;", {{0.75f, 0.5f, 0}, {-3.0f, 1.0f, 0}, {NAN, 0, 0}});
  EXPECT_EQ(f(sat[0]), 1.0f);
  EXPECT_EQ(f(sat[1]), 0.0f);
  EXPECT_EQ(f(sat[2]), 0.0f);
  auto ab = f32_lanes("abs.f32 %fd, %fa;", {{-2.5f, 0, 0}});
  EXPECT_EQ(f(ab[0]), 2.5f);
  auto ng = f32_lanes("neg.f32 %fd, %fa;", {{2.5f, 0, 0}});
  EXPECT_EQ(f(ng[0]), -2.5f);
  auto ex = f32_lanes("ex2.approx.ftz.f32 %fd, %fa;", {{3.0f, 0, 0}});
  EXPECT_NEAR(f(ex[0]), 8.0f, 1e-5);
  auto lg = f32_lanes("lg2.approx.f32 %fd, %fa;", {{8.0f, 0, 0}});
  EXPECT_NEAR(f(lg[0]), 3.0f, 1e-5);
  auto rs = f32_lanes("rsqrt.approx.f32 %fd, %fa;", {{4.0f, 0, 0}});
  EXPECT_NEAR(f(rs[0]), 0.5f, 1e-6);
  auto th = f32_lanes("tanh.approx.f32 %fd, %fa;", {{0.5f, 0, 0}});
  EXPECT_NEAR(f(th[0]), std::tanh(0.5f), 1e-3);
  auto sn = f32_lanes("sin.approx.f32 %fd, %fa; cos.approx.f32 %fb, %fa; add.f32 %fd, %fd, %fb;",
                      {{0.5f, 0, 0}});
  EXPECT_NEAR(f(sn[0]), std::sin(0.5f) + std::cos(0.5f), 1e-5);
  auto rc = f32_lanes("rcp.rn.f32 %fd, %fa;", {{4.0f, 0, 0}});
  EXPECT_EQ(f(rc[0]), 0.25f);
}

TEST(EmuFloat, SetpOrderedAndUnordered) {
  const std::vector<std::array<float, 3>> in = {{1, 2, 0}, {2, 2, 0}, {NAN, 2, 0}, {3, NAN, 0}};
  struct Case {
    const char *cmp;
    bool expect[4];
  };
  const Case cases[] = {
      {"eq", {false, true, false, false}},  {"ne", {true, false, false, false}},
      {"lt", {true, false, false, false}},  {"le", {true, true, false, false}},
      {"gt", {false, false, false, false}}, {"ge", {false, true, false, false}},
      {"equ", {false, true, true, true}},   {"neu", {true, false, true, true}},
      {"ltu", {true, false, true, true}},   {"leu", {true, true, true, true}},
      {"gtu", {false, false, true, true}},  {"geu", {false, true, true, true}},
      {"num", {true, true, false, false}},  {"nan", {false, false, true, true}},
  };
  for (const Case &c : cases) {
    std::vector<std::array<uint64_t, 3>> rows;
    for (const auto &r : in)
      rows.push_back({f32_bits(r[0]), f32_bits(r[1]), 0});
    auto r = run_lanes(std::string("setp.") + c.cmp + ".f32 %pd, %fa, %fb;", "pred", rows);
    for (size_t i = 0; i < in.size(); ++i)
      EXPECT_EQ(r[i] != 0, c.expect[i]) << c.cmp << " row " << i;
  }
}

TEST(EmuFloat, F64) {
  std::vector<std::array<uint64_t, 3>> rows = {{f64_bits(1.0 / 3), f64_bits(3.0), f64_bits(-1.0)}};
  auto r = run_lanes("fma.rn.f64 %dd, %da, %db, %dc;", "f64", rows);
  EXPECT_EQ(bits_f64(r[0]), std::fma(1.0 / 3, 3.0, -1.0));
  auto d = run_lanes("div.rn.f64 %dd, %da, %db;", "f64", rows);
  EXPECT_EQ(bits_f64(d[0]), (1.0 / 3) / 3.0);
  auto s = run_lanes("sqrt.rn.f64 %dd, %db;", "f64", rows);
  EXPECT_EQ(bits_f64(s[0]), std::sqrt(3.0));
}

TEST(EmuFloat, HalfAndBf16Packed) {
  // f16: 1.0 = 0x3C00, 2.0 = 0x4000, 0.5 = 0x3800, 65504 = 0x7BFF
  std::vector<std::array<uint64_t, 3>> rows = {
      {0x3C004000u, 0x38003800u, 0x3C003C00u}, // (lo 2.0, hi 1.0), (0.5, 0.5), (1, 1)
      {0x7BFF0000u, 0x7BFF0000u, 0}};
  auto add = run_lanes("add.f16x2 %rd, %ra, %rb;", "b32", rows);
  EXPECT_EQ(static_cast<uint32_t>(add[0]), 0x3E004100u);   // (1.5, 2.5)
  EXPECT_EQ(static_cast<uint32_t>(add[1]) >> 16, 0x7C00u); // overflow to inf
  auto fma = run_lanes("fma.rn.f16x2 %rd, %ra, %rb, %rc;", "b32", rows);
  EXPECT_EQ(static_cast<uint32_t>(fma[0]), 0x3E004000u); // (1*0.5+1, 2*0.5+1) = (1.5, 2.0)
  auto scalar = run_lanes("mul.f16 %hd, %ha, %hb;", "b16", rows);
  EXPECT_EQ(scalar[0], 0x3C00u); // 2.0 * 0.5
  // bf16: 1.0 = 0x3F80, 2.0 = 0x4000
  std::vector<std::array<uint64_t, 3>> brows = {{0x3F804000u, 0x3F803F80u, 0}};
  auto badd = run_lanes("add.rn.bf16x2 %rd, %ra, %rb;", "b32", brows, "sm_90");
  EXPECT_EQ(static_cast<uint32_t>(badd[0]), 0x40004040u); // (2.0, 3.0)
  auto neg = run_lanes("neg.f16x2 %rd, %ra;", "b32", rows);
  EXPECT_EQ(static_cast<uint32_t>(neg[0]), 0xBC00C000u);
  auto mx = run_lanes("max.f16x2 %rd, %ra, %rb;", "b32", rows);
  EXPECT_EQ(static_cast<uint32_t>(mx[0]), 0x3C004000u);
}

} // namespace
} // namespace tcjit::emu::test
