// Integer and bitwise instructions against C++ computations.
#include <gtest/gtest.h>

#include <bit>

#include "tests/emu/emu_test_util.h"

namespace tcjit::emu::test {
namespace {

const std::vector<std::array<uint64_t, 3>> kInputs = {
    {0, 0, 0},
    {1, 2, 3},
    {0xffffffffu, 1, 7},
    {0x80000000u, 0xffffffffu, 31},
    {12345678, 0x7fffffffu, 5},
    {0xdeadbeefu, 0x12345678u, 0x9abcdef0u},
    {0x7fffffffffffffffull, 2, 1},
    {0x8000000000000000ull, 0xffffffffffffffffull, 65},
};

uint32_t lo(uint64_t v) {
  return static_cast<uint32_t>(v);
}
int32_t slo(uint64_t v) {
  return static_cast<int32_t>(v);
}

void expect32(const std::string &snippet, uint32_t (*f)(uint64_t, uint64_t, uint64_t)) {
  auto r = run_lanes(snippet, "b32", kInputs);
  for (size_t i = 0; i < kInputs.size(); ++i) {
    EXPECT_EQ(lo(r[i]), f(kInputs[i][0], kInputs[i][1], kInputs[i][2])) << snippet << " row " << i;
  }
}

void expect64(const std::string &snippet, uint64_t (*f)(uint64_t, uint64_t, uint64_t)) {
  auto r = run_lanes(snippet, "b64", kInputs);
  for (size_t i = 0; i < kInputs.size(); ++i)
    EXPECT_EQ(r[i], f(kInputs[i][0], kInputs[i][1], kInputs[i][2])) << snippet << " row " << i;
}

TEST(EmuInteger, AddSubMul) {
  expect32("add.s32 %rd, %ra, %rb;",
           [](uint64_t a, uint64_t b, uint64_t) { return lo(a) + lo(b); });
  expect32("sub.u32 %rd, %ra, %rb;",
           [](uint64_t a, uint64_t b, uint64_t) { return lo(a) - lo(b); });
  expect32("add.sat.s32 %rd, %ra, %rb;", [](uint64_t a, uint64_t b, uint64_t) {
    int64_t s = int64_t(slo(a)) + slo(b);
    return uint32_t(int32_t(std::clamp<int64_t>(s, INT32_MIN, INT32_MAX)));
  });
  expect32("mul.lo.u32 %rd, %ra, %rb;",
           [](uint64_t a, uint64_t b, uint64_t) { return lo(a) * lo(b); });
  expect32("mul.hi.s32 %rd, %ra, %rb;", [](uint64_t a, uint64_t b, uint64_t) {
    return uint32_t((int64_t(slo(a)) * slo(b)) >> 32);
  });
  expect32("mul.hi.u32 %rd, %ra, %rb;", [](uint64_t a, uint64_t b, uint64_t) {
    return uint32_t((uint64_t(lo(a)) * lo(b)) >> 32);
  });
  expect64("mul.wide.s32 %d, %ra, %rb;",
           [](uint64_t a, uint64_t b, uint64_t) { return uint64_t(int64_t(slo(a)) * slo(b)); });
  expect64("mul.wide.u32 %d, %ra, %rb;",
           [](uint64_t a, uint64_t b, uint64_t) { return uint64_t(lo(a)) * lo(b); });
  expect32("mad.lo.s32 %rd, %ra, %rb, %rc;",
           [](uint64_t a, uint64_t b, uint64_t c) { return lo(a) * lo(b) + lo(c); });
  expect64("mad.wide.u32 %d, %ra, %rb, %c;",
           [](uint64_t a, uint64_t b, uint64_t c) { return uint64_t(lo(a)) * lo(b) + c; });
  expect64("mul.hi.u64 %d, %a, %b;", [](uint64_t a, uint64_t b, uint64_t) {
    return uint64_t((static_cast<unsigned __int128>(a) * b) >> 64);
  });
  expect64("add.s64 %d, %a, %b;", [](uint64_t a, uint64_t b, uint64_t) { return a + b; });
  // 64-bit add through carries
  expect64(R"(
    .reg .b32 %l, %h, %x, %y;
    mov.b64 {%l, %h}, %a;
    mov.b64 {%x, %y}, %b;
    add.cc.u32 %l, %l, %x;
    addc.u32 %h, %h, %y;
    mov.b64 %d, {%l, %h};
  )",
           [](uint64_t a, uint64_t b, uint64_t) { return a + b; });
  expect64(R"(
    .reg .b32 %l, %h, %x, %y;
    mov.b64 {%l, %h}, %a;
    mov.b64 {%x, %y}, %b;
    sub.cc.u32 %l, %l, %x;
    subc.u32 %h, %h, %y;
    mov.b64 %d, {%l, %h};
  )",
           [](uint64_t a, uint64_t b, uint64_t) { return a - b; });
}

TEST(EmuInteger, DivRemMinMaxAbsNeg) {
  expect32("div.u32 %rd, %ra, %rb;",
           [](uint64_t a, uint64_t b, uint64_t) { return lo(b) ? lo(a) / lo(b) : 0xffffffffu; });
  expect32("rem.s32 %rd, %ra, %rc;", [](uint64_t a, uint64_t, uint64_t c) {
    return slo(c) ? uint32_t(slo(a) % slo(c)) : lo(a);
  });
  expect32("min.s32 %rd, %ra, %rb;",
           [](uint64_t a, uint64_t b, uint64_t) { return uint32_t(std::min(slo(a), slo(b))); });
  expect32("max.u32 %rd, %ra, %rb;",
           [](uint64_t a, uint64_t b, uint64_t) { return std::max(lo(a), lo(b)); });
  expect32("abs.s32 %rd, %ra;",
           [](uint64_t a, uint64_t, uint64_t) { return slo(a) < 0 ? 0u - lo(a) : lo(a); });
  expect32("neg.s32 %rd, %ra;", [](uint64_t a, uint64_t, uint64_t) { return 0u - lo(a); });
}

TEST(EmuInteger, ShiftsAndBitFields) {
  expect32("shl.b32 %rd, %ra, %rc;",
           [](uint64_t a, uint64_t, uint64_t c) { return lo(c) >= 32 ? 0u : lo(a) << lo(c); });
  expect32("shr.u32 %rd, %ra, %rc;",
           [](uint64_t a, uint64_t, uint64_t c) { return lo(c) >= 32 ? 0u : lo(a) >> lo(c); });
  expect32("shr.s32 %rd, %ra, %rc;", [](uint64_t a, uint64_t, uint64_t c) {
    return uint32_t(slo(a) >> std::min(lo(c), 31u));
  });
  expect32("shf.l.wrap.b32 %rd, %ra, %rb, %rc;", [](uint64_t a, uint64_t b, uint64_t c) {
    uint64_t v = (uint64_t(lo(b)) << 32) | lo(a);
    return uint32_t((v << (lo(c) & 31)) >> 32);
  });
  expect32("shf.r.clamp.b32 %rd, %ra, %rb, %rc;", [](uint64_t a, uint64_t b, uint64_t c) {
    uint64_t v = (uint64_t(lo(b)) << 32) | lo(a);
    return uint32_t(v >> std::min(lo(c), 32u));
  });
  expect32("bfe.u32 %rd, %ra, 4, 8;",
           [](uint64_t a, uint64_t, uint64_t) { return (lo(a) >> 4) & 0xff; });
  expect32("bfe.s32 %rd, %ra, 24, 8;",
           [](uint64_t a, uint64_t, uint64_t) { return uint32_t(int32_t(lo(a)) >> 24); });
  expect32("bfi.b32 %rd, %ra, %rb, 8, 4;", [](uint64_t a, uint64_t b, uint64_t) {
    return (lo(b) & ~0xf00u) | ((lo(a) & 0xf) << 8);
  });
  expect32("popc.b32 %rd, %ra;",
           [](uint64_t a, uint64_t, uint64_t) { return uint32_t(std::popcount(lo(a))); });
  expect32("clz.b32 %rd, %ra;",
           [](uint64_t a, uint64_t, uint64_t) { return uint32_t(std::countl_zero(lo(a))); });
  expect32("brev.b32 %rd, %ra;", [](uint64_t a, uint64_t, uint64_t) {
    uint32_t v = lo(a), r = 0;
    for (int i = 0; i < 32; ++i)
      r |= ((v >> i) & 1u) << (31 - i);
    return r;
  });
  expect32("bfind.u32 %rd, %ra;", [](uint64_t a, uint64_t, uint64_t) {
    return lo(a) ? 31u - uint32_t(std::countl_zero(lo(a))) : 0xffffffffu;
  });
  expect32("prmt.b32 %rd, %ra, %rb, 0x3210;", [](uint64_t a, uint64_t, uint64_t) { return lo(a); });
  expect32("prmt.b32 %rd, %ra, %rb, 0x7654;", [](uint64_t, uint64_t b, uint64_t) { return lo(b); });
  expect32("prmt.b32 %rd, %ra, %rb, 0x0123;", [](uint64_t a, uint64_t, uint64_t) {
    uint32_t v = lo(a);
    return (v >> 24) | ((v >> 8) & 0xff00u) | ((v << 8) & 0xff0000u) | (v << 24);
  });
  expect32("prmt.b32 %rd, %ra, %rb, 0x8888;",
           [](uint64_t a, uint64_t, uint64_t) { return (lo(a) & 0x80) ? 0xffffffffu : 0u; });
  expect32("lop3.b32 %rd, %ra, %rb, %rc, 0x96;",
           [](uint64_t a, uint64_t b, uint64_t c) { return lo(a) ^ lo(b) ^ lo(c); });
  expect32("lop3.b32 %rd, %ra, %rb, %rc, 0xe8;", [](uint64_t a, uint64_t b, uint64_t c) {
    return (lo(a) & lo(b)) | (lo(a) & lo(c)) | (lo(b) & lo(c));
  });
  expect32("and.b32 %rd, %ra, %rb;",
           [](uint64_t a, uint64_t b, uint64_t) { return lo(a) & lo(b); });
  expect32("or.b32 %rd, %ra, %rb;", [](uint64_t a, uint64_t b, uint64_t) { return lo(a) | lo(b); });
  expect32("xor.b32 %rd, %ra, %rb;",
           [](uint64_t a, uint64_t b, uint64_t) { return lo(a) ^ lo(b); });
  expect32("not.b32 %rd, %ra;", [](uint64_t a, uint64_t, uint64_t) { return ~lo(a); });
  expect32("cnot.b32 %rd, %ra;",
           [](uint64_t a, uint64_t, uint64_t) { return lo(a) == 0 ? 1u : 0u; });
}

TEST(EmuInteger, SetpSelpSlct) {
  expect32("setp.lt.s32 %pd, %ra, %rb; selp.u32 %rd, 1, 0, %pd;",
           [](uint64_t a, uint64_t b, uint64_t) { return slo(a) < slo(b) ? 1u : 0u; });
  expect32("setp.lo.u32 %pd, %ra, %rb; selp.u32 %rd, 1, 0, %pd;",
           [](uint64_t a, uint64_t b, uint64_t) { return lo(a) < lo(b) ? 1u : 0u; });
  expect32("setp.ne.and.u32 %pd, %ra, %rb, %q; selp.u32 %rd, 1, 0, %pd;",
           [](uint64_t a, uint64_t b, uint64_t) { return (lo(a) != lo(b)) && (b & 1) ? 1u : 0u; });
  expect32(
      "setp.eq.xor.u32 %pd, %ra, %rb, !%q; selp.u32 %rd, 1, 0, %pd;",
      [](uint64_t a, uint64_t b, uint64_t) { return ((lo(a) == lo(b)) != !(b & 1)) ? 1u : 0u; });
  expect32(".reg .pred %x, %y; setp.gt.s32 %x|%y, %ra, %rb; selp.u32 %rd, 1, 0, %y;",
           [](uint64_t a, uint64_t b, uint64_t) { return slo(a) > slo(b) ? 0u : 1u; });
  expect32("slct.u32.s32 %rd, %ra, %rb, %rc;",
           [](uint64_t a, uint64_t b, uint64_t c) { return slo(c) >= 0 ? lo(a) : lo(b); });
  expect32("and.pred %pd, %p, %q; selp.u32 %rd, 1, 0, %pd;",
           [](uint64_t a, uint64_t b, uint64_t) { return (a & 1) && (b & 1) ? 1u : 0u; });
  expect32("xor.pred %pd, %p, %q; not.pred %pd, %pd; selp.u32 %rd, 1, 0, %pd;",
           [](uint64_t a, uint64_t b, uint64_t) { return ((a & 1) ^ (b & 1)) ? 0u : 1u; });
}

TEST(EmuInteger, MovPackUnpackAndSpecialRegisters) {
  expect64(".reg .b16 %x, %y, %z, %w; mov.b64 {%x, %y, %z, %w}, %a; mov.b64 %d, {%w, %z, %y, %x};",
           [](uint64_t a, uint64_t, uint64_t) -> uint64_t {
             return (a >> 48) | ((a >> 16) & 0xffff0000ull) | ((a << 16) & 0xffff00000000ull) |
                    (a << 48);
           });
  auto r = run_lanes(
      "mov.u32 %rd, %laneid; mov.u32 %rc, %lanemask_lt; shl.b32 %rc, %rc, 8; or.b32 %rd, %rd, %rc;",
      "b32", std::vector<std::array<uint64_t, 3>>(40));
  for (uint32_t i = 0; i < 40; ++i)
    EXPECT_EQ(lo(r[i]), (i % 32) | (((1u << (i % 32)) - 1) << 8)) << i;
}

} // namespace
} // namespace tcjit::emu::test
