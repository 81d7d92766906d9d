#include "compiler/reference/gemm_reference.h"
#include "support/escape_controls.h"

#include "compiler/reference/activation.h"
#include "compiler/reference/bind_dims.h"
#include "compiler/reference/random_fill.h"
#include "compiler/target/dtype_info.h"

#include "reference_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tcjit {
namespace {

using testing::Buffer;
using testing::buffer_of;
using testing::gemm_spec;
using testing::matrix;
using testing::matrix_buffer;
using testing::matrix_index;

// The hand-computed 2x3x4 case used throughout:
//   A = [ 1 2 3  4 ]   B = [  1 0  2 ]   A B = [ 3 17  4 ]   sum |a||b| = [ 11 17 8 ]
//       [-1 0 2 -3 ]       [  0 1 -1 ]         [ 6 -7 -5 ]                [  8 11 5 ]
//                          [  2 1  0 ]
//                          [ -1 3  1 ]
const std::vector<double> small_a = {1, 2, 3, 4, -1, 0, 2, -3};
const std::vector<double> small_b = {1, 0, 2, 0, 1, -1, 2, 1, 0, -1, 3, 1};
const ReferenceValues small_ab = {3, 17, 4, 6, -7, -5};
const std::vector<double> small_abs = {11, 17, 8, 8, 11, 5};

constexpr double padding_sentinel = 99;

struct SmallGemm {
  OpSpec spec;
  Buffer a, b, c;
};

SmallGemm small_gemm(MatrixOperand a, MatrixOperand b, MatrixOperand c, int64_t batch = 1,
                     const std::vector<double> &a_values = small_a,
                     const std::vector<double> &b_values = small_b) {
  SmallGemm g;
  g.spec = gemm_spec(2, 3, 4, a, b, c, DType::f32, batch);
  g.a = matrix_buffer(a, 2, 4, batch, a_values, padding_sentinel);
  g.b = matrix_buffer(b, 4, 3, batch, b_values, padding_sentinel);
  g.c =
      matrix_buffer(c, 2, 3, batch, std::vector<double>(size_t(6 * batch), 0.0), padding_sentinel);
  return g;
}

// Logical (batch, row, col) values of D read from the output buffer.
double d_at(const SmallGemm &g, int64_t batch, int64_t row, int64_t col) {
  return g.c.get(matrix_index(g.spec.gemm.c, 2, 3, batch, row, col));
}

TEST(GemmReference, HandComputedInEveryLayoutCombinationWithAndWithoutPadding) {
  for (const MatrixLayout la : {MatrixLayout::row, MatrixLayout::col})
    for (const MatrixLayout lb : {MatrixLayout::row, MatrixLayout::col})
      for (const MatrixLayout lc : {MatrixLayout::row, MatrixLayout::col})
        for (const int64_t extra_ld : {0, 3}) {
          const auto ld = [&](MatrixLayout l, int64_t rows, int64_t cols) {
            return (l == MatrixLayout::row ? cols : rows) + extra_ld;
          };
          SmallGemm g =
              small_gemm(matrix(DType::f16, la, ld(la, 2, 4)), matrix(DType::f16, lb, ld(lb, 4, 3)),
                         matrix(DType::f32, lc, ld(lc, 2, 3)));
          const std::string what = std::string(to_string(la)) + " " + std::string(to_string(lb)) +
                                   " " + std::string(to_string(lc)) + " +" +
                                   std::to_string(extra_ld);
          const ReferenceResult r =
              reference_gemm(g.spec, {g.a.data(), g.b.data(), g.c.data(), nullptr}, MathMode::f32);
          ASSERT_EQ(r.values.size(), 6u) << what;
          for (int64_t i = 0; i < 2; ++i)
            for (int64_t j = 0; j < 3; ++j) {
              // Result elements follow the output's memory order.
              const size_t e = size_t(lc == MatrixLayout::row ? i * 3 + j : j * 2 + i);
              EXPECT_EQ(r.values[e], small_ab[size_t(i * 3 + j)]) << what;
              EXPECT_EQ(r.accumulators[e], small_ab[size_t(i * 3 + j)]) << what;
              EXPECT_EQ(r.magnitudes[e], small_abs[size_t(i * 3 + j)]) << what;
              EXPECT_EQ(d_at(g, 0, i, j), small_ab[size_t(i * 3 + j)]) << what;
            }
          int padding_intact = 0;
          for (int64_t i = 0; i < g.c.size(); ++i)
            padding_intact += g.c.get(i) == padding_sentinel;
          EXPECT_EQ(padding_intact, g.c.size() - 6) << what;
        }
}

TEST(GemmReference, BatchesUseTheFullMatrixStride) {
  // Batch 1: A doubled and B negated, so D[1] = -2 D[0].
  std::vector<double> a2 = small_a, b2 = small_b;
  for (const double v : small_a)
    a2.push_back(2 * v);
  for (const double v : small_b)
    b2.push_back(-v);
  SmallGemm g = small_gemm(matrix(DType::f16, MatrixLayout::row, 6),
                           matrix(DType::bf16, MatrixLayout::col, 5),
                           matrix(DType::f32, MatrixLayout::row, 4), 2, a2, b2);
  const ReferenceResult r =
      reference_gemm(g.spec, {g.a.data(), g.b.data(), g.c.data(), nullptr}, MathMode::f32);
  ASSERT_EQ(r.values.size(), 12u);
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j) {
      EXPECT_EQ(d_at(g, 0, i, j), small_ab[size_t(i * 3 + j)]);
      EXPECT_EQ(d_at(g, 1, i, j), -2 * small_ab[size_t(i * 3 + j)]);
      EXPECT_EQ(r.values[size_t(6 + i * 3 + j)], -2 * small_ab[size_t(i * 3 + j)]);
      EXPECT_EQ(r.magnitudes[size_t(6 + i * 3 + j)], 2 * small_abs[size_t(i * 3 + j)]);
    }
}

TEST(GemmReference, AlphaBetaAndRowBias) {
  // D = 2 AB - C + bias_row; C = [1 2 3; 4 5 6], bias = [10, 20].
  SmallGemm g =
      small_gemm(matrix(DType::f16, MatrixLayout::row), matrix(DType::f16, MatrixLayout::row),
                 matrix(DType::f32, MatrixLayout::row));
  g.c = buffer_of(DType::f32, {1, 2, 3, 4, 5, 6});
  g.spec.epilogue.alpha = 2;
  g.spec.epilogue.beta = -1;
  g.spec.epilogue.bias = BiasKind::row;
  const Buffer bias = buffer_of(DType::f32, {10, 20});
  const ReferenceResult r =
      reference_gemm(g.spec, {g.a.data(), g.b.data(), g.c.data(), bias.data()}, MathMode::f32);
  const ReferenceValues expected = {15, 42, 15, 28, 1, 4};
  const ReferenceValues magnitudes = {33, 46, 29, 40, 47, 36}; // 2|AB| + |C| + |bias|
  EXPECT_EQ(r.values, expected);
  EXPECT_EQ(r.magnitudes, magnitudes);
  EXPECT_EQ(r.accumulators, small_ab);
  for (int64_t i = 0; i < 6; ++i)
    EXPECT_EQ(g.c.get(i), expected[size_t(i)]);
}

TEST(GemmReference, ColumnBiasWithColumnMajorOutput) {
  // D = 2 AB - C + bias_col; bias = [1, 2, 3] by column; c is column-major.
  SmallGemm g =
      small_gemm(matrix(DType::f16, MatrixLayout::row), matrix(DType::f16, MatrixLayout::row),
                 matrix(DType::f32, MatrixLayout::col));
  g.c = buffer_of(DType::f32, {1, 4, 2, 5, 3, 6}); // C = [1 2 3; 4 5 6] column-major
  g.spec.epilogue.alpha = 2;
  g.spec.epilogue.beta = -1;
  g.spec.epilogue.bias = BiasKind::col;
  const Buffer bias = buffer_of(DType::f32, {1, 2, 3});
  reference_gemm(g.spec, {g.a.data(), g.b.data(), g.c.data(), bias.data()}, MathMode::f32);
  const std::vector<double> expected = {6, 34, 8, 9, -17, -13}; // row-major logical
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      EXPECT_EQ(d_at(g, 0, i, j), expected[size_t(i * 3 + j)]);
}

TEST(GemmReference, BetaZeroDoesNotReadC) {
  SmallGemm g =
      small_gemm(matrix(DType::f16, MatrixLayout::row), matrix(DType::f16, MatrixLayout::row),
                 matrix(DType::f32, MatrixLayout::row));
  for (int64_t i = 0; i < 6; ++i)
    g.c.set(i, std::numeric_limits<double>::quiet_NaN());
  const ReferenceResult r =
      reference_gemm(g.spec, {g.a.data(), g.b.data(), g.c.data(), nullptr}, MathMode::f32);
  EXPECT_EQ(r.values, small_ab);
}

TEST(GemmReference, EachActivationAppliesToTheScaledSum) {
  const Activation all[] = {Activation::relu,     Activation::tanh, Activation::sigmoid,
                            Activation::elu,      Activation::gelu, Activation::gelu_tanh,
                            Activation::softplus, Activation::swish};
  for (const Activation act : all) {
    SmallGemm g =
        small_gemm(matrix(DType::f16, MatrixLayout::row), matrix(DType::f16, MatrixLayout::row),
                   matrix(DType::f64, MatrixLayout::row));
    g.spec.epilogue.alpha = 0.25;
    g.spec.epilogue.act = act;
    const ReferenceResult r =
        reference_gemm(g.spec, {g.a.data(), g.b.data(), g.c.data(), nullptr}, MathMode::f32);
    for (size_t e = 0; e < 6; ++e) {
      EXPECT_DOUBLE_EQ(r.values[e], apply_activation(act, 0.25 * small_ab[e])) << to_string(act);
      EXPECT_EQ(g.c.get(int64_t(e)), r.values[e]) << to_string(act);
    }
  }
  SmallGemm g =
      small_gemm(matrix(DType::f16, MatrixLayout::row), matrix(DType::f16, MatrixLayout::row),
                 matrix(DType::f32, MatrixLayout::row));
  g.spec.epilogue.alpha = 0.25;
  g.spec.epilogue.act = Activation::relu;
  const ReferenceResult r =
      reference_gemm(g.spec, {g.a.data(), g.b.data(), g.c.data(), nullptr}, MathMode::f32);
  EXPECT_EQ(r.values, (ReferenceValues{0.75, 4.25, 1, 1.5, 0, 0}));
}

TEST(GemmReference, Int8AccumulatesExactlyIntoInt32) {
  // A = [127 127 127 127]; B columns: all -128, and [127 -128 127 -128].
  const OpSpec spec =
      gemm_spec(1, 2, 4, matrix(DType::s8, MatrixLayout::row), matrix(DType::s8, MatrixLayout::col),
                matrix(DType::s32, MatrixLayout::row), DType::s32);
  const Buffer a = buffer_of(DType::s8, {127, 127, 127, 127});
  const Buffer b = buffer_of(DType::s8, {-128, -128, -128, -128, 127, -128, 127, -128});
  Buffer c(DType::s32, 2);
  const ReferenceResult r = reference_gemm(spec, {a.data(), b.data(), c.data()}, MathMode::f32);
  EXPECT_EQ(c.get(0), -65024); // 4 * 127 * -128
  EXPECT_EQ(c.get(1), -254);   // 2 * 127 * 127 - 2 * 127 * 128
  EXPECT_EQ(r.magnitudes[0], 65024);

  // u8 x s8: 200 * 2 + 3 * -5 = 385.
  const OpSpec mixed =
      gemm_spec(1, 1, 2, matrix(DType::u8, MatrixLayout::row), matrix(DType::s8, MatrixLayout::row),
                matrix(DType::s32, MatrixLayout::row), DType::s32);
  const Buffer ua = buffer_of(DType::u8, {200, 3});
  const Buffer sb = buffer_of(DType::s8, {2, -5});
  Buffer sc(DType::s32, 1);
  reference_gemm(mixed, {ua.data(), sb.data(), sc.data()}, MathMode::f32);
  EXPECT_EQ(sc.get(0), 385);
}

TEST(GemmReference, Int8OutputRoundsHalfToEvenAndSaturatesAfterScaling) {
  // A = [5; 7; 127] (3x1), B = [1 -1] (1x2): acc = +-5, +-7, +-127.
  OpSpec spec =
      gemm_spec(3, 2, 1, matrix(DType::s8, MatrixLayout::row), matrix(DType::s8, MatrixLayout::row),
                matrix(DType::s8, MatrixLayout::row), DType::s32);
  const Buffer a = buffer_of(DType::s8, {5, 7, 127});
  const Buffer b = buffer_of(DType::s8, {1, -1});
  Buffer c(DType::s8, 6);
  spec.epilogue.alpha = 0.5;
  const ReferenceResult half = reference_gemm(spec, {a.data(), b.data(), c.data()}, MathMode::f32);
  EXPECT_EQ(half.values, (ReferenceValues{2.5, -2.5, 3.5, -3.5, 63.5, -63.5}));
  const std::vector<double> rounded = {2, -2, 4, -4, 64, -64};
  for (int64_t i = 0; i < 6; ++i)
    EXPECT_EQ(c.get(i), rounded[size_t(i)]) << i;
  spec.epilogue.alpha = 2;
  reference_gemm(spec, {a.data(), b.data(), c.data()}, MathMode::f32);
  const std::vector<double> saturated = {10, -10, 14, -14, 127, -128};
  for (int64_t i = 0; i < 6; ++i)
    EXPECT_EQ(c.get(i), saturated[size_t(i)]) << i;
}

// Packed inputs: s4 x u4 reads nibbles (element 2i low), b1 counts bits of AND / XOR over K.
TEST(GemmReference, PackedInt4AndBinaryByHand) {
  const OpSpec int4 = gemm_spec(1, 1, 32, matrix(DType::s4, MatrixLayout::row),
                                matrix(DType::u4, MatrixLayout::col),
                                matrix(DType::s32, MatrixLayout::row), DType::s32);
  std::vector<unsigned char> a4(16, 0), b4(16, 0);
  a4[0] = 0x78; // a0 = -8, a1 = 7
  a4[1] = 0x3F; // a2 = -1, a3 = 3
  b4[0] = 0x0F; // b0 = 15, b1 = 0
  b4[1] = 0x52; // b2 = 2, b3 = 5
  Buffer c4(DType::s32, 1);
  reference_gemm(int4, {a4.data(), b4.data(), c4.data()}, MathMode::f32);
  EXPECT_EQ(c4.get(0), -8 * 15 + 7 * 0 - 1 * 2 + 3 * 5); // -107

  // A (2 x 128, row-major): row 0 has k 0..9 set, row 1 k 100..127. B (128 x 2, column-major):
  // column 0 has k 5..104, column 1 none.
  std::vector<unsigned char> a(32, 0), b(32, 0);
  auto set = [](std::vector<unsigned char> &v, int64_t bit) { v[bit / 8] |= 1 << (bit % 8); };
  for (int k = 0; k < 10; ++k)
    set(a, k);
  for (int k = 100; k < 128; ++k)
    set(a, 128 + k);
  for (int k = 5; k < 105; ++k)
    set(b, k);
  for (const BitOp op : {BitOp::and_popc, BitOp::xor_popc}) {
    OpSpec binary = gemm_spec(2, 2, 128, matrix(DType::b1, MatrixLayout::row),
                              matrix(DType::b1, MatrixLayout::col),
                              matrix(DType::s32, MatrixLayout::row), DType::s32);
    binary.bop = op;
    Buffer c(DType::s32, 4);
    const ReferenceResult r = reference_gemm(binary, {a.data(), b.data(), c.data()}, MathMode::f32);
    const bool x = op == BitOp::xor_popc;
    EXPECT_EQ(c.get(0), x ? 100 : 5); // (0,0): 5..9 in both; 10 + 100 - 2 * 5 differ
    EXPECT_EQ(c.get(1), x ? 10 : 0);  // (0,1)
    EXPECT_EQ(c.get(2), x ? 118 : 5); // (1,0): 100..104 in both; 28 + 100 - 10 differ
    EXPECT_EQ(c.get(3), x ? 28 : 0);  // (1,1)
    EXPECT_EQ(r.magnitudes[0], x ? 100 : 5);
  }
}

TEST(GemmReference, F64IsComputedInDouble) {
  const OpSpec spec = gemm_spec(1, 1, 2, matrix(DType::f64, MatrixLayout::row),
                                matrix(DType::f64, MatrixLayout::row),
                                matrix(DType::f64, MatrixLayout::row), DType::f64);
  const Buffer a = buffer_of(DType::f64, {0.1, 1.0 / 3});
  const Buffer b = buffer_of(DType::f64, {0.7, 3.0});
  Buffer c(DType::f64, 1);
  reference_gemm(spec, {a.data(), b.data(), c.data()}, MathMode::f32);
  double expected = 0;
  expected += 0.1 * 0.7;
  expected += (1.0 / 3) * 3.0;
  EXPECT_EQ(c.get(0), expected);
  EXPECT_NE(c.get(0), double(0.1f * 0.7f + (1.0f / 3) * 3.0f));
}

TEST(GemmReference, Tf32RoundingOfInputsIsVisible) {
  // a = [1 + 2^-11, 1 + 2^-11], b = [1, 1]: tf32 rounds each a up (ties away) to 1 + 2^-10.
  OpSpec spec =
      gemm_spec(1, 1, 2, matrix(DType::f32, MatrixLayout::row),
                matrix(DType::f32, MatrixLayout::row), matrix(DType::f32, MatrixLayout::row));
  const Buffer a = buffer_of(DType::f32, {1 + 0x1p-11, 1 + 0x1p-11});
  const Buffer b = buffer_of(DType::f32, {1, 1});
  Buffer c(DType::f32, 1);
  reference_gemm(spec, {a.data(), b.data(), c.data()}, MathMode::tf32);
  EXPECT_EQ(c.get(0), 2 + 0x1p-9);
  reference_gemm(spec, {a.data(), b.data(), c.data()}, MathMode::f32);
  EXPECT_EQ(c.get(0), 2 + 0x1p-10);
  spec.gemm.a.dtype = DType::tf32; // a tf32 operand is rounded whatever the math mode
  reference_gemm(spec, {a.data(), b.data(), c.data()}, MathMode::f32);
  EXPECT_EQ(c.get(0), 2 + 0x1p-9);
}

TEST(GemmReference, OutputIsRoundedOnceFromTheExactSum) {
  // acc = 1 + 2^-11 + 2^-40 exactly: f16 output rounds up to 1 + 2^-10 (through f32 it would
  // round to the tie 1 + 2^-11 first and then down to 1).
  const OpSpec spec =
      gemm_spec(1, 1, 3, matrix(DType::f32, MatrixLayout::row),
                matrix(DType::f32, MatrixLayout::row), matrix(DType::f16, MatrixLayout::row));
  const Buffer a = buffer_of(DType::f32, {1, 0x1p-11, 0x1p-40});
  const Buffer b = buffer_of(DType::f32, {1, 1, 1});
  Buffer c(DType::f16, 1);
  const ReferenceResult r = reference_gemm(spec, {a.data(), b.data(), c.data()}, MathMode::f32);
  EXPECT_EQ(r.values[0], 1 + 0x1p-11 + 0x1p-40);
  EXPECT_EQ(c.get(0), 1 + 0x1p-10);
}

void expect_matches_a_naive_triple_loop();

// TCJIT_REFERENCE_SIMD set to `value` (unset when empty) for the scope.
class ScopedSimd {
public:
  explicit ScopedSimd(const std::string &value) {
    if (const char *previous = std::getenv("TCJIT_REFERENCE_SIMD"))
      saved_ = previous;
    if (value.empty())
      unsetenv("TCJIT_REFERENCE_SIMD");
    else
      setenv("TCJIT_REFERENCE_SIMD", value.c_str(), 1);
  }
  ~ScopedSimd() {
    if (saved_)
      setenv("TCJIT_REFERENCE_SIMD", saved_->c_str(), 1);
    else
      unsetenv("TCJIT_REFERENCE_SIMD");
  }

private:
  std::optional<std::string> saved_;
};

// The micro tile kernels this CPU runs: "" (the default choice) and each TCJIT_REFERENCE_SIMD.
std::vector<std::string> simd_kernels() {
  std::vector<std::string> kernels = {"", "portable"};
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (__builtin_cpu_supports("avx2"))
    kernels.push_back("avx2");
  if (__builtin_cpu_supports("avx512f"))
    kernels.push_back("avx512");
#endif
  return kernels;
}

TEST(GemmReference, MatchesANaiveTripleLoopOnRandomPaddedOperandsWithEveryKernel) {
  // 301 columns cross the 64-column packed panels and end in a partial 8-column strip; 131 rows
  // cross the 128-row work items and end in a partial 4-row micro tile (gemm_reference.cpp).
  for (const std::string &simd : simd_kernels()) {
    SCOPED_TRACE("TCJIT_REFERENCE_SIMD=" + simd);
    const ScopedSimd scoped(simd);
    expect_matches_a_naive_triple_loop();
    if (::testing::Test::HasFatalFailure())
      return;
  }
}

TEST(GemmReference, AnUnknownOrMissingSimdKernelIsAnErrorNamingIt) {
  const OpSpec spec =
      gemm_spec(8, 8, 8, matrix(DType::f32, MatrixLayout::row),
                matrix(DType::f32, MatrixLayout::row), matrix(DType::f32, MatrixLayout::row));
  Buffer a(DType::f32, 64), b(DType::f32, 64), c(DType::f32, 64);
  std::vector<std::string> refused = {"sse9", "AVX2", " ", "\x1b]0;x\x07\xff"};
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
  if (!__builtin_cpu_supports("avx512f"))
    refused.push_back("avx512");
#else
  refused.push_back("avx2");
#endif
  for (const std::string &value : refused) {
    const ScopedSimd scoped(value);
    try {
      reference_gemm(spec, {a.data(), b.data(), c.data(), nullptr}, MathMode::f32);
      ADD_FAILURE() << "TCJIT_REFERENCE_SIMD='" << value << "' was accepted";
    } catch (const std::invalid_argument &e) {
      EXPECT_NE(std::string(e.what()).find("TCJIT_REFERENCE_SIMD"), std::string::npos) << e.what();
      const std::string what = e.what();
      EXPECT_NE(what.find(support::escape_controls(value)), std::string::npos) << what;
      EXPECT_EQ(what.find('\x1b'), std::string::npos) << "a control character printed raw";
    }
  }
}

TEST(GemmReference, F64ProductsAreRoundedBeforeTheyAreAddedWithEveryKernel) {
  // f64 products are not exact in double, so no kernel may fuse them with the sum: a = [1, 1 +
  // 2^-30], b = [-1, 1 + 2^-30]. Rounded, (1 + 2^-30)^2 = 1 + 2^-29 (the 2^-60 is lost) and the
  // sum is 2^-29; a fused multiply-add would keep it (2^-29 + 2^-60). f32 inputs (24-bit
  // significands: exact products) may be fused: the same sum either way.
  for (const std::string &simd : simd_kernels()) {
    SCOPED_TRACE("TCJIT_REFERENCE_SIMD=" + simd);
    const ScopedSimd scoped(simd);
    const OpSpec spec = gemm_spec(1, 1, 2, matrix(DType::f64, MatrixLayout::row),
                                  matrix(DType::f64, MatrixLayout::row),
                                  matrix(DType::f64, MatrixLayout::row), DType::f64);
    const Buffer a = buffer_of(DType::f64, {1, 1 + 0x1p-30});
    const Buffer b = buffer_of(DType::f64, {-1, 1 + 0x1p-30});
    Buffer c(DType::f64, 1);
    const ReferenceResult r = reference_gemm(spec, {a.data(), b.data(), c.data()}, MathMode::f32);
    EXPECT_EQ(r.accumulators[0], 0x1p-29);
    EXPECT_EQ(c.get(0), 0x1p-29);
    EXPECT_EQ(r.magnitudes[0], 2 + 0x1p-29); // 1 + (1 + 2^-29)

    const OpSpec f32 =
        gemm_spec(1, 1, 2, matrix(DType::f32, MatrixLayout::row),
                  matrix(DType::f32, MatrixLayout::row), matrix(DType::f32, MatrixLayout::row));
    const Buffer a32 = buffer_of(DType::f32, {1, 1 + 0x1p-23});
    const Buffer b32 = buffer_of(DType::f32, {-1, 1 + 0x1p-23});
    Buffer c32(DType::f32, 1);
    const ReferenceResult r32 =
        reference_gemm(f32, {a32.data(), b32.data(), c32.data()}, MathMode::f32);
    EXPECT_EQ(r32.accumulators[0], 0x1p-22 + 0x1p-46); // exact: 2^-22 + 2^-46
  }
}

void expect_matches_a_naive_triple_loop() {
  const int64_t m = 131, n = 301, k = 70, batch = 3;
  OpSpec spec = gemm_spec(m, n, k, matrix(DType::bf16, MatrixLayout::col, m + 5),
                          matrix(DType::f16, MatrixLayout::row, n + 2),
                          matrix(DType::f32, MatrixLayout::col, m + 1), DType::f32, batch);
  spec.epilogue = {1.5, -0.5, BiasKind::col, Activation::none, {}};
  Buffer a(DType::bf16, testing::matrix_buffer_size(spec.gemm.a, m, k, batch));
  Buffer b(DType::f16, testing::matrix_buffer_size(spec.gemm.b, k, n, batch));
  Buffer c(DType::f32, testing::matrix_buffer_size(spec.gemm.c, m, n, batch));
  Buffer bias(DType::f32, n);
  fill_random(DType::bf16, a.data(), a.size(), 1);
  fill_random(DType::f16, b.data(), b.size(), 2);
  fill_random(DType::f32, c.data(), c.size(), 3);
  fill_random(DType::f32, bias.data(), n, 4);
  const Buffer c_before = c;
  const ReferenceResult r =
      reference_gemm(spec, {a.data(), b.data(), c.data(), bias.data()}, MathMode::f32);
  for (int64_t bt = 0; bt < batch; ++bt)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0, abs_sum = 0;
        for (int64_t kk = 0; kk < k; ++kk) {
          const double av = a.get(matrix_index(spec.gemm.a, m, k, bt, i, kk));
          const double bv = b.get(matrix_index(spec.gemm.b, k, n, bt, kk, j));
          acc += av * bv;
          abs_sum += std::fabs(av) * std::fabs(bv);
        }
        const int64_t at = matrix_index(spec.gemm.c, m, n, bt, i, j);
        const double expected = 1.5 * acc + -0.5 * c_before.get(at) + bias.get(j);
        const size_t e = size_t((bt * n + j) * m + i); // column-major output order
        ASSERT_EQ(r.accumulators[e], acc) << bt << " " << i << " " << j;
        ASSERT_DOUBLE_EQ(r.values[e], expected) << bt << " " << i << " " << j;
        ASSERT_DOUBLE_EQ(r.magnitudes[e], 1.5 * abs_sum + 0.5 * std::fabs(c_before.get(at)) +
                                              std::fabs(bias.get(j)));
        ASSERT_EQ(c.get(at), round_to_dtype(DType::f32, r.values[e]));
      }
}

// Small integer inputs (s8, u8, s4, u4) take the int16 kernels where their int32 sums cannot
// overflow: the sums must be the exact integers, with K a multiple of the kernels' group of 4 or
// not, rows and columns crossing the micro tiles and panels, both operand orders with padded
// leading dimensions, every 8-bit and every 4-bit type pair, and every kernel.
TEST(GemmReference, SmallIntegerSumsAreExactWithEveryKernel) {
  const int64_t m = 133, n = 75, batch = 2;
  const std::vector<std::pair<DType, DType>> pairs = {
      {DType::s8, DType::s8}, {DType::u8, DType::s8}, {DType::s8, DType::u8},
      {DType::u8, DType::u8}, {DType::s4, DType::s4}, {DType::s4, DType::u4},
      {DType::u4, DType::s4}, {DType::u4, DType::u4}};
  for (const std::string &simd : simd_kernels()) {
    const ScopedSimd scoped(simd);
    for (const auto &[a_type, b_type] : pairs)
      for (const int64_t k : {1, 3, 64, 66})
        for (const bool transposed : {false, true}) {
          SCOPED_TRACE("TCJIT_REFERENCE_SIMD=" + simd + " " + std::string(to_string(a_type)) +
                       " x " + std::string(to_string(b_type)) + " k=" + std::to_string(k) +
                       (transposed ? " col x row -> col, padded" : " row x col -> row"));
          const OpSpec spec =
              transposed
                  ? gemm_spec(m, n, k, matrix(a_type, MatrixLayout::col, m + 3),
                              matrix(b_type, MatrixLayout::row, n + 1),
                              matrix(DType::s32, MatrixLayout::col, m + 2), DType::s32, batch)
                  : gemm_spec(m, n, k, matrix(a_type, MatrixLayout::row),
                              matrix(b_type, MatrixLayout::col),
                              matrix(DType::s32, MatrixLayout::row), DType::s32, batch);
          // raw bytes: the 4-bit types pack two elements per byte
          const int64_t a_count = testing::matrix_buffer_size(spec.gemm.a, m, k, batch);
          const int64_t b_count = testing::matrix_buffer_size(spec.gemm.b, k, n, batch);
          std::vector<unsigned char> a(size_t(packed_bytes(a_type, a_count)));
          std::vector<unsigned char> b(size_t(packed_bytes(b_type, b_count)));
          Buffer c(DType::s32, testing::matrix_buffer_size(spec.gemm.c, m, n, batch));
          // [-128, 255] (scaled by integer_fill_scale) within each type: its whole range
          fill_random(a_type, a.data(), a_count, uint64_t(k), -8, 255 / 16.0);
          fill_random(b_type, b.data(), b_count, uint64_t(k + 1), -8, 255 / 16.0);
          const ReferenceResult r =
              reference_gemm(spec, {a.data(), b.data(), c.data()}, MathMode::f32);
          for (int64_t bt = 0; bt < batch; ++bt)
            for (int64_t i = 0; i < m; ++i)
              for (int64_t j = 0; j < n; ++j) {
                int64_t sum = 0, abs_sum = 0;
                for (int64_t kk = 0; kk < k; ++kk) {
                  const auto av = int64_t(
                      read_element(a_type, a.data(), matrix_index(spec.gemm.a, m, k, bt, i, kk)));
                  const auto bv = int64_t(
                      read_element(b_type, b.data(), matrix_index(spec.gemm.b, k, n, bt, kk, j)));
                  sum += av * bv;
                  abs_sum += std::abs(av) * std::abs(bv);
                }
                const size_t e = transposed ? size_t((bt * n + j) * m + i) // the output's order
                                            : size_t((bt * m + i) * n + j);
                ASSERT_EQ(r.accumulators[e], double(sum)) << bt << " " << i << " " << j;
                ASSERT_EQ(r.magnitudes[e], double(abs_sum)) << bt << " " << i << " " << j;
              }
        }
  }
}

// The int16 kernels run only while K * max|a| * max|b| fits in int32 (2,147,483,647), and the
// sums must be exact on both sides of that bound (an int32 sum past it would wrap negative):
// - u8 x u8, all 255: K = 33,025 sums to 2,147,450,625, K = 33,026 to 2,147,515,650;
// - s8 x s8, all -128 (max|s8| is 128, not 127): K = 131,071 sums to 2,147,467,264, K = 131,072
//   to 2^31.
TEST(GemmReference, SmallIntegerSumsPastInt32AreExactToo) {
  struct Case {
    DType type;
    double value;
    int64_t k;
  };
  const std::vector<Case> cases = {{DType::u8, 255, 33025},
                                   {DType::u8, 255, 33026},
                                   {DType::s8, -128, 131071},
                                   {DType::s8, -128, 131072}};
  for (const std::string &simd : simd_kernels())
    for (const Case &t : cases) {
      SCOPED_TRACE("TCJIT_REFERENCE_SIMD=" + simd + " " + std::string(to_string(t.type)) +
                   " k=" + std::to_string(t.k));
      const ScopedSimd scoped(simd);
      const OpSpec spec =
          gemm_spec(5, 9, t.k, matrix(t.type, MatrixLayout::row), matrix(t.type, MatrixLayout::col),
                    matrix(DType::f32, MatrixLayout::row), DType::s32);
      const Buffer a = buffer_of(t.type, std::vector<double>(size_t(5 * t.k), t.value));
      const Buffer b = buffer_of(t.type, std::vector<double>(size_t(9 * t.k), t.value));
      Buffer c(DType::f32, 5 * 9);
      const ReferenceResult r = reference_gemm(spec, {a.data(), b.data(), c.data()}, MathMode::f32);
      const double expected = double(t.k) * t.value * t.value;
      for (size_t e = 0; e < r.accumulators.size(); ++e) {
        ASSERT_EQ(r.accumulators[e], expected) << e;
        ASSERT_EQ(r.magnitudes[e], expected) << e;
      }
    }
}

TEST(GemmReference, SameResultWithOneThreadOrMany) {
  const OpSpec spec =
      gemm_spec(64, 64, 64, matrix(DType::f16, MatrixLayout::row),
                matrix(DType::f16, MatrixLayout::col), matrix(DType::f16, MatrixLayout::row));
  Buffer a(DType::f16, 64 * 64), b(DType::f16, 64 * 64), c1(DType::f16, 64 * 64);
  fill_random(DType::f16, a.data(), a.size(), 5);
  fill_random(DType::f16, b.data(), b.size(), 6);
  Buffer c2 = c1;
  const char *previous = std::getenv("TCJIT_REFERENCE_THREADS");
  const std::string saved = previous ? previous : "";
  setenv("TCJIT_REFERENCE_THREADS", "1", 1);
  const ReferenceResult one = reference_gemm(spec, {a.data(), b.data(), c1.data()}, MathMode::f32);
  setenv("TCJIT_REFERENCE_THREADS", "3", 1);
  const ReferenceResult many = reference_gemm(spec, {a.data(), b.data(), c2.data()}, MathMode::f32);
  if (previous)
    setenv("TCJIT_REFERENCE_THREADS", saved.c_str(), 1);
  else
    unsetenv("TCJIT_REFERENCE_THREADS");
  EXPECT_EQ(one.values, many.values);
  EXPECT_EQ(c1.bytes, c2.bytes);
}

TEST(GemmReference, RejectsSpecsItCannotCompute) {
  OpSpec spec =
      gemm_spec(2, 3, 4, matrix(DType::f16, MatrixLayout::row),
                matrix(DType::f16, MatrixLayout::row), matrix(DType::f32, MatrixLayout::row));
  Buffer a(DType::f16, 8), b(DType::f16, 12), c(DType::f32, 6);
  const GemmBuffers buffers{a.data(), b.data(), c.data(), nullptr};
  EXPECT_NO_THROW(reference_gemm(spec, buffers, MathMode::f32));
  EXPECT_THROW(reference_gemm(spec, buffers, MathMode::automatic), std::invalid_argument);
  EXPECT_THROW(reference_gemm(spec, {a.data(), nullptr, c.data(), nullptr}, MathMode::f32),
               std::invalid_argument);
  OpSpec symbolic = spec;
  symbolic.gemm.m = Dim::any_size();
  try {
    reference_gemm(symbolic, buffers, MathMode::f32);
    ADD_FAILURE() << "a symbolic m must be rejected";
  } catch (const std::invalid_argument &e) {
    EXPECT_NE(std::string(e.what()).find("symbolic"), std::string::npos) << e.what();
  }
  OpSpec narrow = spec;
  narrow.gemm.a.ld = 3; // a row of A holds 4 elements
  EXPECT_THROW(reference_gemm(narrow, buffers, MathMode::f32), std::invalid_argument);
  OpSpec with_bias = spec;
  with_bias.epilogue.bias = BiasKind::row;
  EXPECT_THROW(reference_gemm(with_bias, buffers, MathMode::f32), std::invalid_argument);
  OpSpec conv = spec;
  conv.kind = OpKind::conv2d;
  EXPECT_THROW(reference_gemm(conv, buffers, MathMode::f32), std::invalid_argument);
}

TEST(BindDims, BindsSymbolicSizesWithinTheirRanges) {
  OpSpec spec =
      gemm_spec(2, 3, 4, matrix(DType::f16, MatrixLayout::row),
                matrix(DType::f16, MatrixLayout::row), matrix(DType::f32, MatrixLayout::row));
  spec.gemm.m = Dim::any_size();
  spec.gemm.k = Dim::range_of(1, 64);
  const OpSpec bound = bind_gemm_sizes(spec, {8, 3, 16, 1});
  EXPECT_EQ(bound.gemm.m, Dim::fixed_size(8));
  EXPECT_EQ(bound.gemm.k, Dim::fixed_size(16));
  EXPECT_THROW(bind_gemm_sizes(spec, {8, 4, 16, 1}), std::invalid_argument); // n is fixed at 3
  EXPECT_THROW(bind_gemm_sizes(spec, {8, 3, 65, 1}), std::invalid_argument); // k above its range
  EXPECT_THROW(bind_gemm_sizes(spec, {0, 3, 16, 1}), std::invalid_argument);
  OpSpec conv;
  conv.kind = OpKind::conv2d;
  conv.conv.n = Dim::any_size();
  EXPECT_EQ(bind_conv_batch(conv, 4).conv.n, Dim::fixed_size(4));
  EXPECT_THROW(bind_conv_batch(spec, 4), std::invalid_argument);
}

} // namespace
} // namespace tcjit
