#include "compiler/reference/tolerance.h"

#include "compiler/reference/conv_reference.h"
#include "compiler/reference/gemm_reference.h"
#include "compiler/reference/im2col.h"
#include "compiler/reference/numeric_convert.h"
#include "compiler/reference/random_fill.h"

#include "reference_test_util.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace tcjit {
namespace {

using testing::Buffer;
using testing::buffer_of;
using testing::gemm_spec;
using testing::matrix;
using testing::matrix_index;

// --- emulated kernels --------------------------------------------------------------------------
// How an emulated kernel sums the products of one output element in f32.
enum class Accumulation {
  forward,            // k = 0, 1, ... in f32, round to nearest
  reverse,            // k = K-1, ..., 0
  split_k4,           // four contiguous K chunks, then (p0 + p1) + (p2 + p3)
  tensor_core,        // groups of 8 products aligned to the largest exponent and truncated, the
                      // group sum truncated to f32: the V100/A100 behaviour measured by Fasi et
                      // al. (2021), with no guard bits (the pessimistic case)
  tensor_core_split2, // tensor_core on two K halves, then added
};

double truncate_to_multiple(double v, double quantum) {
  return std::trunc(v / quantum) * quantum;
}

float round_toward_zero_to_f32(double v) {
  if (v == 0)
    return 0.0f;
  return static_cast<float>(truncate_to_multiple(v, std::ldexp(1.0, std::ilogb(v) - 23)));
}

float tensor_core_sum(float acc, const double *products, int64_t count) {
  for (int64_t k0 = 0; k0 < count; k0 += 8) {
    const int64_t group = std::min<int64_t>(8, count - k0);
    int exponent = acc != 0 ? std::ilogb(acc) : std::numeric_limits<int>::min();
    for (int64_t i = 0; i < group; ++i)
      if (products[k0 + i] != 0)
        exponent = std::max(exponent, std::ilogb(products[k0 + i]));
    if (exponent == std::numeric_limits<int>::min())
      continue;
    const double quantum = std::ldexp(1.0, exponent - 23);
    double sum = truncate_to_multiple(acc, quantum);
    for (int64_t i = 0; i < group; ++i)
      sum += truncate_to_multiple(products[k0 + i], quantum);
    acc = round_toward_zero_to_f32(sum);
  }
  return acc;
}

float accumulate(const std::vector<double> &products, Accumulation how) {
  const auto k = int64_t(products.size());
  float acc = 0;
  switch (how) {
  case Accumulation::forward:
    for (int64_t i = 0; i < k; ++i)
      acc += static_cast<float>(products[size_t(i)]);
    return acc;
  case Accumulation::reverse:
    for (int64_t i = k - 1; i >= 0; --i)
      acc += static_cast<float>(products[size_t(i)]);
    return acc;
  case Accumulation::split_k4: {
    float part[4] = {0, 0, 0, 0};
    for (int64_t i = 0; i < k; ++i)
      part[i * 4 / k] += static_cast<float>(products[size_t(i)]);
    return (part[0] + part[1]) + (part[2] + part[3]);
  }
  case Accumulation::tensor_core: return tensor_core_sum(0.0f, products.data(), k);
  case Accumulation::tensor_core_split2:
    return tensor_core_sum(0.0f, products.data(), k / 2) +
           tensor_core_sum(0.0f, products.data() + k / 2, k - k / 2);
  }
  return acc;
}

// A GEMM problem (row-major A, column-major B, row-major D) with random inputs.
struct Problem {
  OpSpec spec;
  MathMode math = MathMode::f32;
  Buffer a, b, bias;
};

Problem random_problem(int64_t m, int64_t n, int64_t k, DType in, DType out, double lo, double hi,
                       uint64_t seed, int64_t batch = 1) {
  Problem p;
  p.spec = gemm_spec(m, n, k, matrix(in, MatrixLayout::row), matrix(in, MatrixLayout::col),
                     matrix(out, MatrixLayout::row), is_integer_type(in) ? DType::s32 : DType::f32,
                     batch);
  p.a = Buffer(in, batch * m * k);
  p.b = Buffer(in, batch * k * n);
  p.bias = Buffer(out, std::max(m, n));
  fill_random(in, p.a.data(), p.a.size(), seed, lo, hi);
  fill_random(in, p.b.data(), p.b.size(), seed + 1, lo, hi);
  fill_random(out, p.bias.data(), p.bias.size(), seed + 2, lo, hi);
  return p;
}

ReferenceResult reference_of(const Problem &p) {
  Buffer d(p.spec.gemm.c.dtype,
           p.spec.gemm.batch.value * p.spec.gemm.m.value * p.spec.gemm.n.value);
  return reference_gemm(p.spec, {p.a.data(), p.b.data(), d.data(), p.bias.data()}, p.math);
}

// Deliberate kernel bugs for the emulation.
enum class Bug { none, a_transposed, last_k_dropped, no_tf32_rounding, tf32_truncated };

// Emulates a kernel: products as the hardware sees the inputs, summed in f32 as `how` says, the
// epilogue in f32 (tanh/gelu/... with the float functions), one rounding to the output dtype.
Buffer emulate_kernel(const Problem &p, Accumulation how, Bug bug = Bug::none) {
  const GemmSpec &g = p.spec.gemm;
  const int64_t m = g.m.value, n = g.n.value, k = g.k.value, batch = g.batch.value;
  Buffer d(g.c.dtype, batch * m * n);
  auto input = [&](const Buffer &buf, DType dtype, int64_t index) {
    const double raw = buf.get(index);
    const bool tf32 = dtype == DType::tf32 || (dtype == DType::f32 && p.math == MathMode::tf32);
    if (!tf32 || bug == Bug::no_tf32_rounding)
      return raw;
    if (bug == Bug::tf32_truncated) // what feeding raw f32 bits to a tf32 MMA does
      return double(std::bit_cast<float>(std::bit_cast<uint32_t>(float(raw)) & 0xFFFFE000u));
    return double(round_to_tf32(float(raw)));
  };
  const Epilogue &e = p.spec.epilogue;
  for (int64_t bt = 0; bt < batch; ++bt)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        std::vector<double> products;
        const int64_t terms = bug == Bug::last_k_dropped ? k - 1 : k;
        for (int64_t kk = 0; kk < terms; ++kk) {
          const int64_t a_row = bug == Bug::a_transposed ? kk : i;
          const int64_t a_col = bug == Bug::a_transposed ? i : kk;
          products.push_back(input(p.a, g.a.dtype, matrix_index(g.a, m, k, bt, a_row, a_col)) *
                             input(p.b, g.b.dtype, matrix_index(g.b, k, n, bt, kk, j)));
        }
        const float acc = accumulate(products, how);
        float v = static_cast<float>(e.alpha) * acc;
        if (e.bias == BiasKind::col)
          v += static_cast<float>(p.bias.get(j));
        if (e.bias == BiasKind::row)
          v += static_cast<float>(p.bias.get(i));
        switch (e.act) {
        case Activation::none: break;
        case Activation::relu: v = v > 0 ? v : 0.0f; break;
        case Activation::tanh: v = std::tanh(v); break;
        case Activation::sigmoid: v = 1.0f / (1.0f + std::exp(-v)); break;
        case Activation::elu: v = v > 0 ? v : std::expm1(v); break;
        case Activation::gelu: v = 0.5f * v * (1.0f + std::erf(v * 0.70710678f)); break;
        case Activation::gelu_tanh:
          v = 0.5f * v * (1.0f + std::tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
          break;
        case Activation::softplus: v = v > 15 ? v : std::log1p(std::exp(v)); break;
        case Activation::swish: v = v / (1.0f + std::exp(-v)); break;
        case Activation::custom: ADD_FAILURE() << "no custom activation here"; break;
        }
        d.set(matrix_index(g.c, m, n, bt, i, j), v);
      }
  return d;
}

const Accumulation every_order[] = {Accumulation::forward, Accumulation::reverse,
                                    Accumulation::split_k4, Accumulation::tensor_core,
                                    Accumulation::tensor_core_split2};

// --- the model's constants ---------------------------------------------------------------------

TEST(ToleranceModel, UnitRoundoffsFollowTheDtypes) {
  const OpSpec f16 =
      gemm_spec(8, 8, 100, matrix(DType::f16, MatrixLayout::row),
                matrix(DType::f16, MatrixLayout::row), matrix(DType::f16, MatrixLayout::row));
  const ToleranceModel model = tolerance_model(f16, MathMode::f32);
  EXPECT_EQ(model.output_unit_roundoff, 0x1p-11);
  EXPECT_EQ(model.accumulator_unit_roundoff, 0x1p-24);
  EXPECT_EQ(model.reduction_length, 100 + 16);
  EXPECT_FALSE(model.integer_output);
  OpSpec bf16 = f16;
  bf16.gemm.c.dtype = DType::bf16;
  EXPECT_EQ(tolerance_model(bf16, MathMode::f32).output_unit_roundoff, 0x1p-8);
  OpSpec f64 = gemm_spec(8, 8, 8, matrix(DType::f64, MatrixLayout::row),
                         matrix(DType::f64, MatrixLayout::row),
                         matrix(DType::f64, MatrixLayout::row), DType::f64);
  const ToleranceModel double_model = tolerance_model(f64, MathMode::f32);
  EXPECT_EQ(double_model.output_unit_roundoff, 0x1p-53);
  EXPECT_EQ(double_model.epilogue_unit_roundoff, 0x1p-53);
  EXPECT_THROW(tolerance_model(f16, MathMode::automatic), std::invalid_argument);
}

// fp8 inputs: f32 accumulators whose hardware sums keep about 14 bits: u_acc = 2^-13
// (docs/numerics.md); the output's roundoff is the output's.
TEST(ToleranceModel, Fp8InputsBoundTheAccumulationBy13Bits) {
  const OpSpec fp8 =
      gemm_spec(8, 8, 64, matrix(DType::e4m3, MatrixLayout::row),
                matrix(DType::e5m2, MatrixLayout::col), matrix(DType::f16, MatrixLayout::row));
  const ToleranceModel model = tolerance_model(fp8, MathMode::f32);
  EXPECT_EQ(model.accumulator_unit_roundoff, 0x1p-13);
  EXPECT_EQ(model.output_unit_roundoff, 0x1p-11);
  EXPECT_EQ(model.reduction_length, 64 + 16);
}

TEST(ToleranceModel, IntegerOutputsAreExactUnlessScaledByAFloat) {
  OpSpec s32 = gemm_spec(4, 4, 64, matrix(DType::s8, MatrixLayout::row),
                         matrix(DType::s8, MatrixLayout::col),
                         matrix(DType::s32, MatrixLayout::row), DType::s32);
  const ToleranceModel exact = tolerance_model(s32, MathMode::f32);
  EXPECT_EQ(element_tolerance(exact, 12345, 12345, 80000), 0.0);
  s32.epilogue.beta = 1; // integral alpha and beta, relu: still exact
  s32.epilogue.act = Activation::relu;
  EXPECT_EQ(element_tolerance(tolerance_model(s32, MathMode::f32), 7, 7, 900), 0.0);
  OpSpec s8 = s32;
  s8.gemm.c.dtype = DType::s8;
  s8.epilogue = {};
  s8.epilogue.alpha = 0.01;
  const double scaled = element_tolerance(tolerance_model(s8, MathMode::f32), 12.5, 1250, 20);
  EXPECT_GE(scaled, 1.0);
  EXPECT_LT(scaled, 1.001);
}

TEST(ToleranceModel, ReductionLengthOfConvolutionsIsTheirImplicitGemmK) {
  OpSpec conv;
  conv.kind = OpKind::conv2d;
  conv.conv.n = Dim::fixed_size(2);
  conv.conv.h = conv.conv.w = 8;
  conv.conv.c = 6;
  conv.conv.k = 4;
  conv.conv.r = conv.conv.s = 3;
  conv.conv.groups = 2;
  conv.conv.x = conv.conv.y = {DType::f16, TensorLayout::nhwc};
  conv.conv.filter = {DType::f16, TensorLayout::krsc};
  EXPECT_EQ(tolerance_model(conv, MathMode::f32).reduction_length, 3 * 3 * 3 + 16); // r s c/g
  conv.conv.pass = ConvPass::dgrad;
  EXPECT_EQ(tolerance_model(conv, MathMode::f32).reduction_length, 3 * 3 * 2 + 16); // r s k/g
  conv.conv.pass = ConvPass::wgrad;
  EXPECT_EQ(tolerance_model(conv, MathMode::f32).reduction_length, 2 * 6 * 6 + 16); // n p q
}

// f16 accumulation (docs/numerics.md): the bound covers a K-long dot product whose accumulator
// is rounded to f16 after every mma of 16 products, to nearest (the emulator), and after every
// group of 8 products, truncated (A100's group size, the pessimistic rounding), the group's sum
// in f32, on all-positive data where the rounding errors never cancel; and it is a bound, not a
// blanket (truncation reaches more than a sixteenth of it from K = 256 on: the truncation errors
// of a running sum that grows to m).
double f16_truncate(double v) {
  if (v == 0)
    return 0;
  return truncate_to_multiple(v, std::ldexp(1.0, std::max(std::ilogb(v), -14) - 10));
}

TEST(ToleranceModel, F16AccumulationBoundCoversEveryStepsRounding) {
  for (const int64_t k : {16, 100, 256, 1024, 4096}) {
    SCOPED_TRACE("K = " + std::to_string(k));
    const OpSpec spec = gemm_spec(1, 1, k, matrix(DType::f16, MatrixLayout::row),
                                  matrix(DType::f16, MatrixLayout::row),
                                  matrix(DType::f16, MatrixLayout::row), DType::f16);
    const ToleranceModel model = tolerance_model(spec, MathMode::f32);
    EXPECT_EQ(model.f16_accumulation_steps, double((k + 7) / 8));
    EXPECT_EQ(model.accumulator_unit_roundoff, 0x1p-24);
    std::vector<double> products(static_cast<size_t>(k));
    uint64_t state = 12345 + static_cast<uint64_t>(k);
    double exact = 0;
    for (double &p : products) {
      state = state * 6364136223846793005ull + 1442695040888963407ull;
      const double a = round_to_dtype(DType::f16, double(state >> 40) / double(1 << 24));
      const double b = round_to_dtype(DType::f16, 0.25 + double((state >> 20) & 0xfffff) / 0x1p20);
      p = a * b; // exact in f32: 11 x 11 significand bits
      exact += p;
    }
    double nearest = 0, truncated = 0;
    for (int64_t k0 = 0; k0 < k; k0 += 16) {
      float step = static_cast<float>(nearest);
      for (int64_t i = k0; i < std::min<int64_t>(k, k0 + 16); ++i)
        step += static_cast<float>(products[size_t(i)]);
      nearest = round_to_dtype(DType::f16, step);
    }
    for (int64_t k0 = 0; k0 < k; k0 += 8) {
      float step = static_cast<float>(truncated);
      for (int64_t i = k0; i < std::min<int64_t>(k, k0 + 8); ++i)
        step = round_toward_zero_to_f32(double(step) + products[size_t(i)]);
      truncated = f16_truncate(step);
    }
    const double bound = f16_accumulation_bound(model, exact); // m = sum |a b| = exact here
    EXPECT_LE(std::fabs(nearest - exact), bound);
    EXPECT_LE(std::fabs(truncated - exact), bound);
    if (k >= 256) {
      EXPECT_GT(std::fabs(truncated - exact), bound / 16) << "the bound is far from tight";
    }
    // without f16 accumulation there is no such term
    OpSpec f32acc = spec;
    f32acc.acc = DType::f32;
    EXPECT_EQ(f16_accumulation_bound(tolerance_model(f32acc, MathMode::f32), exact), 0);
  }
}

// --- correct kernels pass ----------------------------------------------------------------------

TEST(Tolerance, CorrectRoundingNoisePassesInEveryOrder) {
  struct Case {
    DType in, out;
    double lo, hi; // positive data makes truncation errors drift in one direction
    int64_t k;
  };
  const Case cases[] = {
      {DType::f16, DType::f32, -1, 1, 512},   {DType::f16, DType::f16, -1, 1, 512},
      {DType::bf16, DType::bf16, -1, 1, 256}, {DType::f16, DType::f32, 0, 1, 2048},
      {DType::bf16, DType::f32, 0, 1, 1024},  {DType::f32, DType::f32, -1, 1, 384}};
  for (const Case &c : cases) {
    Problem p = random_problem(16, 24, c.k, c.in, c.out, c.lo, c.hi, 21);
    p.math = MathMode::tf32;
    const ReferenceResult reference = reference_of(p);
    for (const Accumulation how : every_order) {
      const Buffer kernel = emulate_kernel(p, how);
      const CompareReport report = compare_with_reference(p.spec, p.math, kernel.data(), reference);
      EXPECT_TRUE(report.ok()) << to_string(c.in) << " -> " << to_string(c.out) << " K " << c.k
                               << " order " << int(how) << ": " << report.summary();
      // A correct kernel keeps a margin: at most 0.5 of the tolerance from the accumulation
      // (output rounding alone can reach 1.0 for a value just above a power of two).
      if (c.out == DType::f32) {
        EXPECT_LT(report.max_error_over_tolerance, 0.5) << report.summary();
      }
    }
  }
}

TEST(Tolerance, EpilogueAndActivationsInFloatPass) {
  const Activation all[] = {Activation::relu,     Activation::tanh, Activation::sigmoid,
                            Activation::elu,      Activation::gelu, Activation::gelu_tanh,
                            Activation::softplus, Activation::swish};
  for (const Activation act : all)
    for (const DType out : {DType::f32, DType::f16}) {
      Problem p = random_problem(16, 16, 128, DType::f16, out, -1, 1, 5);
      p.spec.epilogue = {0.37, 0, BiasKind::col, act, {}};
      const ReferenceResult reference = reference_of(p);
      const Buffer kernel = emulate_kernel(p, Accumulation::tensor_core);
      const CompareReport report =
          compare_with_reference(p.spec, MathMode::f32, kernel.data(), reference);
      EXPECT_TRUE(report.ok()) << to_string(act) << ": " << report.summary();
    }
}

// --- broken kernels are flagged ----------------------------------------------------------------

TEST(Tolerance, FlagsOneElementTwoUlpsOff) {
  Problem p = random_problem(16, 16, 256, DType::f16, DType::f16, -1, 1, 8);
  const ReferenceResult reference = reference_of(p);
  Buffer kernel = emulate_kernel(p, Accumulation::tensor_core);
  ASSERT_TRUE(compare_with_reference(p.spec, MathMode::f32, kernel.data(), reference).ok());
  const int64_t victim = 5 * 16 + 9;
  auto *bits = static_cast<uint16_t *>(kernel.data());
  // Two f16 ulps away from the exact value (the bit pattern's magnitude grows with |value|).
  const bool away_up =
      (kernel.get(victim) >= reference.values[size_t(victim)]) == (kernel.get(victim) >= 0);
  bits[victim] = static_cast<uint16_t>(away_up ? bits[victim] + 2 : bits[victim] - 2);
  const CompareReport report =
      compare_with_reference(p.spec, MathMode::f32, kernel.data(), reference);
  EXPECT_EQ(report.mismatches, 1);
  EXPECT_EQ(report.worst_index, victim);
  EXPECT_EQ(report.worst_coordinates, "batch 0, row 5, col 9");
  const std::string summary = report.summary();
  EXPECT_NE(summary.find("1 of 256 f16 elements out of tolerance"), std::string::npos) << summary;
  EXPECT_NE(summary.find("element 89 (batch 0, row 5, col 9)"), std::string::npos) << summary;
  EXPECT_NE(summary.find("got "), std::string::npos) << summary;
  EXPECT_NE(summary.find("tolerance "), std::string::npos) << summary;
}

TEST(Tolerance, FlagsSwappedElements) {
  Problem p = random_problem(16, 16, 256, DType::f16, DType::f32, -1, 1, 9);
  const ReferenceResult reference = reference_of(p);
  Buffer kernel = emulate_kernel(p, Accumulation::forward);
  const double first = kernel.get(3), second = kernel.get(200);
  ASSERT_GT(std::fabs(first - second), 0.01);
  kernel.set(3, second);
  kernel.set(200, first);
  const CompareReport report =
      compare_with_reference(p.spec, MathMode::f32, kernel.data(), reference);
  EXPECT_EQ(report.mismatches, 2) << report.summary();
}

TEST(Tolerance, FlagsTransposedOperandDroppedTermAndWrongBias) {
  for (const DType out : {DType::f32, DType::f16, DType::bf16}) {
    Problem p = random_problem(64, 64, 64, DType::f16, out, -1, 1, 10);
    const ReferenceResult reference = reference_of(p);
    const Buffer transposed = emulate_kernel(p, Accumulation::tensor_core, Bug::a_transposed);
    const CompareReport t =
        compare_with_reference(p.spec, MathMode::f32, transposed.data(), reference);
    EXPECT_GT(t.mismatches, t.count * 9 / 10) << to_string(out) << " " << t.summary();
    const Buffer dropped = emulate_kernel(p, Accumulation::tensor_core, Bug::last_k_dropped);
    const CompareReport d =
        compare_with_reference(p.spec, MathMode::f32, dropped.data(), reference);
    // The dropped term a[i][63] b[63][j] is below the tolerance only when it is tiny.
    EXPECT_GT(d.mismatches, d.count * (out == DType::bf16 ? 5 : 8) / 10)
        << to_string(out) << " " << d.summary();
  }
  Problem p = random_problem(16, 16, 64, DType::f16, DType::f16, -1, 1, 11);
  p.spec.epilogue.bias = BiasKind::row;
  const ReferenceResult reference = reference_of(p);
  p.spec.epilogue.bias = BiasKind::col; // the kernel adds the bias per column instead
  const Buffer kernel = emulate_kernel(p, Accumulation::forward);
  p.spec.epilogue.bias = BiasKind::row;
  const CompareReport report =
      compare_with_reference(p.spec, MathMode::f32, kernel.data(), reference);
  EXPECT_GT(report.mismatches, report.count / 2) << report.summary();
}

TEST(Tolerance, FlagsWrongTf32Handling) {
  Problem p = random_problem(32, 32, 256, DType::f32, DType::f32, -1, 1, 12);
  p.math = MathMode::tf32;
  const ReferenceResult reference = reference_of(p);
  ASSERT_TRUE(compare_with_reference(p.spec, p.math,
                                     emulate_kernel(p, Accumulation::tensor_core).data(), reference)
                  .ok());
  const Buffer full_f32 = emulate_kernel(p, Accumulation::forward, Bug::no_tf32_rounding);
  EXPECT_GT(compare_with_reference(p.spec, p.math, full_f32.data(), reference).mismatches, 50);
  const Buffer truncated = emulate_kernel(p, Accumulation::tensor_core, Bug::tf32_truncated);
  EXPECT_GT(compare_with_reference(p.spec, p.math, truncated.data(), reference).mismatches, 50);
  // And the other way round: a kernel using tf32 where the spec asks for f32 math.
  Problem f32_math = p;
  f32_math.math = MathMode::f32;
  const ReferenceResult f32_reference = reference_of(f32_math);
  const Buffer tf32_kernel = emulate_kernel(p, Accumulation::forward);
  EXPECT_GT(compare_with_reference(f32_math.spec, MathMode::f32, tf32_kernel.data(), f32_reference)
                .mismatches,
            50);
}

TEST(Tolerance, FlagsTheWrongBatch) {
  Problem p = random_problem(8, 8, 32, DType::f16, DType::f32, -1, 1, 13, 2);
  const ReferenceResult reference = reference_of(p);
  Buffer kernel = emulate_kernel(p, Accumulation::forward);
  ASSERT_TRUE(compare_with_reference(p.spec, MathMode::f32, kernel.data(), reference).ok());
  for (int64_t i = 0; i < 64; ++i) // batch 1's output overwritten with batch 0's
    kernel.set(64 + i, kernel.get(i));
  const CompareReport report =
      compare_with_reference(p.spec, MathMode::f32, kernel.data(), reference);
  EXPECT_EQ(report.mismatches, 64) << report.summary();
  EXPECT_GE(report.worst_index, 64);
}

TEST(Tolerance, IntegerOutputsCompareExactlyOrWithinOne) {
  Problem p = random_problem(8, 8, 64, DType::s8, DType::s32, -1, 1, 14);
  const ReferenceResult reference = reference_of(p);
  Buffer kernel(DType::s32, 64);
  for (int64_t i = 0; i < 64; ++i)
    kernel.set(i, reference.values[size_t(i)]);
  EXPECT_TRUE(compare_with_reference(p.spec, MathMode::f32, kernel.data(), reference).ok());
  kernel.set(10, kernel.get(10) + 1);
  const CompareReport off_by_one =
      compare_with_reference(p.spec, MathMode::f32, kernel.data(), reference);
  EXPECT_EQ(off_by_one.mismatches, 1);
  EXPECT_EQ(off_by_one.worst_index, 10);

  Problem scaled = random_problem(8, 8, 64, DType::s8, DType::s8, -1, 1, 15);
  scaled.spec.epilogue.alpha = 0.0123;
  const ReferenceResult s8_reference = reference_of(scaled);
  Buffer s8_kernel(DType::s8, 64);
  for (int64_t i = 0; i < 64; ++i)
    s8_kernel.set(i, s8_reference.values[size_t(i)]);
  s8_kernel.set(3, s8_kernel.get(3) + 1); // a float epilogue may round to the other side
  EXPECT_TRUE(
      compare_with_reference(scaled.spec, MathMode::f32, s8_kernel.data(), s8_reference).ok());
  s8_kernel.set(3, s8_kernel.get(3) + 1);
  EXPECT_EQ(
      compare_with_reference(scaled.spec, MathMode::f32, s8_kernel.data(), s8_reference).mismatches,
      1);
}

TEST(Tolerance, NanAndInfinityHandling) {
  // A NaN input makes every element of its row NaN; the kernel must produce NaN there too.
  const OpSpec spec =
      gemm_spec(2, 2, 2, matrix(DType::f16, MatrixLayout::row),
                matrix(DType::f16, MatrixLayout::row), matrix(DType::f16, MatrixLayout::row));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const Buffer a = buffer_of(DType::f16, {nan, 1, 1, 1});
  const Buffer b = buffer_of(DType::f16, {1, 1, 1, 1});
  Buffer d(DType::f16, 4);
  const ReferenceResult reference =
      reference_gemm(spec, {a.data(), b.data(), d.data()}, MathMode::f32);
  EXPECT_TRUE(compare_with_reference(spec, MathMode::f32, d.data(), reference).ok());
  Buffer wrong = d;
  wrong.set(0, 2);   // a finite value where NaN was expected
  wrong.set(3, nan); // NaN where 2 was expected
  const CompareReport report = compare_with_reference(spec, MathMode::f32, wrong.data(), reference);
  EXPECT_EQ(report.mismatches, 2);
  EXPECT_TRUE(std::isinf(report.max_error_over_tolerance));

  // Overflow: 70000 rounds to f16 infinity; 65519 may overflow after accumulation error.
  const OpSpec big =
      gemm_spec(1, 2, 1, matrix(DType::f32, MatrixLayout::row),
                matrix(DType::f32, MatrixLayout::row), matrix(DType::f16, MatrixLayout::row));
  const Buffer big_a = buffer_of(DType::f32, {1});
  const Buffer big_b = buffer_of(DType::f32, {70000, 65519});
  Buffer big_d(DType::f16, 2);
  const ReferenceResult big_reference =
      reference_gemm(big, {big_a.data(), big_b.data(), big_d.data()}, MathMode::f32);
  EXPECT_TRUE(std::isinf(big_d.get(0)));
  EXPECT_EQ(big_d.get(1), 65504);
  Buffer overflowed = big_d;
  overflowed.set(1, std::numeric_limits<double>::infinity());
  EXPECT_TRUE(compare_with_reference(big, MathMode::f32, overflowed.data(), big_reference).ok());
  overflowed.set(0, 65504); // the exact 70000 must not come out finite
  EXPECT_FALSE(compare_with_reference(big, MathMode::f32, overflowed.data(), big_reference).ok());
  overflowed.set(0, -std::numeric_limits<double>::infinity());
  EXPECT_FALSE(compare_with_reference(big, MathMode::f32, overflowed.data(), big_reference).ok());
}

TEST(Tolerance, ConvolutionKernelsPassAndAWrongFilterLayoutIsFlagged) {
  // n 2, 16x16, c 16 -> k 8, 3x3 pad 1: fprop K = 144, wgrad K = 512. With groups = 1 and
  // channels-last tensors, GEMM element (row, col) is element row * N + col of the output.
  testing::ConvShape shape;
  shape.n = 2;
  shape.h = shape.w = 16;
  shape.c = 16;
  shape.k = 8;
  shape.r = shape.s = 3;
  shape.pad = {0, 1, 1};
  for (const ConvPass pass : {ConvPass::fprop, ConvPass::wgrad}) {
    OpSpec spec = testing::conv_spec(shape, pass, DType::f16);
    (pass == ConvPass::fprop ? spec.conv.y : spec.conv.filter).dtype = DType::f32;
    Buffer x(DType::f16, 2 * 16 * 16 * 16), filter(spec.conv.filter.dtype, 8 * 9 * 16),
        y(spec.conv.y.dtype, 2 * 16 * 16 * 8);
    fill_random(x.dtype, x.data(), x.size(), 31);
    fill_random(filter.dtype, filter.data(), filter.size(), 32);
    fill_random(y.dtype, y.data(), y.size(), 33);
    Buffer &output = pass == ConvPass::fprop ? y : filter;
    const Buffer inputs_x = x, inputs_filter = filter, inputs_y = y;
    const ReferenceResult reference =
        reference_conv(spec, {x.data(), filter.data(), y.data(), nullptr}, MathMode::f32);

    Buffer kernel = output;
    const Im2colGemm lowered = lower_conv_to_gemm(spec,
                                                  {const_cast<void *>(inputs_x.data()),
                                                   const_cast<void *>(inputs_filter.data()),
                                                   const_cast<void *>(inputs_y.data()), nullptr},
                                                  MathMode::f32);
    const int64_t m = lowered.gemm.gemm.m.value, n = lowered.gemm.gemm.n.value,
                  k = lowered.gemm.gemm.k.value;
    for (int64_t row = 0; row < m; ++row)
      for (int64_t col = 0; col < n; ++col) {
        std::vector<double> products;
        for (int64_t kk = 0; kk < k; ++kk)
          products.push_back(lowered.a[size_t(row * k + kk)] * lowered.b[size_t(kk * n + col)]);
        kernel.set(row * n + col, accumulate(products, Accumulation::tensor_core));
      }
    const CompareReport good =
        compare_with_reference(spec, MathMode::f32, kernel.data(), reference);
    EXPECT_TRUE(good.ok()) << to_string(pass) << ": " << good.summary();

    OpSpec misread = spec; // the kernel reads the krsc filter as kcrs
    misread.conv.filter.layout = TensorLayout::kcrs;
    Buffer wrong_x = inputs_x, wrong_filter = inputs_filter, wrong_y = inputs_y;
    reference_conv(misread, {wrong_x.data(), wrong_filter.data(), wrong_y.data(), nullptr},
                   MathMode::f32);
    const Buffer &wrong = pass == ConvPass::fprop ? wrong_y : wrong_filter;
    const CompareReport bad = compare_with_reference(spec, MathMode::f32, wrong.data(), reference);
    EXPECT_GT(bad.mismatches, bad.count * 9 / 10) << to_string(pass) << ": " << bad.summary();
  }
}

TEST(Tolerance, ReportsCountsAndRejectsMismatchedReferences) {
  Problem p = random_problem(4, 4, 16, DType::f16, DType::f32, -1, 1, 16);
  const ReferenceResult reference = reference_of(p);
  const Buffer kernel = emulate_kernel(p, Accumulation::forward);
  const CompareReport report =
      compare_with_reference(p.spec, MathMode::f32, kernel.data(), reference);
  EXPECT_EQ(report.count, 16);
  EXPECT_TRUE(report.ok());
  EXPECT_GE(report.worst_index, 0);
  EXPECT_NE(report.summary().find("ok: all 16 f32 elements within tolerance"), std::string::npos)
      << report.summary();
  ReferenceResult short_reference = reference;
  short_reference.values.pop_back();
  EXPECT_THROW(compare_with_reference(p.spec, MathMode::f32, kernel.data(), short_reference),
               std::invalid_argument);
}

} // namespace
} // namespace tcjit
