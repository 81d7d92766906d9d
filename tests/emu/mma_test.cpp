// mma.sync: every supported shape and type against a CPU product, with the fragments packed and
// unpacked by this file's own implementation of the PTX ISA fragment tables.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <functional>

#include "runtime/emu/float_format.h"
#include "tests/emu/emu_test_util.h"

namespace tcjit::emu::test {
namespace {

struct Coord {
  int row, col;
};
using Layout = std::function<Coord(int g, int q, int i)>;

struct MmaCase {
  std::string instr;
  int m, n, k;
  int a_regs, b_regs, c_regs, d_regs;
  int a_bits, b_bits; // element width inside a register
  Layout a, b, c;     // b gives (k, n)
  std::string c_type; // f32 f16 s32 f64
  std::function<uint32_t(double)> encode_a, encode_b;
  std::function<double(double)> value_a, value_b; // the value the hardware uses
  bool satfinite = false;
  std::string header = {}; // the module's .version/.target/.address_size lines ("": ptx_module's)
};

uint32_t enc_f16(double v) {
  return f32_to_f16_bits(static_cast<float>(v));
}
uint32_t enc_bf16(double v) {
  return f32_to_bf16_bits(static_cast<float>(v));
}
uint32_t enc_int(double v) {
  return static_cast<uint32_t>(static_cast<int32_t>(v));
}
double same(double v) {
  return v;
}

Coord c_layout(int g, int q, int i) {
  return {g + (i >= 2 ? 8 : 0), 2 * q + (i & 1)};
}

// Runs one mma on the emulator with A, B, C given as dense matrices; returns D.
std::vector<double> run_mma(const MmaCase &mc, const std::vector<double> &A,
                            const std::vector<double> &B, const std::vector<double> &C) {
  const bool f64 = mc.c_type == "f64";
  const int wb = f64 ? 8 : 4; // register bytes
  const int nin = mc.a_regs + mc.b_regs + mc.c_regs;
  std::string regs = f64 ? ".b64" : ".b32";
  std::string body = ".visible .entry mma(.param .u64 in, .param .u64 out)\n{\n";
  body += "  .reg " + regs + " %a<" + std::to_string(mc.a_regs) + ">, %b<" +
          std::to_string(mc.b_regs) + ">, %c<" + std::to_string(mc.c_regs) + ">, %d<" +
          std::to_string(mc.d_regs) + ">;\n";
  body += "  .reg .b64 %p, %t;\n  .reg .b32 %lane;\n  mov.u32 %lane, %laneid;\n";
  body += "  ld.param.u64 %p, [in];\n  mul.wide.u32 %t, %lane, " + std::to_string(nin * wb) +
          ";\n  add.u64 %p, %p, %t;\n";
  int off = 0;
  std::string ld = f64 ? "ld.global.b64 " : "ld.global.b32 ";
  auto list = [&](const char *name, int count) {
    std::string s = "{";
    for (int i = 0; i < count; ++i)
      s += std::string(i ? ", " : "") + "%" + name + std::to_string(i);
    return s + "}";
  };
  for (int i = 0; i < mc.a_regs; ++i, off += wb)
    body += "  " + ld + "%a" + std::to_string(i) + ", [%p+" + std::to_string(off) + "];\n";
  for (int i = 0; i < mc.b_regs; ++i, off += wb)
    body += "  " + ld + "%b" + std::to_string(i) + ", [%p+" + std::to_string(off) + "];\n";
  for (int i = 0; i < mc.c_regs; ++i, off += wb)
    body += "  " + ld + "%c" + std::to_string(i) + ", [%p+" + std::to_string(off) + "];\n";
  body += "  " + mc.instr + " " + list("d", mc.d_regs) + ", " + list("a", mc.a_regs) + ", " +
          list("b", mc.b_regs) + ", " + list("c", mc.c_regs) + ";\n";
  body += "  ld.param.u64 %p, [out];\n  mul.wide.u32 %t, %lane, " + std::to_string(mc.d_regs * wb) +
          ";\n  add.u64 %p, %p, %t;\n";
  for (int i = 0; i < mc.d_regs; ++i)
    body += std::string("  ") + (f64 ? "st.global.b64" : "st.global.b32") + " [%p+" +
            std::to_string(i * wb) + "], %d" + std::to_string(i) + ";\n";
  body += "  ret;\n}\n";

  // pack the fragments
  std::vector<uint64_t> in(32 * nin, 0);
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, q = lane % 4;
    uint64_t *regs_out = in.data() + lane * nin;
    const int a_per = f64 ? 1 : 32 / mc.a_bits, b_per = f64 ? 1 : 32 / mc.b_bits;
    for (int i = 0; i < mc.a_regs * a_per; ++i) {
      Coord co = mc.a(g, q, i);
      uint64_t bits =
          f64 ? f64_bits(A[co.row * mc.k + co.col]) : mc.encode_a(A[co.row * mc.k + co.col]);
      if (!f64 && mc.a_bits < 32)
        bits &= (1ull << mc.a_bits) - 1;
      regs_out[i / a_per] |= f64 ? bits : bits << ((i % a_per) * mc.a_bits);
    }
    for (int i = 0; i < mc.b_regs * b_per; ++i) {
      Coord co = mc.b(g, q, i); // (k, n)
      uint64_t bits =
          f64 ? f64_bits(B[co.row * mc.n + co.col]) : mc.encode_b(B[co.row * mc.n + co.col]);
      if (!f64 && mc.b_bits < 32)
        bits &= (1ull << mc.b_bits) - 1;
      regs_out[mc.a_regs + i / b_per] |= f64 ? bits : bits << ((i % b_per) * mc.b_bits);
    }
    const int c_elems = f64 ? 2 : 4;
    for (int i = 0; i < c_elems; ++i) {
      Coord co = mc.c(g, q, i);
      double v = C[co.row * mc.n + co.col];
      uint64_t *c = regs_out + mc.a_regs + mc.b_regs;
      if (mc.c_type == "f16")
        c[i / 2] |= uint64_t{enc_f16(v)} << (16 * (i % 2));
      else if (mc.c_type == "f32")
        c[i] = f32_bits(static_cast<float>(v));
      else if (mc.c_type == "s32")
        c[i] = enc_int(v);
      else
        c[i] = f64_bits(v);
    }
  }
  // the device buffer holds registers of `wb` bytes
  std::vector<uint8_t> bytes(in.size() * wb);
  for (size_t i = 0; i < in.size(); ++i)
    std::memcpy(bytes.data() + i * wb, &in[i], wb);
  EmuDevice dev;
  auto din = upload(dev, bytes);
  auto dout = dev.allocate(32 * mc.d_regs * wb);
  launch(dev, mc.header.empty() ? ptx_module(body) : mc.header + body, "mma", {1, 1, 1}, {32, 1, 1},
         {Arg::of(din), Arg::of(dout)});
  auto out = download<uint8_t>(dev, dout, 32 * mc.d_regs * wb);
  std::vector<double> D(mc.m * mc.n, 0);
  const std::string d_type =
      mc.instr.find(".f16.f16.f16.f16") != std::string::npos ? "f16" : mc.c_type;
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, q = lane % 4;
    const int elems = f64 ? 2 : 4;
    for (int i = 0; i < elems; ++i) {
      Coord co = mc.c(g, q, i);
      uint64_t r = 0;
      if (d_type == "f16") {
        std::memcpy(&r, out.data() + (lane * mc.d_regs + i / 2) * wb, wb);
        D[co.row * mc.n + co.col] =
            static_cast<double>(decode_small_float((r >> (16 * (i % 2))) & 0xffff, kF16));
        continue;
      }
      std::memcpy(&r, out.data() + (lane * mc.d_regs + i) * wb, wb);
      double v =
          d_type == "f32" ? bits_f32(r) : (d_type == "s32" ? double(int32_t(r)) : bits_f64(r));
      D[co.row * mc.n + co.col] = v;
    }
  }
  return D;
}

// A's values in [lo, hi], B's in [b_lo, b_hi] (mixed-type forms), both times scale.
void check(const MmaCase &mc, int lo, int hi, double scale, int b_lo, int b_hi) {
  std::vector<double> A(mc.m * mc.k), B(mc.k * mc.n), C(mc.m * mc.n);
  const int span = hi - lo + 1, b_span = b_hi - b_lo + 1;
  for (int i = 0; i < mc.m * mc.k; ++i)
    A[i] = ((i * 7 + 3) % span + lo) * scale;
  for (int i = 0; i < mc.k * mc.n; ++i)
    B[i] = ((i * 5 + 1) % b_span + b_lo) * scale;
  for (int i = 0; i < mc.m * mc.n; ++i)
    C[i] = (i % 5) - 2;
  auto D = run_mma(mc, A, B, C);
  for (int m = 0; m < mc.m; ++m)
    for (int n = 0; n < mc.n; ++n) {
      double acc = C[m * mc.n + n];
      for (int k = 0; k < mc.k; ++k)
        acc += mc.value_a(A[m * mc.k + k]) * mc.value_b(B[k * mc.n + n]);
      if (mc.satfinite)
        acc = std::min(std::max(acc, -2147483648.0), 2147483647.0);
      ASSERT_EQ(D[m * mc.n + n], acc) << mc.instr << " at " << m << "," << n;
    }
}

void check(const MmaCase &mc, int lo, int hi, double scale) {
  check(mc, lo, hi, scale, lo, hi);
}

Layout f16_a_k16 = [](int g, int q, int i) -> Coord {
  return {g + ((i >> 1) & 1) * 8, 2 * q + (i & 1) + (i >= 4 ? 8 : 0)};
};
Layout f16_b_k16 = [](int g, int q, int i) -> Coord {
  return {2 * q + (i & 1) + (i >= 2 ? 8 : 0), g};
};
Layout f16_a_k8 = [](int g, int q, int i) -> Coord { return {g + (i >> 1) * 8, 2 * q + (i & 1)}; };
Layout f16_b_k8 = [](int g, int q, int i) -> Coord { return {2 * q + i, g}; };

// m16n8k16 f16 inputs, f32 accumulators.
MmaCase f16_k16_case() {
  return {"mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
          16,
          8,
          16,
          4,
          2,
          4,
          4,
          16,
          16,
          f16_a_k16,
          f16_b_k16,
          c_layout,
          "f32",
          enc_f16,
          enc_f16,
          same,
          same};
}

TEST(EmuMma, F16AndBf16) {
  MmaCase mc = f16_k16_case();
  check(mc, -8, 8, 0.25);
  MmaCase h = mc;
  h.instr = "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16";
  h.c_type = "f16";
  h.c_regs = 2;
  h.d_regs = 2;
  check(h, -4, 4, 0.5);
  MmaCase b = mc;
  b.instr = "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32";
  b.encode_a = b.encode_b = enc_bf16;
  check(b, -8, 8, 0.125);
  MmaCase k8{"mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32",
             16,
             8,
             8,
             2,
             1,
             4,
             4,
             16,
             16,
             f16_a_k8,
             f16_b_k8,
             c_layout,
             "f32",
             enc_f16,
             enc_f16,
             same,
             same};
  check(k8, -8, 8, 0.25);
  k8.instr = "mma.sync.aligned.m16n8k8.row.col.f32.bf16.bf16.f32";
  k8.encode_a = k8.encode_b = enc_bf16;
  check(k8, -8, 8, 0.25);
}

// A NaN or an infinity in B (the vectorized B decode hands NaN inputs to the exact path).
TEST(EmuMma, NanAndInfinityInHalfB) {
  MmaCase mc = f16_k16_case();
  for (int bf16 = 0; bf16 < 2; ++bf16) {
    if (bf16) {
      mc.instr = "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32";
      mc.encode_a = mc.encode_b = enc_bf16;
    }
    std::vector<double> A(16 * 16, 1.0), B(16 * 8), C(16 * 8, 0.0);
    for (int i = 0; i < 16 * 8; ++i)
      B[i] = (i % 7 - 3) * 0.5;
    B[3 * 8 + 5] = std::nan("");
    B[7 * 8 + 2] = INFINITY;
    const auto D = run_mma(mc, A, B, C);
    for (int m = 0; m < 16; ++m)
      for (int n = 0; n < 8; ++n) {
        double want = 0;
        for (int k = 0; k < 16; ++k)
          want += B[k * 8 + n];
        if (n == 5)
          EXPECT_TRUE(std::isnan(D[m * 8 + n])) << mc.instr << " row " << m;
        else
          EXPECT_EQ(D[m * 8 + n], want) << mc.instr << " at " << m << "," << n;
      }
  }
}

// A NaN or an infinity in C (f32 accumulators, gathered by the vectorized C path) reaches the
// same element of D and no other; finite C elements add to the exact products.
TEST(EmuMma, NanAndInfinityInC) {
  MmaCase mc = f16_k16_case();
  std::vector<double> A(16 * 16, 0.5), B(16 * 8, 0.25), C(16 * 8);
  for (int i = 0; i < 16 * 8; ++i)
    C[i] = i - 40.5;
  C[2 * 8 + 3] = std::nan("");
  C[9 * 8 + 6] = -INFINITY;
  C[15 * 8 + 7] = std::nan("");
  const auto D = run_mma(mc, A, B, C);
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 8; ++n) {
      const int e = m * 8 + n;
      if (std::isnan(C[e]))
        EXPECT_TRUE(std::isnan(D[e])) << "row " << m << " col " << n;
      else
        EXPECT_EQ(D[e], C[e] + 16 * 0.5 * 0.25) << "row " << m << " col " << n;
    }
}

TEST(EmuMma, Tf32UsesUpper19Bits) {
  // values with low mantissa bits set: the mma must ignore the lower 13 bits
  auto enc = [](double v) {
    return static_cast<uint32_t>(f32_bits(static_cast<float>(v)) | 0x1fffu);
  };
  auto val = [](double v) {
    return static_cast<double>(bits_f32(f32_bits(static_cast<float>(v)) & ~0x1fffull));
  };
  MmaCase mc{"mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32",
             16,
             8,
             8,
             4,
             2,
             4,
             4,
             32,
             32,
             [](int g, int q, int i) -> Coord {
               return {g + (i & 1) * 8, q + (i >> 1) * 4};
             },
             [](int g, int q, int i) -> Coord {
               return {q + i * 4, g};
             },
             c_layout,
             "f32",
             enc,
             enc,
             val,
             val};
  check(mc, -8, 8, 0.25);
  MmaCase k4{"mma.sync.aligned.m16n8k4.row.col.f32.tf32.tf32.f32",
             16,
             8,
             4,
             2,
             1,
             4,
             4,
             32,
             32,
             [](int g, int q, int i) -> Coord {
               return {g + i * 8, q};
             },
             [](int g, int q, int) -> Coord {
               return {q, g};
             },
             c_layout,
             "f32",
             enc,
             enc,
             val,
             val};
  check(k4, -8, 8, 0.5);
}

TEST(EmuMma, Integer8And4) {
  MmaCase s8{"mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32",
             16,
             8,
             32,
             4,
             2,
             4,
             4,
             8,
             8,
             [](int g, int q, int i) -> Coord {
               return {g + ((i >> 2) & 1) * 8, 4 * q + (i & 3) + (i >= 8 ? 16 : 0)};
             },
             [](int g, int q, int i) -> Coord {
               return {4 * q + (i & 3) + (i >= 4 ? 16 : 0), g};
             },
             c_layout,
             "s32",
             enc_int,
             enc_int,
             same,
             same};
  check(s8, -128, 127, 1);
  MmaCase u8 = s8;
  u8.instr = "mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32";
  check(u8, 0, 255, 1);
  // mixed: A and B each decoded by its own type (a byte 0x80.. is -128.. as s8, 128.. as u8)
  MmaCase s8u8 = s8;
  s8u8.instr = "mma.sync.aligned.m16n8k32.row.col.s32.s8.u8.s32";
  check(s8u8, -128, 127, 1, 0, 255);
  MmaCase u8s8 = s8;
  u8s8.instr = "mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32";
  check(u8s8, 0, 255, 1, -128, 127);
  MmaCase k16{"mma.sync.aligned.m16n8k16.row.col.s32.s8.s8.s32",
              16,
              8,
              16,
              2,
              1,
              4,
              4,
              8,
              8,
              [](int g, int q, int i) -> Coord {
                return {g + (i >> 2) * 8, 4 * q + (i & 3)};
              },
              [](int g, int q, int i) -> Coord {
                return {4 * q + i, g};
              },
              c_layout,
              "s32",
              enc_int,
              enc_int,
              same,
              same};
  check(k16, -100, 100, 1);
  MmaCase s4{"mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32",
             16,
             8,
             64,
             4,
             2,
             4,
             4,
             4,
             4,
             [](int g, int q, int i) -> Coord {
               return {g + ((i >> 3) & 1) * 8, 8 * q + (i & 7) + (i >= 16 ? 32 : 0)};
             },
             [](int g, int q, int i) -> Coord {
               return {8 * q + (i & 7) + (i >= 8 ? 32 : 0), g};
             },
             c_layout,
             "s32",
             enc_int,
             enc_int,
             same,
             same};
  check(s4, -8, 7, 1);
  MmaCase u4 = s4;
  u4.instr = "mma.sync.aligned.m16n8k64.row.col.s32.u4.u4.s32";
  check(u4, 0, 15, 1);
}

// The fp8 formats by hand, from the OCP 8-bit float specification: e4m3 bias 7, no infinities,
// NaN only at S.1111.111 (max 448); e5m2 bias 15, IEEE infinities and NaNs (max 57344).
double fp8_value(uint32_t byte, bool e4m3) {
  const int fraction_bits = e4m3 ? 3 : 2, bias = e4m3 ? 7 : 15;
  const int exponent = static_cast<int>((byte & 0x7f) >> fraction_bits);
  const int fraction = static_cast<int>(byte) & ((1 << fraction_bits) - 1);
  const double sign = (byte & 0x80) ? -1 : 1;
  if (e4m3 && exponent == 15 && fraction == 7)
    return std::nan("");
  if (!e4m3 && exponent == 31)
    return fraction ? std::nan("") : sign * INFINITY;
  if (exponent == 0)
    return sign * std::ldexp(fraction, 1 - bias - fraction_bits);
  return sign * std::ldexp((1 << fraction_bits) + fraction, exponent - bias - fraction_bits);
}

// The byte that holds `v` exactly (the test's values are all representable).
uint32_t fp8_bits(double v, bool e4m3) {
  for (uint32_t b = 0; b < 256; ++b)
    if (fp8_value(b, e4m3) == v && std::signbit(fp8_value(b, e4m3)) == std::signbit(v))
      return b;
  ADD_FAILURE() << v << " is not an " << (e4m3 ? "e4m3" : "e5m2") << " value";
  return 0;
}

const std::string kFp8Header = ".version 8.4\n.target sm_89\n.address_size 64\n";

MmaCase fp8_case(bool a_e4m3, bool b_e4m3) {
  const std::string a = a_e4m3 ? "e4m3" : "e5m2", b = b_e4m3 ? "e4m3" : "e5m2";
  MmaCase c{"mma.sync.aligned.m16n8k32.row.col.f32." + a + "." + b + ".f32",
            16,
            8,
            32,
            4,
            2,
            4,
            4,
            8,
            8,
            [](int g, int q, int i) -> Coord {
              return {g + ((i >> 2) & 1) * 8, 4 * q + (i & 3) + (i >= 8 ? 16 : 0)};
            },
            [](int g, int q, int i) -> Coord {
              return {4 * q + (i & 3) + (i >= 4 ? 16 : 0), g};
            },
            c_layout,
            "f32",
            [a_e4m3](double v) { return fp8_bits(v, a_e4m3); },
            [b_e4m3](double v) { return fp8_bits(v, b_e4m3); },
            same,
            same};
  c.header = kFp8Header;
  return c;
}

// Every pair of e4m3/e5m2 with values k/4, |k| <= 8 (exact in both formats; every product and
// partial sum is exact in f32, so D is the exact sum).
TEST(EmuMma, Fp8AllPairs) {
  for (bool a : {true, false})
    for (bool b : {true, false}) {
      SCOPED_TRACE(fp8_case(a, b).instr);
      check(fp8_case(a, b), -8, 8, 0.25);
    }
}

// Special and extreme inputs, with results computed by hand: e4m3's max (0x7E = 448), smallest
// subnormal (0x01 = 2^-9) and NaN (0x7F); e5m2's max (0x7B = 57344), smallest subnormal (0x01 =
// 2^-16), infinity (0x7C), NaN (0x7D) and 1 (0x3C). A is e4m3, B e5m2 (the mixed form).
TEST(EmuMma, Fp8SpecialValues) {
  MmaCase mc = fp8_case(true, false);
  mc.encode_a = [](double bits) { return static_cast<uint32_t>(bits); }; // the matrices hold bytes
  mc.encode_b = mc.encode_a;
  std::vector<double> A(16 * 32, 0), B(32 * 8, 0), C(16 * 8, 0);
  A[0 * 32 + 0] = 0x7E;  // 448
  A[1 * 32 + 0] = 0x01;  // 2^-9
  A[2 * 32 + 1] = 0x7F;  // NaN
  A[3 * 32 + 5] = 0xFE;  // -448
  A[4 * 32 + 31] = 0x80; // -0
  B[0 * 8 + 0] = 0x7B;   // 57344
  B[0 * 8 + 1] = 0x01;   // 2^-16
  B[0 * 8 + 2] = 0x7C;   // +inf
  B[5 * 8 + 3] = 0x3C;   // 1
  B[31 * 8 + 4] = 0x7D;  // NaN
  C[5 * 8 + 5] = 0.5;
  const std::vector<double> D = run_mma(mc, A, B, C);
  auto d = [&](int m, int n) { return D[m * 8 + n]; };
  EXPECT_EQ(d(0, 0), 25690112.0); // 448 * 57344 = 49 * 2^19, exact in f32
  EXPECT_EQ(d(0, 1), 448.0 / 65536);
  EXPECT_EQ(d(0, 2), INFINITY);
  EXPECT_EQ(d(1, 0), 112.0); // 2^-9 * 57344
  EXPECT_EQ(d(1, 1), 0x1p-25);
  EXPECT_EQ(d(1, 2), INFINITY);
  EXPECT_EQ(d(3, 3), -448.0);
  EXPECT_EQ(d(5, 5), 0.5); // C passes through
  for (int n = 0; n < 8; ++n)
    EXPECT_TRUE(std::isnan(d(2, n))) << "NaN in A row 2 reaches column " << n;
  for (int m = 0; m < 16; ++m) {
    EXPECT_TRUE(std::isnan(d(m, 4))) << "NaN in B column 4 reaches row " << m;
    if (m >= 3) { // 0 * inf: A[m][0] = 0 for these rows
      EXPECT_TRUE(std::isnan(d(m, 2))) << "0 * inf at row " << m;
    }
  }
  EXPECT_EQ(d(6, 0), 0.0);
}

// The decoders behind the mma, against the hand-written formulas, for every byte.
TEST(EmuMma, Fp8DecodeTablesMatchTheFormats) {
  for (uint32_t b = 0; b < 256; ++b) {
    const double e4m3 = fp8_value(b, true), e5m2 = fp8_value(b, false);
    if (std::isnan(e4m3))
      EXPECT_TRUE(std::isnan(e4m3_table()[b])) << b;
    else
      EXPECT_EQ(e4m3_table()[b], e4m3) << b;
    if (std::isnan(e5m2))
      EXPECT_TRUE(std::isnan(e5m2_table()[b])) << b;
    else
      EXPECT_EQ(e5m2_table()[b], e5m2) << b;
  }
  EXPECT_EQ(e4m3_table()[0x7E], 448.0f);
  EXPECT_EQ(e5m2_table()[0x7B], 57344.0f);
  EXPECT_EQ(e4m3_table()[0x08], 0x1p-6f); // smallest normal
  EXPECT_EQ(e5m2_table()[0x04], 0x1p-14f);
}

// PTX ISA: fp8 mma needs .version 8.4 and .target sm_89 (ptxas's words).
TEST(EmuMma, Fp8NeedsPtx84AndSm89) {
  const std::string body = ".visible .entry k()\n{\n  .reg .b32 %r<6>;\n  .reg .f32 %f<8>;\n"
                           "  mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e5m2.f32 {%f0, %f1, %f2, "
                           "%f3}, {%r0, %r1, %r2, %r3}, {%r4, %r5}, {%f4, %f5, %f6, %f7};\n  "
                           "ret;\n}\n";
  EXPECT_EQ(load_error(kFp8Header + body), "");
  EXPECT_NE(load_error(".version 8.3\n.target sm_89\n.address_size 64\n" + body)
                .find("requires PTX ISA .version 8.4 or later"),
            std::string::npos);
  EXPECT_NE(load_error(".version 8.4\n.target sm_86\n.address_size 64\n" + body)
                .find("requires .target sm_89 or higher"),
            std::string::npos);
}

// Single-bit mma, hand-computed: the PTX ISA's fragments for mma.m16n8k256 (m16n8k128) .b1: bit
// j of A's register r holds row g + 8 * (r % 2), k = 32 q + j + 128 * (r / 2); bit j of B's
// register r holds k = 32 q + j + 128 * r, column g. D = C + popc(row AND/XOR column) over K.
MmaCase binary_case(const std::string &instr, int k) {
  return MmaCase{instr,
                 16,
                 8,
                 k,
                 k / 64,
                 k / 128,
                 4,
                 4,
                 1,
                 1,
                 [](int g, int q, int i) -> Coord {
                   return {g + ((i >> 5) & 1) * 8, 32 * q + (i & 31) + (i >= 64 ? 128 : 0)};
                 },
                 [](int g, int q, int i) -> Coord {
                   return {32 * q + (i & 31) + (i >= 32 ? 128 : 0), g};
                 },
                 c_layout,
                 "s32",
                 enc_int,
                 enc_int,
                 same,
                 same};
}

void check_binary(const MmaCase &mc, bool xor_popc) {
  std::vector<double> A(mc.m * mc.k), B(mc.k * mc.n), C(mc.m * mc.n);
  for (int i = 0; i < mc.m * mc.k; ++i)
    A[i] = (i * 7 + i / 5) % 3 == 0; // about a third set, rows and columns all different
  for (int i = 0; i < mc.k * mc.n; ++i)
    B[i] = (i * 5 + i / 11) % 2;
  for (int i = 0; i < mc.m * mc.n; ++i)
    C[i] = (i % 7) - 3;
  const std::vector<double> D = run_mma(mc, A, B, C);
  for (int m = 0; m < mc.m; ++m)
    for (int n = 0; n < mc.n; ++n) {
      double count = C[m * mc.n + n];
      for (int k = 0; k < mc.k; ++k) {
        const bool a = A[m * mc.k + k] != 0, b = B[k * mc.n + n] != 0;
        count += xor_popc ? a != b : a && b;
      }
      ASSERT_EQ(D[m * mc.n + n], count) << mc.instr << " at " << m << "," << n;
    }
}

TEST(EmuMma, BinaryAndXorPopc) {
  for (int k : {256, 128})
    for (bool x : {false, true}) {
      const std::string instr = "mma.sync.aligned.m16n8k" + std::to_string(k) +
                                ".row.col.s32.b1.b1.s32." + (x ? "xor" : "and") + ".popc";
      SCOPED_TRACE(instr);
      check_binary(binary_case(instr, k), x);
    }
  // One row, one column, by hand: A row 0 has k 0..39 set, B column 0 has k 32..99 set:
  // AND counts k 32..39 = 8, XOR counts k 0..31 and 40..99 = 92.
  for (bool x : {false, true}) {
    const MmaCase mc =
        binary_case(std::string("mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.") +
                        (x ? "xor" : "and") + ".popc",
                    256);
    std::vector<double> A(16 * 256, 0), B(256 * 8, 0), C(16 * 8, 0);
    for (int k = 0; k < 40; ++k)
      A[k] = 1;
    for (int k = 32; k < 100; ++k)
      B[k * 8] = 1;
    EXPECT_EQ(run_mma(mc, A, B, C)[0], x ? 92 : 8);
  }
}

TEST(EmuMma, BinaryNeedsAnOperation) {
  EmuDevice dev;
  for (const char *op : {"", ".popc", ".and", ".and.xor.popc"}) {
    const std::string body = ".visible .entry k()\n{\n  .reg .b32 %r<12>;\n"
                             "  mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32" +
                             std::string(op) +
                             " {%r0, %r1, %r2, %r3}, {%r4, %r5, %r6, %r7}, {%r8, %r9}, "
                             "{%r0, %r1, %r2, %r3};\n  ret;\n}\n";
    EXPECT_ANY_THROW(launch(dev, ptx_module(body), "k", {1, 1, 1}, {32, 1, 1}, {})) << op;
  }
  // .and needs PTX ISA 7.1 (ptxas: "Modifier '.and' on 'mma' requires PTX ISA .version 7.1"),
  // .xor.popc 7.0
  for (const char *op : {"and", "xor"}) {
    const std::string module = ".version 7.0\n.target sm_80\n.address_size 64\n"
                               ".visible .entry k()\n{\n  .reg .b32 %r<12>;\n"
                               "  mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32." +
                               std::string(op) +
                               ".popc {%r0, %r1, %r2, %r3}, {%r4, %r5, %r6, %r7}, {%r8, %r9}, "
                               "{%r0, %r1, %r2, %r3};\n  ret;\n}\n";
    if (std::string(op) == "and")
      EXPECT_ANY_THROW(launch(dev, module, "k", {1, 1, 1}, {32, 1, 1}, {}));
    else
      EXPECT_NO_THROW(launch(dev, module, "k", {1, 1, 1}, {32, 1, 1}, {}));
  }
}

TEST(EmuMma, IntegerSatfinite) {
  // C near INT32_MAX overflows: .satfinite clamps, without it the sum wraps
  MmaCase s8{"mma.sync.aligned.m16n8k32.row.col.satfinite.s32.s8.s8.s32",
             16,
             8,
             32,
             4,
             2,
             4,
             4,
             8,
             8,
             [](int g, int q, int i) -> Coord {
               return {g + ((i >> 2) & 1) * 8, 4 * q + (i & 3) + (i >= 8 ? 16 : 0)};
             },
             [](int g, int q, int i) -> Coord {
               return {4 * q + (i & 3) + (i >= 4 ? 16 : 0), g};
             },
             c_layout,
             "s32",
             enc_int,
             enc_int,
             same,
             same,
             true};
  std::vector<double> A(16 * 32, 127), B(32 * 8, 127), C(16 * 8, 2147483000.0);
  auto D = run_mma(s8, A, B, C);
  EXPECT_EQ(D[0], 2147483647.0);
  C.assign(16 * 8, -2147483000.0);
  A.assign(16 * 32, -128);
  D = run_mma(s8, A, B, C);
  EXPECT_EQ(D[0], -2147483648.0);
  // without .satfinite every element wraps to 32 bits
  s8.instr = "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32";
  s8.satfinite = false;
  A.assign(16 * 32, 127);
  C.assign(16 * 8, 2147483000.0);
  D = run_mma(s8, A, B, C);
  for (int e = 0; e < 16 * 8; ++e) // 2147483000 + 32 * 127 * 127 - 2^32
    ASSERT_EQ(D[e], 2147483000.0 + 32 * 127 * 127 - 4294967296.0) << "element " << e;
  A.assign(16 * 32, -128);
  C.assign(16 * 8, -2147483000.0);
  for (int e = 0; e < 16 * 8; ++e)
    C[e] += e; // distinct elements: a misplaced sum shows
  D = run_mma(s8, A, B, C);
  for (int e = 0; e < 16 * 8; ++e) // C - 32 * 128 * 127 + 2^32
    ASSERT_EQ(D[e], C[e] - 32 * 128 * 127 + 4294967296.0) << "element " << e;
}

// m8n8k4 f64: A row-major, B column-major, C/D two elements per lane.
MmaCase f64_case() {
  return {"mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64",
          8,
          8,
          4,
          1,
          1,
          2,
          2,
          64,
          64,
          [](int g, int q, int) -> Coord {
            return {g, q};
          },
          [](int g, int q, int) -> Coord {
            return {q, g};
          },
          [](int g, int q, int i) -> Coord {
            return {g, 2 * q + i};
          },
          "f64",
          nullptr,
          nullptr,
          same,
          same};
}

TEST(EmuMma, F64) {
  const MmaCase mc = f64_case();
  check(mc, -50, 50, 0.25);
}

// f64 mma is a chain of fused multiply-adds in k order per element (one rounding each, so a
// product's low bits survive a cancellation), and a NaN input reaches D as the first NaN of
// a, b, c (quieted); a chain's own inf * 0 is a NaN too. Inputs with and without NaNs take
// different paths in the emulator: both are checked here.
TEST(EmuMma, F64ChainsAreFusedAndNansPropagate) {
  const MmaCase mc = f64_case();
  const double e = std::ldexp(1.0, -30);
  std::vector<double> A(8 * 4, 0.0), B(4 * 8, 0.0), C(8 * 8, -1.0);
  for (int m = 0; m < 8; ++m)
    A[m * 4 + 0] = 1 + e; // k = 0 only: D = fma(1 + e, 1 + e, -1) = 2e + e^2 (unfused: 2e)
  for (int n = 0; n < 8; ++n)
    B[0 * 8 + n] = 1 + e;
  auto D = run_mma(mc, A, B, C);
  for (int i = 0; i < 64; ++i)
    ASSERT_EQ(D[i], 2 * e + e * e) << "element " << i;

  // inf * 0 inside a chain: NaN, in the column where B's infinity meets A's zero
  B[1 * 8 + 3] = INFINITY;
  D = run_mma(mc, A, B, C);
  for (int m = 0; m < 8; ++m)
    for (int n = 0; n < 8; ++n)
      EXPECT_EQ(std::isnan(D[m * 8 + n]), n == 3) << m << "," << n;

  // input NaNs with distinct payloads: A's (row 2) wins over C's, C's (row 5) shows alone
  const double nan_a = std::bit_cast<double>(0x7FF0000000000A0Aull); // signalling: quieted
  const double nan_c = std::bit_cast<double>(0x7FF8000000000C0Cull);
  B[1 * 8 + 3] = 0.0;
  A[2 * 4 + 0] = nan_a;
  C[2 * 8 + 6] = nan_c;
  C[5 * 8 + 1] = nan_c;
  D = run_mma(mc, A, B, C);
  for (int n = 0; n < 8; ++n)
    EXPECT_EQ(std::bit_cast<uint64_t>(D[2 * 8 + n]), 0x7FF8000000000A0Aull) << "row 2 col " << n;
  EXPECT_EQ(std::bit_cast<uint64_t>(D[5 * 8 + 1]), 0x7FF8000000000C0Cull);
  EXPECT_EQ(D[5 * 8 + 2], 2 * e + e * e);
}

TEST(EmuMma, PartialWarpIsAnError) {
  const char *k = R"(
.visible .entry k()
{
  .reg .b32 %a<4>, %b<2>, %c<4>, %r;
  .reg .pred %p;
  mov.u32 %r, %laneid;
  setp.lt.u32 %p, %r, 16;
  @%p mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%c0,%c1,%c2,%c3}, {%a0,%a1,%a2,%a3}, {%b0,%b1}, {%c0,%c1,%c2,%c3};
  ret;
}
)";
  EmuDevice dev;
  try {
    launch(dev, ptx_module(k), "k", {1, 1, 1}, {32, 1, 1}, {}, 0, "partial.ptx");
    FAIL() << "expected a sanitizer error";
  } catch (const device::DeviceError &e) {
    EXPECT_EQ(e.kind(), device::ErrorKind::LaunchFailed);
    EXPECT_NE(std::string(e.what()).find("partial.ptx:11"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("all 32 lanes"), std::string::npos) << e.what();
  }
}

} // namespace
} // namespace tcjit::emu::test
