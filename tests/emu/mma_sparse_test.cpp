// mma.sp: every sparse shape and type against a CPU product of the dense A that the compressed A
// and its metadata stand for. The test packs the fragments and the metadata from its own reading
// of the PTX ISA ("Sparse matrix storage" and the mma.sp fragment sections): the compressed A has
// the fragment layout of the dense mma of K/2; metadata thread w of the selected ones holds, from
// bit 0, the 2-bit indices of the kept values of the group's threads register by register
// (register r of thread 0, 1, 2, 3, then register r+1, ...), as NVIDIA's CUTLASS documents for
// m16n8k32 f16 and m16n8k64 8-bit sparse mma.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "runtime/emu/float_format.h"
#include "tests/emu/emu_test_util.h"

namespace tcjit::emu::test {
namespace {

struct SparseCase {
  std::string name; // the instruction without operands
  int k;            // the dense K
  std::string a, b; // element types: f16 bf16 tf32 s8 u8 s4 u4
  std::string c;    // f32 f16 s32
  bool satfinite = false;
};

int bits_of_type(const std::string &t) {
  return t == "tf32" ? 32 : (t == "f16" || t == "bf16") ? 16 : (t == "s8" || t == "u8") ? 8 : 4;
}

uint32_t encode(const std::string &t, double v) {
  if (t == "f16")
    return f32_to_f16_bits(static_cast<float>(v));
  if (t == "bf16")
    return f32_to_bf16_bits(static_cast<float>(v));
  if (t == "tf32")
    return static_cast<uint32_t>(f32_bits(static_cast<float>(v)));
  const int bits = bits_of_type(t);
  return static_cast<uint32_t>(static_cast<int32_t>(v)) & ((1u << bits) - 1);
}

// A random value the type holds exactly, small enough that every sum is exact in f32 (and f16).
double random_value(const std::string &t, std::mt19937 &rng) {
  if (t == "u8" || t == "u4")
    return std::uniform_int_distribution<int>(0, t == "u8" ? 255 : 15)(rng);
  if (t == "s8" || t == "s4")
    return std::uniform_int_distribution<int>(t == "s8" ? -128 : -8, t == "s8" ? 127 : 7)(rng);
  return std::uniform_int_distribution<int>(-8, 8)(rng) * 0.25;
}

struct Geometry {
  int elem_bits, per_reg, a_regs, b_regs, c_regs, d_regs;
  int kept, chunk;  // kept elements per chunk, elements per chunk
  int meta_threads; // W
};

Geometry geometry(const SparseCase &sc) {
  Geometry g{};
  g.elem_bits = bits_of_type(sc.a);
  g.per_reg = 32 / g.elem_bits;
  g.a_regs = 16 * (sc.k / 2) / 32 / g.per_reg;
  g.b_regs = sc.k * 8 / 32 / g.per_reg;
  g.c_regs = sc.c == "f16" ? 2 : 4;
  g.d_regs = g.c_regs;
  g.kept = sc.a == "tf32" ? 1 : g.elem_bits == 4 ? 4 : 2;
  g.chunk = sc.a == "tf32" ? 2 : g.elem_bits == 4 ? 8 : 4;
  // metadata of a group: a 4-bit nibble per chunk of the group's A registers
  const int nibbles = g.a_regs * 4 * (g.per_reg / g.kept);
  g.meta_threads = nibbles * 4 / 32;
  return g;
}

struct Pattern {
  // per (row, chunk): the dense positions of the kept elements in metadata order
  std::vector<std::vector<std::array<int, 2>>> pos;
};

// The kept unit indices of a chunk as its 4-bit metadata: first index in bits 1:0.
uint32_t nibble_of(const std::string &a, std::array<int, 2> p) {
  if (a == "tf32") // 1:2: the kept value's two halves
    return p[0] == 0 ? 0b0100u : 0b1110u;
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 2;
}

// .version 8.5 (mma.sp::ordered_metadata needs it), .target sm_80.
std::string sparse_module(const std::string &body) {
  return ".version 8.5\n.target sm_80\n.address_size 64\n" + body;
}

struct SparseRun {
  std::vector<double> d; // 16 x 8, row-major
  std::string error;     // the launch's error, if any
  uint64_t mma_instructions = 0, mma_flops = 0, mma_class_instructions = 0;
  uint64_t undefined_rows = 0; // LaunchCounters::undefined_mma_sp_rows
};

SparseRun run_sparse(const SparseCase &sc, int selector, const std::vector<double> &A_dense,
                     const Pattern &pat, const std::vector<double> &B, const std::vector<double> &C,
                     uint32_t (*corrupt)(int lane, uint32_t e) = nullptr,
                     const std::string &metadata_operand = "%e") {
  const Geometry G = geometry(sc);
  const int K = sc.k, Kc = K / 2;
  const int nin = G.a_regs + G.b_regs + G.c_regs + 1;
  std::string body = ".visible .entry mma(.param .u64 in, .param .u64 out)\n{\n";
  body += "  .reg .b32 %a<" + std::to_string(G.a_regs) + ">, %b<" + std::to_string(G.b_regs) +
          ">, %c<" + std::to_string(G.c_regs) + ">, %d<" + std::to_string(G.d_regs) + ">, %e;\n";
  body += "  .reg .b64 %p, %t;\n  .reg .b32 %lane;\n  mov.u32 %lane, %laneid;\n";
  body += "  ld.param.u64 %p, [in];\n  mul.wide.u32 %t, %lane, " + std::to_string(nin * 4) +
          ";\n  add.u64 %p, %p, %t;\n";
  int off = 0;
  auto load = [&](const std::string &name, int count) {
    for (int i = 0; i < count; ++i, off += 4)
      body += "  ld.global.b32 %" + name + (count ? std::to_string(i) : "") + ", [%p+" +
              std::to_string(off) + "];\n";
  };
  load("a", G.a_regs);
  load("b", G.b_regs);
  load("c", G.c_regs);
  body += "  ld.global.b32 %e, [%p+" + std::to_string(off) + "];\n";
  auto list = [](const char *name, int count) {
    std::string s = "{";
    for (int i = 0; i < count; ++i)
      s += std::string(i ? ", " : "") + "%" + name + std::to_string(i);
    return s + "}";
  };
  body += "  " + sc.name + " " + list("d", G.d_regs) + ", " + list("a", G.a_regs) + ", " +
          list("b", G.b_regs) + ", " + list("c", G.c_regs) + ", " + metadata_operand + ", " +
          std::to_string(selector) + ";\n";
  body += "  ld.param.u64 %p, [out];\n  mul.wide.u32 %t, %lane, " + std::to_string(G.d_regs * 4) +
          ";\n  add.u64 %p, %p, %t;\n";
  for (int i = 0; i < G.d_regs; ++i)
    body += "  st.global.b32 [%p+" + std::to_string(i * 4) + "], %d" + std::to_string(i) + ";\n";
  body += "  ret;\n}\n";

  // the compressed A: row-major 16 x K/2, the kept values of each chunk in metadata order
  std::vector<double> Ac(16 * Kc);
  for (int row = 0; row < 16; ++row)
    for (int ch = 0; ch < K / G.chunk; ++ch)
      for (int j = 0; j < G.kept; ++j) {
        const auto &p = pat.pos[row][ch];
        // s4/u4 keep pairs: kept j of a chunk is element (j & 1) of sub-chunk p[j / 2]
        const int pos = G.kept == 4 ? 2 * p[j / 2] + (j & 1) : G.kept == 2 ? p[j] : p[0];
        Ac[row * Kc + ch * G.kept + j] = A_dense[row * K + ch * G.chunk + pos];
      }

  std::vector<uint32_t> in(32 * nin, 0);
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, t = lane % 4;
    uint32_t *r = in.data() + lane * nin;
    // A: register i holds compressed row g + 8 * (i & 1), columns (i / 2) * 4 * per_reg + t *
    // per_reg + e (the dense layout of the mma of K/2)
    for (int i = 0; i < G.a_regs; ++i)
      for (int e = 0; e < G.per_reg; ++e) {
        const int row = g + 8 * (i & 1), col = (i / 2) * 4 * G.per_reg + t * G.per_reg + e;
        r[i] |= encode(sc.a, Ac[row * Kc + col]) << (e * G.elem_bits);
      }
    // B: register j holds k = j * 4 * per_reg + t * per_reg + e of column g
    for (int j = 0; j < G.b_regs; ++j)
      for (int e = 0; e < G.per_reg; ++e) {
        const int k = j * 4 * G.per_reg + t * G.per_reg + e;
        r[G.a_regs + j] |= encode(sc.b, B[k * 8 + g]) << (e * G.elem_bits);
      }
    for (int i = 0; i < 4; ++i) {
      const int row = g + (i >= 2 ? 8 : 0), col = 2 * t + (i & 1);
      const double v = C[row * 8 + col];
      uint32_t *c = r + G.a_regs + G.b_regs;
      if (sc.c == "f16")
        c[i / 2] |= uint32_t{f32_to_f16_bits(static_cast<float>(v))} << (16 * (i % 2));
      else if (sc.c == "f32")
        c[i] = static_cast<uint32_t>(f32_bits(static_cast<float>(v)));
      else
        c[i] = static_cast<uint32_t>(static_cast<int32_t>(v));
    }
    // metadata: threads that do not provide it hold all-ones (0b1111: invalid if it were read)
    r[nin - 1] = 0xffffffffu;
  }
  // the metadata of each group: 2-bit slot `s` of the stream is bit 2s of word s / 16, held by
  // thread selector * W + s / 16 of the group. Thread t's kept value y (y-th of its A registers'
  // compressed elements, low bits first) is slot (y / per_reg) * 4 * spr + t * spr + (y %
  // per_reg) / upr, where upr elements make one 2-bit unit and spr units fill a register.
  const int upr = G.kept == 4 ? 2 : 1;                  // elements per unit (s4: pairs)
  const int spr = sc.a == "tf32" ? 2 : G.per_reg / upr; // 2-bit slots per register and thread
  for (int g = 0; g < 8; ++g) {
    std::array<uint32_t, 4> words{};
    for (int t = 0; t < 4; ++t) {
      for (int i = 0; i < G.a_regs; ++i) {
        const int row = g + 8 * (i & 1);
        const int first_col = (i / 2) * 4 * G.per_reg + t * G.per_reg;
        for (int c = 0; c < G.per_reg / G.kept; ++c) {
          const int ch = first_col / G.kept + c;
          const uint32_t nib = nibble_of(sc.a, pat.pos[row][ch]);
          const int slot = i * 4 * spr + t * spr + c * 2; // a chunk takes two slots
          words[slot / 16] |= nib << (2 * (slot % 16));
        }
      }
    }
    for (int w = 0; w < G.meta_threads && (selector + 1) * G.meta_threads <= 4; ++w)
      in[(4 * g + selector * G.meta_threads + w) * nin + nin - 1] = words[w];
  }
  if (corrupt)
    for (int lane = 0; lane < 32; ++lane)
      in[lane * nin + nin - 1] = corrupt(lane, in[lane * nin + nin - 1]);

  EmuDevice dev;
  auto din = upload(dev, in);
  device::DevicePtr dout = dev.allocate(32 * G.d_regs * 4);
  SparseRun run;
  try {
    launch(dev, sparse_module(body), "mma", {1, 1, 1}, {32, 1, 1}, {Arg::of(din), Arg::of(dout)});
  } catch (const device::DeviceError &e) {
    run.error = e.what();
    return run;
  }
  run.mma_instructions = dev.last_counters().mma_instructions;
  run.mma_flops = dev.last_counters().mma_flops;
  run.undefined_rows = dev.last_counters().undefined_mma_sp_rows;
  run.mma_class_instructions =
      dev.last_counters().warp_instructions_by_class[static_cast<size_t>(InstrClass::Mma)];
  auto out = download<uint32_t>(dev, dout, 32 * G.d_regs);
  run.d.assign(16 * 8, 0);
  for (int lane = 0; lane < 32; ++lane) {
    const int g = lane / 4, t = lane % 4;
    for (int i = 0; i < 4; ++i) {
      const int row = g + (i >= 2 ? 8 : 0), col = 2 * t + (i & 1);
      double v;
      if (sc.c == "f16")
        v = f16_bits_to_f32(static_cast<uint16_t>(out[lane * G.d_regs + i / 2] >> (16 * (i % 2))));
      else if (sc.c == "f32")
        v = bits_f32(out[lane * G.d_regs + i]);
      else
        v = static_cast<int32_t>(out[lane * G.d_regs + i]);
      run.d[row * 8 + col] = v;
    }
  }
  return run;
}

// A random 2:4 (tf32 1:2, s4/u4 4:8 in pairs) pattern; `ordered`: first index below the second,
// else each chunk's two indices in a random order.
Pattern random_pattern(const SparseCase &sc, bool ordered, std::mt19937 &rng) {
  const Geometry G = geometry(sc);
  Pattern p;
  p.pos.assign(16, {});
  for (int row = 0; row < 16; ++row)
    for (int ch = 0; ch < sc.k / G.chunk; ++ch) {
      std::array<int, 2> two{};
      if (sc.a == "tf32") {
        two = {std::uniform_int_distribution<int>(0, 1)(rng), 0};
      } else {
        std::array<int, 4> idx = {0, 1, 2, 3};
        std::shuffle(idx.begin(), idx.end(), rng);
        two = {idx[0], idx[1]};
        if (ordered && two[0] > two[1])
          std::swap(two[0], two[1]);
      }
      p.pos[row].push_back(two);
    }
  return p;
}

struct Inputs {
  std::vector<double> A, B, C;
  Pattern pat;
};

// Dense A that is zero outside the pattern, random B and C.
Inputs random_inputs(const SparseCase &sc, bool ordered, std::mt19937 &rng) {
  const Geometry G = geometry(sc);
  Inputs in;
  in.pat = random_pattern(sc, ordered, rng);
  in.A.assign(16 * sc.k, 0.0);
  for (int row = 0; row < 16; ++row)
    for (int ch = 0; ch < sc.k / G.chunk; ++ch) {
      const auto &p = in.pat.pos[row][ch];
      for (int j = 0; j < G.kept; ++j) {
        const int pos = G.kept == 4 ? 2 * p[j / 2] + (j & 1) : G.kept == 2 ? p[j] : p[0];
        in.A[row * sc.k + ch * G.chunk + pos] = random_value(sc.a, rng);
      }
    }
  in.B.resize(sc.k * 8);
  for (double &v : in.B)
    v = random_value(sc.b, rng);
  in.C.resize(16 * 8);
  for (double &v : in.C)
    v = sc.c == "s32" ? std::uniform_int_distribution<int>(-100000, 100000)(rng)
                      : std::uniform_int_distribution<int>(-16, 16)(rng) * 0.5;
  return in;
}

std::vector<double> reference(const SparseCase &sc, const Inputs &in) {
  std::vector<double> d(16 * 8);
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 8; ++n) {
      double s = in.C[m * 8 + n];
      for (int k = 0; k < sc.k; ++k)
        s += in.A[m * sc.k + k] * in.B[k * 8 + n];
      d[m * 8 + n] = s;
    }
  return d;
}

std::vector<SparseCase> all_cases(const std::string &sp) {
  const std::string p = "mma." + sp + ".sync.aligned.";
  return {
      {p + "m16n8k16.row.col.f32.f16.f16.f32", 16, "f16", "f16", "f32"},
      {p + "m16n8k16.row.col.f16.f16.f16.f16", 16, "f16", "f16", "f16"},
      {p + "m16n8k32.row.col.f32.f16.f16.f32", 32, "f16", "f16", "f32"},
      {p + "m16n8k32.row.col.f16.f16.f16.f16", 32, "f16", "f16", "f16"},
      {p + "m16n8k16.row.col.f32.bf16.bf16.f32", 16, "bf16", "bf16", "f32"},
      {p + "m16n8k32.row.col.f32.bf16.bf16.f32", 32, "bf16", "bf16", "f32"},
      {p + "m16n8k8.row.col.f32.tf32.tf32.f32", 8, "tf32", "tf32", "f32"},
      {p + "m16n8k16.row.col.f32.tf32.tf32.f32", 16, "tf32", "tf32", "f32"},
      {p + "m16n8k32.row.col.s32.s8.s8.s32", 32, "s8", "s8", "s32"},
      {p + "m16n8k32.row.col.s32.u8.s8.s32", 32, "u8", "s8", "s32"},
      {p + "m16n8k64.row.col.s32.s8.u8.s32", 64, "s8", "u8", "s32"},
      {p + "m16n8k64.row.col.satfinite.s32.u8.u8.s32", 64, "u8", "u8", "s32", true},
      {p + "m16n8k64.row.col.s32.s4.s4.s32", 64, "s4", "s4", "s32"},
      {p + "m16n8k64.row.col.s32.u4.s4.s32", 64, "u4", "s4", "s32"},
      {p + "m16n8k128.row.col.s32.s4.u4.s32", 128, "s4", "u4", "s32"},
      {p + "m16n8k128.row.col.satfinite.s32.u4.u4.s32", 128, "u4", "u4", "s32", true},
  };
}

// Every shape and type, every selector the ISA allows, both spellings: exact against the CPU
// product (the inputs make every sum exact).
TEST(MmaSparse, EveryShapeTypeAndSelectorMatchesTheDenseProduct) {
  std::mt19937 rng(2705);
  for (const std::string sp : {"sp", "sp::ordered_metadata"}) {
    for (const SparseCase &sc : all_cases(sp)) {
      const Geometry G = geometry(sc);
      const int selectors = G.meta_threads == 1 ? 4 : G.meta_threads == 2 ? 2 : 1;
      for (int sel = 0; sel < selectors; ++sel) {
        for (int trial = 0; trial < 2; ++trial) {
          const Inputs in = random_inputs(sc, sp != "sp", rng);
          const SparseRun run = run_sparse(sc, sel, in.A, in.pat, in.B, in.C);
          ASSERT_EQ(run.error, "") << sc.name << " selector " << sel;
          const std::vector<double> want = reference(sc, in);
          for (int i = 0; i < 16 * 8; ++i)
            ASSERT_EQ(run.d[i], want[i])
                << sc.name << " selector " << sel << " row " << i / 8 << " col " << i % 8;
        }
      }
    }
  }
}

// .satfinite clamps the s32 result; without it the sum wraps.
TEST(MmaSparse, IntegerAccumulatorSaturatesOrWraps) {
  std::mt19937 rng(11);
  for (bool sat : {false, true}) {
    SparseCase sc{std::string("mma.sp.sync.aligned.m16n8k32.row.col") + (sat ? ".satfinite" : "") +
                      ".s32.u8.u8.s32",
                  32,
                  "u8",
                  "u8",
                  "s32",
                  sat};
    Inputs in = random_inputs(sc, false, rng);
    for (double &v : in.C)
      v = 2147483647.0 - 10;
    const SparseRun run = run_sparse(sc, 1, in.A, in.pat, in.B, in.C);
    ASSERT_EQ(run.error, "");
    const std::vector<double> want = reference(sc, in);
    for (int i = 0; i < 16 * 8; ++i) {
      const double clamped = std::min(want[i], 2147483647.0);
      const double wrapped =
          static_cast<int32_t>(static_cast<uint32_t>(static_cast<int64_t>(want[i])));
      EXPECT_EQ(run.d[i], sat ? clamped : wrapped) << i;
    }
  }
}

// A pruned position never takes part: an infinity of B against a pruned zero of A adds nothing
// (a dense product would make 0 * inf = NaN).
TEST(MmaSparse, PrunedPositionsDoNotMultiply) {
  std::mt19937 rng(5);
  SparseCase sc{"mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 16, "f16", "f16", "f32"};
  Inputs in = random_inputs(sc, true, rng);
  // k = 0..3 of every row: keep positions 2 and 3 only, so A[., 0] is pruned; B[0][.] = inf
  for (int row = 0; row < 16; ++row) {
    in.pat.pos[row][0] = {2, 3};
    in.A[row * 16 + 0] = in.A[row * 16 + 1] = 0;
    in.A[row * 16 + 2] = 1, in.A[row * 16 + 3] = -1;
  }
  for (int n = 0; n < 8; ++n)
    in.B[0 * 8 + n] = std::numeric_limits<double>::infinity();
  const SparseRun run = run_sparse(sc, 0, in.A, in.pat, in.B, in.C);
  ASSERT_EQ(run.error, "");
  std::vector<double> want(16 * 8);
  for (int m = 0; m < 16; ++m)
    for (int n = 0; n < 8; ++n) {
      double s = in.C[m * 8 + n];
      for (int k = 1; k < 16; ++k)
        s += in.A[m * 16 + k] * in.B[k * 8 + n];
      want[m * 8 + n] = s;
    }
  for (int i = 0; i < 16 * 8; ++i)
    EXPECT_EQ(run.d[i], want[i]) << i;
}

// NaN and infinity among the kept values propagate as in the dense product (NaN == NaN here).
TEST(MmaSparse, NanAndInfinityPropagate) {
  std::mt19937 rng(12);
  for (const std::string c : {"f32", "f16"}) {
    SparseCase sc{"mma.sp.sync.aligned.m16n8k32.row.col." + c + ".f16.f16." + c, 32, "f16", "f16",
                  c};
    Inputs in = random_inputs(sc, false, rng);
    const auto kept = [&](int row, int ch, int j) {
      return row * 32 + ch * 4 + in.pat.pos[row][ch][j];
    };
    in.A[kept(3, 2, 0)] = std::numeric_limits<double>::quiet_NaN(); // row 3: NaN
    in.A[kept(5, 7, 1)] = std::numeric_limits<double>::infinity();  // row 5: +-inf (or NaN)
    in.C[9 * 8 + 4] = -std::numeric_limits<double>::infinity();     // row 9, column 4
    const SparseRun run = run_sparse(sc, 1, in.A, in.pat, in.B, in.C);
    ASSERT_EQ(run.error, "");
    const std::vector<double> want = reference(sc, in);
    for (int i = 0; i < 16 * 8; ++i) {
      if (std::isnan(want[i]))
        EXPECT_TRUE(std::isnan(run.d[i])) << c << " " << i << ": " << run.d[i];
      else
        EXPECT_EQ(run.d[i], want[i]) << c << " " << i;
    }
  }
}

uint32_t equal_indices_in_lane_4(int lane, uint32_t e) {
  return lane == 4 ? (e & ~0xf0u) | 0x50u : e; // group 1, chunk 1 of row 1: 0b0101
}

uint32_t descending_in_lane_0(int lane, uint32_t e) {
  return lane == 0 ? (e & ~0xfu) | 0x1u : e; // row 0, chunk 0: indices 1 then 0
}

// The poison of an undefined mma.sp row (docs/emulator.md, "Sparse mma"): a NaN for f32 and f16
// results, 0x80000000 for s32.
bool is_poison(const SparseCase &sc, double v) {
  return sc.c == "s32" ? v == static_cast<double>(INT32_MIN) : std::isnan(v);
}

// Rows in `poisoned` hold the poison in every column; every other row is exactly `want`.
void expect_rows(const SparseCase &sc, const SparseRun &run, const std::vector<double> &want,
                 const std::vector<int> &poisoned) {
  for (int row = 0; row < 16; ++row) {
    const bool poison = std::find(poisoned.begin(), poisoned.end(), row) != poisoned.end();
    for (int col = 0; col < 8; ++col) {
      const double v = run.d[row * 8 + col];
      if (poison)
        EXPECT_TRUE(is_poison(sc, v)) << sc.name << " row " << row << " col " << col << ": " << v;
      else
        EXPECT_EQ(v, want[row * 8 + col]) << sc.name << " row " << row << " col " << col;
    }
  }
  EXPECT_EQ(run.undefined_rows, poisoned.size()) << sc.name;
}

// Metadata the ISA leaves undefined does not stop the launch: the row it belongs to is poison
// (and counted), the other rows are exact. Descending indices are valid for mma.sp and undefined
// for mma.sp::ordered_metadata.
TEST(MmaSparse, UndefinedMetadataPoisonsItsRow) {
  std::mt19937 rng(3);
  SparseCase sc{"mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32", 16, "f16", "f16", "f32"};
  Inputs in = random_inputs(sc, true, rng);
  SparseRun run = run_sparse(sc, 0, in.A, in.pat, in.B, in.C, equal_indices_in_lane_4);
  ASSERT_EQ(run.error, "");
  expect_rows(sc, run, reference(sc, in), {1});

  // chunk 0 of every row keeps 1.5 at k = 0 and -2 at k = 1; row 0 names them as {1, 0} (the
  // compressed values in that order), valid for mma.sp
  for (int row = 0; row < 16; ++row) {
    in.pat.pos[row][0] = {0, 1};
    in.A[row * 16 + 0] = 1.5, in.A[row * 16 + 1] = -2, in.A[row * 16 + 2] = in.A[row * 16 + 3] = 0;
  }
  {
    Inputs swapped = in;
    swapped.pat.pos[0][0] = {1, 0};
    const SparseRun ok = run_sparse(sc, 0, swapped.A, swapped.pat, swapped.B, swapped.C);
    ASSERT_EQ(ok.error, "");
    expect_rows(sc, ok, reference(sc, swapped), {});
  }
  SparseCase ordered = sc;
  ordered.name = "mma.sp::ordered_metadata.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32";
  run = run_sparse(ordered, 0, in.A, in.pat, in.B, in.C, descending_in_lane_0);
  ASSERT_EQ(run.error, "");
  expect_rows(ordered, run, reference(ordered, in), {0});
}

// As CUTLASS's sparse GEMM does for rows past M in its last block: the metadata of groups 6 and 7
// (rows 6, 7, 14, 15) is all zero (0b0000 in every chunk), and one chunk of row 1 is 0b0000 (the
// first nibble of the group's first metadata thread: register 0, row groupID). Every shape and
// type: those five rows are poison, the other eleven exact, five rows counted, and the launch
// succeeds.
uint32_t zero_metadata_rows_1_6_7_14_15(int lane, uint32_t e) {
  if (lane / 4 >= 6)
    return 0;
  return lane == 4 ? e & ~0xfu : e;
}

TEST(MmaSparse, ZeroMetadataPoisonsOnlyItsRowsInEveryShape) {
  std::mt19937 rng(27);
  for (const std::string sp : {"sp", "sp::ordered_metadata"}) {
    for (const SparseCase &sc : all_cases(sp)) {
      const Inputs in = random_inputs(sc, sp != "sp", rng);
      const SparseRun run =
          run_sparse(sc, 0, in.A, in.pat, in.B, in.C, zero_metadata_rows_1_6_7_14_15);
      ASSERT_EQ(run.error, "") << sc.name;
      expect_rows(sc, run, reference(sc, in), {1, 6, 7, 14, 15});
    }
  }
}

// A kernel that stores a poisoned row fails a comparison with the reference, however loose the
// tolerance: the poison is no plausible result (NaN; -2^31 for s32). Exactly the 40 elements of
// the five poisoned rows fail.
TEST(MmaSparse, StoredPoisonFailsAComparisonWithTheReference) {
  std::mt19937 rng(28);
  for (const SparseCase &sc : all_cases("sp")) {
    const Inputs in = random_inputs(sc, false, rng);
    const SparseRun run =
        run_sparse(sc, 0, in.A, in.pat, in.B, in.C, zero_metadata_rows_1_6_7_14_15);
    ASSERT_EQ(run.error, "") << sc.name;
    const std::vector<double> want = reference(sc, in);
    int failed = 0;
    for (int i = 0; i < 16 * 8; ++i) {
      const double tolerance = 1.0 + 0.01 * std::fabs(want[i]); // far looser than any dtype's
      failed += !(std::fabs(run.d[i] - want[i]) <= tolerance);
    }
    EXPECT_EQ(failed, 5 * 8) << sc.name;
  }
}

uint32_t tf32_bad_in_lane_0(int lane, uint32_t e) {
  return lane == 0 ? (e & ~0xfu) | 0x8u : e; // 0b1000: neither 0b0100 nor 0b1110
}

// row 0's first chunk (lane 0, bits 3:0) is 0b1000: row 0 is poison, the rest exact
TEST(MmaSparse, Tf32MetadataOtherThanTheTwoValuesPoisonsTheRow) {
  std::mt19937 rng(4);
  SparseCase sc{"mma.sp.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 8, "tf32", "tf32", "f32"};
  Inputs in = random_inputs(sc, true, rng);
  const SparseRun run = run_sparse(sc, 0, in.A, in.pat, in.B, in.C, tf32_bad_in_lane_0);
  ASSERT_EQ(run.error, "");
  expect_rows(sc, run, reference(sc, in), {0});
}

// ptxas takes selectors 2 and 3 for mma.sp.m16n8k32 with .f16 (the ISA allows 0 and 1 only, and
// names no metadata threads for them): the launch runs, the whole D is poison, 16 rows counted.
TEST(MmaSparse, SelectorOutsideTheIsaRangePoisonsTheWholeResult) {
  std::mt19937 rng(6);
  for (const std::string c : {"f32", "f16"}) {
    SparseCase sc{"mma.sp.sync.aligned.m16n8k32.row.col." + c + ".f16.f16." + c, 32, "f16", "f16",
                  c};
    Inputs in = random_inputs(sc, false, rng);
    for (int sel : {2, 3}) {
      const SparseRun run = run_sparse(sc, sel, in.A, in.pat, in.B, in.C);
      ASSERT_EQ(run.error, "") << sel;
      expect_rows(sc, run, reference(sc, in),
                  {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15});
    }
  }
}

// ptxas takes a 0f constant as the metadata: its 32 bits, the same in every thread.
TEST(MmaSparse, MetadataConstant) {
  std::mt19937 rng(8);
  SparseCase sc{"mma.sp::ordered_metadata.sync.aligned.m16n8k32.row.col.f32.f16.f16.f32", 32, "f16",
                "f16", "f32"};
  Inputs in = random_inputs(sc, true, rng);
  // every chunk keeps positions 1 and 3: nibble 0b1101, the word 0xdddddddd
  for (int row = 0; row < 16; ++row)
    for (int ch = 0; ch < 8; ++ch) {
      in.pat.pos[row][ch] = {1, 3};
      for (int j = 0; j < 4; ++j)
        in.A[row * 32 + ch * 4 + j] = j % 2 ? random_value("f16", rng) : 0.0;
    }
  for (const std::string operand : {"0fDDDDDDDD", "{0fDDDDDDDD}"}) {
    const SparseRun run = run_sparse(sc, 1, in.A, in.pat, in.B, in.C, nullptr, operand);
    ASSERT_EQ(run.error, "") << operand;
    const std::vector<double> want = reference(sc, in);
    for (int i = 0; i < 16 * 8; ++i)
      ASSERT_EQ(run.d[i], want[i]) << operand << " " << i;
  }
}

// An mma.sp is one mma instruction of the mma class; its flops are those of the dense shape
// (2 * 16 * 8 * K), the work the sparse peak figures count.
TEST(MmaSparse, CountsAsOneMmaOfTheDenseShape) {
  std::mt19937 rng(9);
  for (const SparseCase &sc : all_cases("sp")) {
    const Inputs in = random_inputs(sc, false, rng);
    const SparseRun run = run_sparse(sc, 0, in.A, in.pat, in.B, in.C);
    ASSERT_EQ(run.error, "") << sc.name;
    EXPECT_EQ(run.mma_instructions, 1u) << sc.name;
    EXPECT_EQ(run.mma_class_instructions, 1u) << sc.name;
    EXPECT_EQ(run.mma_flops, 2u * 16 * 8 * static_cast<uint64_t>(sc.k)) << sc.name;
  }
}

// The loader takes both spellings where ptxas does and checks the operands.
TEST(MmaSparse, LoaderChecksOperands) {
  const std::string decl = ".visible .entry k()\n{\n  .reg .b32 %r<16>;\n  .reg .f32 %f<8>;\n";
  const std::string ok =
      "  mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f0,%f1,%f2,%f3}, "
      "{%r0,%r1}, {%r2,%r3}, {%f4,%f5,%f6,%f7}, %r8, 3;\n  ret;\n}\n";
  EXPECT_EQ(load_error(sparse_module(decl + ok)), "");
  const std::string bad_sel = "  mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                              "{%f0,%f1,%f2,%f3}, {%r0,%r1}, {%r2,%r3}, {%f4,%f5,%f6,%f7}, %r8, "
                              "4;\n  ret;\n}\n";
  EXPECT_NE(load_error(sparse_module(decl + bad_sel)).find("out of range"), std::string::npos);
  const std::string imm_meta = "  mma.sp.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
                               "{%f0,%f1,%f2,%f3}, {%r0,%r1}, {%r2,%r3}, {%f4,%f5,%f6,%f7}, 5, "
                               "0;\n  ret;\n}\n";
  EXPECT_NE(load_error(sparse_module(decl + imm_meta)).find("metadata"), std::string::npos);
}

} // namespace
} // namespace tcjit::emu::test
