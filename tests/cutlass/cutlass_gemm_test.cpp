// CUTLASS's own GEMM kernels (bench/anchors/cutlass_gemm.cu and cutlass_sparse_gemm.cu, compiled
// to PTX by nvcc at build time: tests/cutlass/CMakeLists.txt) run on tcjit's PTX emulator and
// are checked against this file's own CPU reference: PTX nobody here wrote proves the emulator's
// semantics of each tensor-core form. Launch shape and Params bytes come from the host build of
// the same source (<kernel>_params M N K A B C D [E] prints them for the device addresses).
//
// Inputs come from a fixed-seed std::mt19937_64. Integers (s4 dense and 2:4-sparse, b1) must match
// exactly. Floats:
//   f16 in, f32 accumulation, f16 out (dense and 2:4-sparse): |D - R| <= 2^-10 |R| + K 2^-23 S +
//     2^-24, R the exact (double) result, S = sum_k |a b| (f32 accumulation error of K terms plus
//     the f16 rounding of the output);
//   e4m3 in, f32 accumulation, f32 out: |D - R| <= K 2^-23 S + 2^-140.
// alpha = 1, beta = 0 (the printers' epilogue); D starts as 0xcd bytes, so an element the kernel
// does not write fails too.
#include "runtime/emu/emu_device.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace tcjit {
namespace {

using json = nlohmann::json;
using Bytes = std::vector<uint8_t>;

const std::string kKernelsDir = TCJIT_CUTLASS_KERNELS_DIR;
const std::string kSkipReason = TCJIT_CUTLASS_SKIP_REASON;

#define SKIP_WITHOUT_CUTLASS()                                                                     \
  do {                                                                                             \
    if (!kSkipReason.empty())                                                                      \
      GTEST_SKIP() << kSkipReason;                                                                 \
  } while (0)

std::string read_text(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("cannot read " + path + " (is the test_cutlass target built?)");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs `command`; its stdout, or an exception with its exit status.
std::string capture(const std::string &command) {
  FILE *pipe = popen(command.c_str(), "r");
  if (!pipe)
    throw std::runtime_error("cannot run " + command);
  std::string out;
  std::array<char, 4096> buf{};
  size_t got = 0;
  while ((got = fread(buf.data(), 1, buf.size(), pipe)) > 0)
    out.append(buf.data(), got);
  const int status = pclose(pipe);
  if (status != 0)
    throw std::runtime_error("'" + command + "' failed (status " + std::to_string(status) + ")");
  return out;
}

// ---- number formats (decoded here, independently of the emulator) ----------------------------

float f16_to_float(uint16_t h) {
  const int sign = h >> 15, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  double v = 0;
  if (exponent == 0)
    v = std::ldexp(double(mantissa), -24);
  else if (exponent == 31)
    v = mantissa ? NAN : INFINITY;
  else
    v = std::ldexp(double(1024 + mantissa), exponent - 25);
  return float(sign ? -v : v);
}

// The f16 bits of i / 1024 for |i| <= 1024 (exact: at most 11 significant bits).
uint16_t f16_of_multiple_of_2_10(int i) {
  if (i == 0)
    return 0;
  const uint16_t sign = i < 0 ? 0x8000 : 0;
  const unsigned a = unsigned(std::abs(i));
  const int top = std::bit_width(a) - 1; // i/1024 = 1.f * 2^(top - 10)
  const unsigned mantissa = (a << (10 - top)) & 0x3ff;
  return uint16_t(sign | unsigned(top - 10 + 15) << 10 | mantissa);
}

// e4m3 (OCP FP8: bias 7, no infinities, S.1111.111 is NaN).
double e4m3_to_double(uint8_t b) {
  const int sign = b >> 7, exponent = (b >> 3) & 0xf, mantissa = b & 7;
  const double v = exponent == 0 ? std::ldexp(double(mantissa), -9)
                                 : std::ldexp(double(8 + mantissa), exponent - 10);
  return sign ? -v : v;
}

// ---- running a CUTLASS kernel on the emulator ------------------------------------------------

struct Problem {
  int m = 0, n = 0, k = 0;
};

std::string problem_name(const Problem &p) {
  return std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k);
}

struct KernelRun {
  std::vector<uint8_t> d; // D's bytes after the launch
  json shape;             // what the Params printer printed
};

// Uploads `inputs` (A, B and, for the sparse kernel, E), allocates D (d_bytes, 0xcd), asks
// <name>_params for the launch (addresses A B C D [E], C = D with beta = 0), launches <name>.ptx's
// `entry` and reads D back.
KernelRun run_cutlass(const std::string &name, const std::string &entry, int sm_arch,
                      const Problem &p, const std::vector<const Bytes *> &inputs, size_t d_bytes) {
  emu::EmuDeviceOptions options;
  options.sm_arch = sm_arch;
  emu::EmuDevice dev(options);
  std::vector<device::DevicePtr> in;
  for (const Bytes *bytes : inputs) {
    in.push_back(dev.allocate(bytes->size()));
    dev.copy_to_device(in.back(), bytes->data(), bytes->size());
  }
  const device::DevicePtr d = dev.allocate(d_bytes);
  dev.memset(d, 0xcd, d_bytes);

  std::string command = "'" + kKernelsDir + "/" + name + "_params' " + std::to_string(p.m) + " " +
                        std::to_string(p.n) + " " + std::to_string(p.k) + " " +
                        std::to_string(in[0]) + " " + std::to_string(in[1]) + " " +
                        std::to_string(d) + " " + std::to_string(d);
  for (size_t i = 2; i < in.size(); ++i)
    command += " " + std::to_string(in[i]);
  KernelRun run;
  run.shape = json::parse(capture(command));

  const std::string ptx_path = kKernelsDir + "/" + name + ".ptx";
  const auto module = dev.load_module(read_text(ptx_path), ptx_path);
  const auto fn = dev.get_function(module, entry);
  const std::string hex = run.shape.at("params").get<std::string>();
  if (hex.size() != 2 * size_t(dev.kernel_info(fn).param_bytes))
    throw std::runtime_error(name + "_params printed " + std::to_string(hex.size() / 2) +
                             " Params bytes; " + entry + " takes " +
                             std::to_string(dev.kernel_info(fn).param_bytes));
  std::vector<std::byte> params;
  for (size_t i = 0; i < hex.size(); i += 2)
    params.push_back(std::byte(std::stoi(hex.substr(i, 2), nullptr, 16)));
  device::LaunchConfig launch;
  const auto grid = run.shape.at("grid").get<std::vector<uint32_t>>();
  launch.grid = {grid.at(0), grid.at(1), grid.at(2)};
  launch.block = {run.shape.at("block").at(0).get<uint32_t>(), 1, 1};
  launch.dynamic_shared_bytes = run.shape.at("shared").get<uint32_t>();
  dev.launch(fn, launch, params);
  dev.synchronize();
  run.d.resize(d_bytes);
  dev.copy_to_host(run.d.data(), d, d_bytes);
  return run;
}

// The mma.sync accumulator fragment (m16n8, every kind: PTX ISA "Matrix Fragments for mma.m16n8k*"
// C/D layout) holding element (row, col) of a 16x8 tile: lane groupID*4 + threadID_in_group,
// register c[i]; a pattern in the failing positions points at the lane or register at fault.
std::string fragment_of(int row, int col) {
  const int lane = (row % 8) * 4 + (col % 8) / 2;
  const int reg = (col % 2) + 2 * ((row % 16) / 8);
  return "lane " + std::to_string(lane) + " c[" + std::to_string(reg) + "]";
}

// Compares D (m x n, row-major) with the reference: `ok(row, col)` says whether the element
// holds, `describe(row, col)` what it holds and what it should. Reports the first 8 failures and
// the count.
void expect_all(const std::string &what, const Problem &p, const std::function<bool(int, int)> &ok,
                const std::function<std::string(int, int)> &describe) {
  int failures = 0;
  std::string first;
  for (int r = 0; r < p.m; ++r)
    for (int c = 0; c < p.n; ++c)
      if (!ok(r, c) && ++failures <= 8)
        first += "\n  D[" + std::to_string(r) + "][" + std::to_string(c) + "] (" +
                 fragment_of(r, c) + "): " + describe(r, c);
  EXPECT_EQ(failures, 0) << what << " " << problem_name(p) << ": " << failures << " of "
                         << p.m * p.n << " elements differ from the reference; first:" << first;
}

template <typename T> T load(const std::vector<uint8_t> &bytes, size_t index) {
  T v;
  std::memcpy(&v, bytes.data() + index * sizeof(T), sizeof(T));
  return v;
}

// ---- the kernels ------------------------------------------------------------------------------

// f16 (A row-major M x K, B column-major = N x K rows, D row-major f16), f32 accumulation.
void check_f16(const Problem &p) {
  std::mt19937_64 rng(0xf16);
  std::uniform_int_distribution<int> value(-1024, 1024);
  std::vector<int> a(size_t(p.m) * p.k), b(size_t(p.n) * p.k);
  Bytes ab(a.size() * 2), bb(b.size() * 2);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = value(rng);
    const uint16_t h = f16_of_multiple_of_2_10(a[i]);
    std::memcpy(&ab[2 * i], &h, 2);
  }
  for (size_t i = 0; i < b.size(); ++i) {
    b[i] = value(rng);
    const uint16_t h = f16_of_multiple_of_2_10(b[i]);
    std::memcpy(&bb[2 * i], &h, 2);
  }
  const KernelRun run =
      run_cutlass("f16", "cutlass_anchor_gemm", 80, p, {&ab, &bb}, size_t(p.m) * p.n * 2);
  auto exact = [&](int r, int c, double *sum_abs) {
    double sum = 0, s = 0;
    for (int k = 0; k < p.k; ++k) {
      const double prod = double(a[size_t(r) * p.k + k]) * b[size_t(c) * p.k + k] / (1 << 20);
      sum += prod;
      s += std::fabs(prod);
    }
    *sum_abs = s;
    return sum;
  };
  auto got = [&](int r, int c) { return f16_to_float(load<uint16_t>(run.d, size_t(r) * p.n + c)); };
  expect_all(
      "f16", p,
      [&](int r, int c) {
        double s = 0;
        const double ref = exact(r, c, &s);
        return std::fabs(got(r, c) - ref) <=
               std::ldexp(std::fabs(ref), -10) + p.k * std::ldexp(s, -23) + std::ldexp(1.0, -24);
      },
      [&](int r, int c) {
        double s = 0;
        return std::to_string(got(r, c)) + ", reference " + std::to_string(exact(r, c, &s));
      });
}

// s4 x s4 -> s32 (cutlass::int4b_t: two values per byte, the lower index in the low nibble).
void check_s4(const Problem &p) {
  std::mt19937_64 rng(0x54);
  std::uniform_int_distribution<int> value(-8, 7);
  std::vector<int> a(size_t(p.m) * p.k), b(size_t(p.n) * p.k);
  Bytes ab(a.size() / 2), bb(b.size() / 2);
  auto fill = [&](std::vector<int> &v, Bytes &packed) {
    for (size_t i = 0; i < v.size(); ++i) {
      v[i] = value(rng);
      packed[i / 2] |= uint8_t((v[i] & 0xf) << (4 * (i % 2)));
    }
  };
  fill(a, ab);
  fill(b, bb);
  const KernelRun run =
      run_cutlass("s4", "cutlass_anchor_gemm", 80, p, {&ab, &bb}, size_t(p.m) * p.n * 4);
  auto ref = [&](int r, int c) {
    int64_t sum = 0;
    for (int k = 0; k < p.k; ++k)
      sum += int64_t(a[size_t(r) * p.k + k]) * b[size_t(c) * p.k + k];
    return int32_t(sum);
  };
  auto got = [&](int r, int c) { return load<int32_t>(run.d, size_t(r) * p.n + c); };
  expect_all(
      "s4", p, [&](int r, int c) { return got(r, c) == ref(r, c); },
      [&](int r, int c) {
        return std::to_string(got(r, c)) + ", reference " + std::to_string(ref(r, c));
      });
}

// b1 AND-popc -> s32 (cutlass::uint1b_t: eight values per byte, the lowest index in bit 0):
// D[r][c] = popcount(row r of A AND column c of B).
void check_b1(const Problem &p) {
  std::mt19937_64 rng(0xb1);
  Bytes ab(size_t(p.m) * p.k / 8), bb(size_t(p.n) * p.k / 8);
  for (auto &byte : ab)
    byte = uint8_t(rng());
  for (auto &byte : bb)
    byte = uint8_t(rng());
  const KernelRun run =
      run_cutlass("b1", "cutlass_anchor_gemm", 80, p, {&ab, &bb}, size_t(p.m) * p.n * 4);
  auto ref = [&](int r, int c) {
    int32_t sum = 0;
    for (int k = 0; k < p.k / 8; ++k)
      sum += std::popcount(unsigned(ab[size_t(r) * p.k / 8 + k] & bb[size_t(c) * p.k / 8 + k]));
    return sum;
  };
  auto got = [&](int r, int c) { return load<int32_t>(run.d, size_t(r) * p.n + c); };
  expect_all(
      "b1 and.popc", p, [&](int r, int c) { return got(r, c) == ref(r, c); },
      [&](int r, int c) {
        return std::to_string(got(r, c)) + ", reference " + std::to_string(ref(r, c));
      });
}

// e4m3 x e4m3 -> f32 (sm_89), every byte but the two NaNs.
void check_e4m3(const Problem &p) {
  std::mt19937_64 rng(0xe4);
  Bytes ab(size_t(p.m) * p.k), bb(size_t(p.n) * p.k);
  auto fill = [&](Bytes &v) {
    for (auto &byte : v)
      do
        byte = uint8_t(rng());
      while ((byte & 0x7f) == 0x7f);
  };
  fill(ab);
  fill(bb);
  const KernelRun run =
      run_cutlass("e4m3", "cutlass_anchor_gemm", 89, p, {&ab, &bb}, size_t(p.m) * p.n * 4);
  auto exact = [&](int r, int c, double *sum_abs) {
    double sum = 0, s = 0;
    for (int k = 0; k < p.k; ++k) {
      const double prod =
          e4m3_to_double(ab[size_t(r) * p.k + k]) * e4m3_to_double(bb[size_t(c) * p.k + k]);
      sum += prod;
      s += std::fabs(prod);
    }
    *sum_abs = s;
    return sum;
  };
  auto got = [&](int r, int c) { return load<float>(run.d, size_t(r) * p.n + c); };
  expect_all(
      "e4m3", p,
      [&](int r, int c) {
        double s = 0;
        const double ref = exact(r, c, &s);
        return std::fabs(got(r, c) - ref) <= p.k * std::ldexp(s, -23) + std::ldexp(1.0, -140);
      },
      [&](int r, int c) {
        double s = 0;
        return std::to_string(got(r, c)) + ", reference " + std::to_string(exact(r, c, &s));
      });
}

// ---- 2:4-sparse f16 ---------------------------------------------------------------------------

// A 2:4-sparse A (M x K): the dense values (zero where pruned), the compressed values (M x K/2,
// the kept ones in order) and each group's metadata nibble idx0 | idx1 << 2 (the kept positions,
// idx0 < idx1). f16: groups of 4 values, 2 kept (values -1024..1024, multiples of 2^-10 later);
// s4 (`unit` = 2): the PTX ISA's 4:8 pair-wise sparsity, groups of 4 pairs of adjacent values, 2
// pairs kept, the indices naming pairs (values -8..7).
struct SparseA {
  std::vector<int> dense, compressed;
  std::vector<uint8_t> nibbles; // M x K/(4 unit)
};

SparseA make_sparse_a(const Problem &p, std::mt19937_64 &rng, int unit = 1) {
  static constexpr std::array<std::array<int, 2>, 6> kPairs = {
      {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}}};
  std::uniform_int_distribution<int> value(unit == 1 ? -1024 : -8, unit == 1 ? 1024 : 7),
      pair(0, 5);
  SparseA s;
  s.dense.assign(size_t(p.m) * p.k, 0);
  for (int r = 0; r < p.m; ++r)
    for (int g = 0; g < p.k / (4 * unit); ++g) {
      const auto kept = kPairs[size_t(pair(rng))];
      for (int idx : kept)
        for (int e = 0; e < unit; ++e) {
          const int v = value(rng);
          s.dense[size_t(r) * p.k + size_t(4 * unit * g + unit * idx + e)] = v;
          s.compressed.push_back(v);
        }
      s.nibbles.push_back(uint8_t(kept[0] | kept[1] << 2));
    }
  return s;
}

// CUTLASS's metadata for `s`, as its host utilities make it (tools/util host_reorder.h
// reorder_meta; read, not copied): the logical E is row-major M x K/(2*per_e) words of
// `word_bytes` bytes, word (r, w) holding the nibbles of groups 4w.. of row r, lowest bits first
// (per_e kept elements = per_e/2 groups per word); reorder_meta moves element (r, w) to
//   row' = r/G*G + (r%8)*I + (r%G)/8   (G = 32, I = 4 for 16-bit words; G = 16, I = 2 for 32-bit)
//   then swaps (row', w) within its 2x2 block when exactly one of row', w is odd (Z to N order),
// and stores it in ColumnMajorInterleaved<2>: offset (w/2)*(2M) + row'*2 + w%2.
// `group_values`: dense values per nibble (4; s4: 8).
Bytes cutlass_metadata(const SparseA &s, const Problem &p, int word_bytes, int group_values) {
  const int groups_per_row = p.k / group_values, groups_per_word = 2 * word_bytes;
  const int words_per_row = groups_per_row / groups_per_word;
  const int group = word_bytes == 2 ? 32 : 16, interweave = word_bytes == 2 ? 4 : 2;
  Bytes e(size_t(p.m) * words_per_row * size_t(word_bytes), 0);
  for (int r = 0; r < p.m; ++r)
    for (int w = 0; w < words_per_row; ++w) {
      uint32_t word = 0;
      for (int g = 0; g < groups_per_word; ++g)
        word |= uint32_t(s.nibbles[size_t(r) * groups_per_row + size_t(w) * groups_per_word + g])
                << (4 * g);
      int row = r / group * group + (r % 8) * interweave + (r % group) / 8, col = w;
      if (row % 2 == 0 && col % 2 == 1)
        ++row, --col;
      else if (row % 2 == 1 && col % 2 == 0)
        --row, ++col;
      const size_t offset = size_t(col / 2) * (2 * size_t(p.m)) + size_t(row) * 2 + col % 2;
      std::memcpy(&e[offset * size_t(word_bytes)], &word, size_t(word_bytes));
    }
  return e;
}

// 2:4-sparse f16 (A compressed with CUTLASS's metadata), f32 accumulation, f16 out; the reference
// multiplies the pruned dense A.
void check_sparse_f16(const Problem &p) {
  std::mt19937_64 rng(0x5f16);
  const SparseA sa = make_sparse_a(p, rng);
  std::uniform_int_distribution<int> value(-1024, 1024);
  std::vector<int> b(size_t(p.n) * p.k);
  Bytes ab(sa.compressed.size() * 2), bb(b.size() * 2);
  for (size_t i = 0; i < sa.compressed.size(); ++i) {
    const uint16_t h = f16_of_multiple_of_2_10(sa.compressed[i]);
    std::memcpy(&ab[2 * i], &h, 2);
  }
  for (size_t i = 0; i < b.size(); ++i) {
    b[i] = value(rng);
    const uint16_t h = f16_of_multiple_of_2_10(b[i]);
    std::memcpy(&bb[2 * i], &h, 2);
  }
  // The metadata's geometry comes from the kernel's printer (a dry run with the real sizes
  // first: E's size depends on it).
  const json meta =
      json::parse(capture("'" + kKernelsDir + "/sparse_f16_params' " + std::to_string(p.m) + " " +
                          std::to_string(p.n) + " " + std::to_string(p.k) + " 0 0 0 0 0"))
          .at("meta");
  const int word_bytes = meta.at("element_bytes"), per_e = meta.at("elements_per_element_e");
  ASSERT_EQ(meta.at("sparse").get<int>(), 2);
  ASSERT_EQ(meta.at("interleave").get<int>(), 2)
      << "this test lays out metadata for ColumnMajorInterleaved<2> only";
  ASSERT_TRUE((word_bytes == 2 || word_bytes == 4) && per_e == 8 * word_bytes / 2)
      << "unexpected metadata words: " << meta.dump();
  const Bytes eb = cutlass_metadata(sa, p, word_bytes, 4);
  const KernelRun run = run_cutlass("sparse_f16", "cutlass_anchor_sparse_gemm", 80, p,
                                    {&ab, &bb, &eb}, size_t(p.m) * p.n * 2);
  auto exact = [&](int r, int c, double *sum_abs) {
    double sum = 0, s = 0;
    for (int k = 0; k < p.k; ++k) {
      const double prod =
          double(sa.dense[size_t(r) * p.k + k]) * b[size_t(c) * p.k + k] / (1 << 20);
      sum += prod;
      s += std::fabs(prod);
    }
    *sum_abs = s;
    return sum;
  };
  auto got = [&](int r, int c) { return f16_to_float(load<uint16_t>(run.d, size_t(r) * p.n + c)); };
  expect_all(
      "2:4-sparse f16", p,
      [&](int r, int c) {
        double s = 0;
        const double ref = exact(r, c, &s);
        return std::fabs(got(r, c) - ref) <=
               std::ldexp(std::fabs(ref), -10) + p.k * std::ldexp(s, -23) + std::ldexp(1.0, -24);
      },
      [&](int r, int c) {
        double s = 0;
        return std::to_string(got(r, c)) + ", reference " + std::to_string(exact(r, c, &s));
      });
}

// 2:4-sparse s4 (4:8 by pairs of values; A compressed, two values per byte, with CUTLASS's
// metadata: 32-bit words of 8 nibbles, each naming the 2 kept pairs of 8 values), s32 out; the
// reference is the exact integer product of the pruned dense A.
void check_sparse_s4(const Problem &p) {
  std::mt19937_64 rng(0x5f54);
  const SparseA sa = make_sparse_a(p, rng, 2);
  std::uniform_int_distribution<int> value(-8, 7);
  std::vector<int> b(size_t(p.n) * p.k);
  Bytes ab(sa.compressed.size() / 2), bb(b.size() / 2);
  for (size_t i = 0; i < sa.compressed.size(); ++i)
    ab[i / 2] |= uint8_t((sa.compressed[i] & 0xf) << (4 * (i % 2)));
  for (size_t i = 0; i < b.size(); ++i) {
    b[i] = value(rng);
    bb[i / 2] |= uint8_t((b[i] & 0xf) << (4 * (i % 2)));
  }
  const json meta =
      json::parse(capture("'" + kKernelsDir + "/sparse_s4_params' " + std::to_string(p.m) + " " +
                          std::to_string(p.n) + " " + std::to_string(p.k) + " 0 0 0 0 0"))
          .at("meta");
  const int word_bytes = meta.at("element_bytes"), per_e = meta.at("elements_per_element_e");
  ASSERT_EQ(meta.at("sparse").get<int>(), 2);
  ASSERT_EQ(meta.at("interleave").get<int>(), 2)
      << "this test lays out metadata for ColumnMajorInterleaved<2> only";
  ASSERT_TRUE(word_bytes == 4 && per_e == 32) // 8 nibbles of 4 kept values
      << "unexpected metadata words: " << meta.dump();
  const Bytes eb = cutlass_metadata(sa, p, word_bytes, 8);
  const KernelRun run = run_cutlass("sparse_s4", "cutlass_anchor_sparse_gemm", 80, p,
                                    {&ab, &bb, &eb}, size_t(p.m) * p.n * 4);
  auto ref = [&](int r, int c) {
    int64_t sum = 0;
    for (int k = 0; k < p.k; ++k)
      sum += int64_t(sa.dense[size_t(r) * p.k + k]) * b[size_t(c) * p.k + k];
    return int32_t(sum);
  };
  auto got = [&](int r, int c) { return load<int32_t>(run.d, size_t(r) * p.n + c); };
  expect_all(
      "2:4-sparse s4", p, [&](int r, int c) { return got(r, c) == ref(r, c); },
      [&](int r, int c) {
        return std::to_string(got(r, c)) + ", reference " + std::to_string(ref(r, c));
      });
}

// The PTX nvcc made holds the form the test is about (else it would prove nothing about it).
void expect_form(const std::string &name, const std::string &form) {
  const std::string ptx = read_text(kKernelsDir + "/" + name + ".ptx");
  EXPECT_NE(ptx.find(form), std::string::npos) << name << ".ptx has no '" << form << "'";
}

// Each kernel at whole tiles and with tails in M, N and K (CUTLASS's alignment: K a multiple of
// 128 bits of A, N of 128 bits of D; the sparse kernel: M a multiple of 32 for the metadata's row
// groups and K of the CTA tile's K, as its can_implement requires).
TEST(CutlassOnEmulator, F16) {
  SKIP_WITHOUT_CUTLASS();
  expect_form("f16", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32");
  check_f16({128, 128, 64});
  check_f16({72, 40, 200});
}

TEST(CutlassOnEmulator, S4) {
  SKIP_WITHOUT_CUTLASS();
  expect_form("s4", "mma.sync.aligned.m16n8k64.row.col.s32.s4.s4.s32");
  check_s4({128, 128, 256});
  check_s4({72, 44, 320});
}

TEST(CutlassOnEmulator, B1AndPopc) {
  SKIP_WITHOUT_CUTLASS();
  expect_form("b1", "mma.sync.aligned.m16n8k256.row.col.s32.b1.b1.s32.and.popc");
  check_b1({128, 128, 1024});
  check_b1({72, 44, 640});
}

TEST(CutlassOnEmulator, Sparse24F16) {
  SKIP_WITHOUT_CUTLASS();
  expect_form("sparse_f16", ".m16n8k32.row.col.f32.f16.f16.f32");
  expect_form("sparse_f16", "mma.sp");
  check_sparse_f16({128, 128, 128});
  check_sparse_f16({128, 40, 192});
}

// An M tail: CUTLASS's metadata iterator zero-fills the rows past M, so the last CTA's mma.sp
// reads metadata 0b0000 (undefined in the PTX ISA) for rows whose results it never stores.
TEST(CutlassOnEmulator, Sparse24F16MTail) {
  SKIP_WITHOUT_CUTLASS();
  check_sparse_f16({96, 40, 192});
}

// s4 (CUTLASS's int4 sparse GEMM, m16n8k128 with .satfinite): whole tiles, and an M tail (rows
// past M read CUTLASS's zero-filled metadata, never stored).
TEST(CutlassOnEmulator, Sparse24S4) {
  SKIP_WITHOUT_CUTLASS();
  expect_form("sparse_s4", ".m16n8k128.row.col.s32.s4.s4.s32");
  expect_form("sparse_s4", "mma.sp");
  check_sparse_s4({128, 128, 256});
  check_sparse_s4({96, 64, 512});
}

TEST(CutlassOnEmulator, E4M3Sm89) {
  SKIP_WITHOUT_CUTLASS();
  expect_form("e4m3", "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32");
  check_e4m3({128, 128, 128});
  check_e4m3({72, 44, 208});
}

} // namespace
} // namespace tcjit
