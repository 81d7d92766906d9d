// The formulas both backends print (compiler/codegen/plan/formulas.h), evaluated on the host by
// the expression form (plan/expr.h), against independent definitions: the swizzles against their
// definitions in kernel_plan.h and llvm/epilogue.h, the activations against the CPU reference
// (compiler/reference/activation.h), the convolution gathers against the explicit im2col lowering
// (compiler/reference/im2col.h). Plus the expression form itself: constant folding, host
// evaluation, and the CUDA C++ printer.
#include "compiler/codegen/cuda/expr_source.h"
#include "compiler/codegen/plan/dgrad_phases.h"
#include "compiler/codegen/plan/expr.h"
#include "compiler/codegen/plan/formulas.h"
#include "compiler/codegen/plan/tile_config.h"
#include "compiler/dsl/parser.h"
#include "compiler/reference/activation.h"
#include "compiler/reference/conv_reference.h"
#include "compiler/reference/im2col.h"
#include "compiler/target/mma_table.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

namespace tcjit::codegen {
namespace {

ExprInputs ints(std::initializer_list<std::pair<const char *, int64_t>> values) {
  ExprInputs in;
  for (const auto &[name, v] : values)
    in[name] = integer_value(v);
  return in;
}

// --- the expression form ---

TEST(Expr, OperationsOnConstantsFold) {
  ExprGraph g;
  Expr a = constant(g, ExprType::i32, 6);
  Expr folded = (a * 7 + 2) >> 1;
  EXPECT_TRUE(is_constant(folded));
  EXPECT_EQ(evaluate_integer(folded), 22);
  Expr x = input(g, ExprType::i32, "x");
  EXPECT_FALSE(is_constant(x * 1)); // only constants fold: x * 1 stays (as IRBuilder keeps it)
  EXPECT_FALSE(is_constant(ex2_approx(constant(g, ExprType::f32, 1.0)))); // calls stay calls
}

TEST(Expr, IntegersWrapAndCompareAsTheOperationSays) {
  ExprGraph g;
  Expr x = input(g, ExprType::i32, "x"), y = input(g, ExprType::i32, "y");
  const ExprInputs in = ints({{"x", -3}, {"y", 5}});
  EXPECT_EQ(evaluate(x, in).bits, 0xfffffffdu); // i32: a 32-bit pattern
  EXPECT_EQ(evaluate_integer(x * y, in), -15);
  EXPECT_EQ(evaluate_integer(x >> 28, in), 15);      // logical shift
  EXPECT_EQ(evaluate_integer(x / y, in), 858993458); // unsigned division
  EXPECT_EQ(evaluate_integer(ult(x, y), in), 0);     // 0xfffffffd > 5 unsigned
  EXPECT_EQ(evaluate_integer(slt(x, y), in), 1);
  EXPECT_EQ(evaluate_integer(zext64(x), in), 0xfffffffdll);
  EXPECT_EQ(evaluate_integer(select(eq(x % 2, 1), x, y), in), -3); // 0xfffffffd is odd
  EXPECT_THROW(evaluate(x + 1), std::invalid_argument);            // x unbound
}

TEST(Expr, FloatsRoundToTheirTypeAndKeepNaNRules) {
  ExprGraph g;
  Expr f = input(g, ExprType::f32, "f"), d = input(g, ExprType::f64, "d");
  const double third = 1.0 / 3.0;
  EXPECT_EQ(evaluate_float(f * 1.0, {{"f", float_value(third)}}),
            static_cast<double>(static_cast<float>(third)));
  EXPECT_EQ(evaluate_float(d * 1.0, {{"d", float_value(third)}}), third);
  const ExprInputs nan = {{"f", float_value(std::nan(""))}};
  EXPECT_EQ(evaluate_integer(ugt(f, 0.0), nan), 1); // unordered: true for NaN
  EXPECT_EQ(evaluate_integer(ogt(f, 0.0), nan), 0);
  EXPECT_EQ(evaluate_float(ex2_approx(f), {{"f", float_value(3.0)}}), 8.0);
  EXPECT_EQ(evaluate_float(math(MathFunction::expm1, d), {{"d", float_value(0.0)}}), 0.0);
}

TEST(Expr, CudaSourceNamesSharedNodesOnce) {
  ExprGraph g;
  Expr x = input(g, ExprType::f32, "x"), i = input(g, ExprType::i32, "i");
  Expr sq = x * x;
  const cuda_detail::ExprSource s =
      cuda_detail::expr_source({select(ugt(x, 0.0), sq + sq, div_approx(1.0, sq)), slt(i, -1)},
                               {{"x", "x"}, {"i", "i"}}, "  ");
  const std::string v = "v" + std::to_string(sq.id);
  EXPECT_EQ(s.statements, "  const float " + v + " = (x * x);\n");
  ASSERT_EQ(s.values.size(), 2u);
  EXPECT_EQ(s.values[0], "(!(x <= 0.0f) ? (" + v + " + " + v + ") : div_approx(1.0f, " + v + "))");
  EXPECT_EQ(s.values[1], "(int(i) < int(u32(-1)))");
}

// --- shared memory ---

// kernel_plan.h: o = row * row_bytes + col * esize, R = row (rows of >= 128 bytes) or o >> 7,
// o ^ ((((R >> swizzle_shift) << swizzle_spread) % 8) << 4).
int64_t swizzle_definition(const OperandPlan &op, int64_t row, int64_t col) {
  const int64_t o = row * op.row_bytes + col * op.esize;
  const int64_t r = op.row_bytes >= 128 ? row : o / 128;
  return o ^ ((((r >> op.swizzle_shift) << op.swizzle_spread) % 8) << 4);
}

TEST(Formulas, SwizzleIsItsDefinitionOnEveryTileElement) {
  for (int esize : {1, 2, 4, 8})
    for (int row_bytes : {16, 32, 64, 128, 256, 512})
      for (int shift = 0; shift <= 3; ++shift)
        for (int spread = 0; spread <= 1; ++spread) {
          if (row_bytes < esize)
            continue;
          OperandPlan op;
          op.esize = esize;
          op.row_bytes = row_bytes;
          op.cols = row_bytes / esize;
          op.rows = 64;
          op.swizzle_shift = shift;
          op.swizzle_spread = spread;
          ExprGraph g;
          Expr f =
              swizzled_offset(op, input(g, ExprType::i32, "row"), input(g, ExprType::i32, "col"));
          for (int row = 0; row < op.rows; ++row)
            for (int col = 0; col < op.cols; ++col)
              ASSERT_EQ(evaluate_integer(f, ints({{"row", row}, {"col", col}})),
                        swizzle_definition(op, row, col))
                  << "esize " << esize << " row_bytes " << row_bytes << " shift " << shift
                  << " spread " << spread << " at " << row << "," << col;
          EXPECT_EQ(swizzled_offset(op, 5, op.cols - 1), swizzle_definition(op, 5, op.cols - 1));
        }
}

// llvm/epilogue.h: o = line * len * 4 + pos * 4, seg = o >> 7, r = line >> (row-major ? 0 : 1)
// for lines of >= 128 bytes, else seg; o ^ ((2 * (r % 4) + seg % 2) << 4).
int64_t staging_definition(int len, bool row_major, int64_t line, int64_t pos) {
  const int64_t o = line * len * 4 + pos * 4;
  const int64_t seg = o / 128;
  const int64_t r = len * 4 >= 128 ? line >> (row_major ? 0 : 1) : seg;
  return o ^ ((2 * (r % 4) + seg % 2) << 4);
}

TEST(Formulas, StagingSwizzleIsItsDefinitionOnEverySlabElement) {
  for (int len : {8, 16, 32, 64, 128, 256})
    for (bool row_major : {true, false}) {
      KernelPlan p;
      p.stage_line_len = len;
      p.stage_lines = row_major ? 16 : 8;
      p.out_layout = row_major ? MatrixLayout::row : MatrixLayout::col;
      ExprGraph g;
      Expr f = staging_offset(p, input(g, ExprType::i32, "line"), input(g, ExprType::i32, "pos"));
      for (int line = 0; line < p.stage_lines; ++line)
        for (int pos = 0; pos < len; ++pos)
          ASSERT_EQ(evaluate_integer(f, ints({{"line", line}, {"pos", pos}})),
                    staging_definition(len, row_major, line, pos))
              << "len " << len << (row_major ? " row" : " col") << " at " << line << "," << pos;
      EXPECT_EQ(staging_offset(p, 3, len - 1), staging_definition(len, row_major, 3, len - 1));
    }
}

// --- activations ---

const Activation kActivations[] = {Activation::none,      Activation::relu,     Activation::tanh,
                                   Activation::sigmoid,   Activation::elu,      Activation::gelu,
                                   Activation::gelu_tanh, Activation::softplus, Activation::swish};

std::vector<double> activation_points() {
  std::vector<double> xs;
  for (double x = -12.0; x <= 12.0; x += 1.0 / 64)
    xs.push_back(x);
  for (double x : {-1000.0, -100.0, -30.0, -1e-6, 0.0, 1e-6, 30.0, 100.0, 1000.0})
    xs.push_back(x);
  return xs;
}

// The activation term of the tolerance model (docs/numerics.md): 16 units of roundoff u of the
// epilogue type relative to the value and to the pre-activation scale |x|, plus an absolute 16 u
// (the cancellation of 1 - 2 / (e^2x + 1) and of elu/gelu near zero).
void expect_activation(Activation act, ExprType type) {
  const double u = type == ExprType::f32 ? std::ldexp(1.0, -24) : std::ldexp(1.0, -53);
  ExprGraph g;
  Expr f = activation(act, input(g, type, "x"));
  for (double x : activation_points()) {
    const double want = apply_activation(act, x);
    const double got = evaluate_float(f, {{"x", float_value(x)}});
    EXPECT_NEAR(got, want, 16 * u * (std::fabs(want) + std::fabs(x)) + 16 * u)
        << to_string(act) << " at " << x << (type == ExprType::f32 ? " (f32)" : " (f64)");
  }
}

TEST(Formulas, F64ActivationsAreTheReference) {
  for (Activation act : kActivations)
    expect_activation(act, ExprType::f64);
}

TEST(Formulas, F32ActivationsAreTheReferenceWithinTheirApproximations) {
  for (Activation act : kActivations)
    expect_activation(act, ExprType::f32);
}

TEST(Formulas, ErfcApproximationIsWithinItsBound) {
  ExprGraph g;
  Expr f = erfc_approx(input(g, ExprType::f32, "z"));
  double worst = 0;
  for (double z = -6.0; z <= 6.0; z += 1.0 / 256)
    worst = std::max(worst, std::fabs(evaluate_float(f, {{"z", float_value(z)}}) - std::erfc(z)));
  EXPECT_LT(worst, 1.5e-7 + std::ldexp(2.0, -22)); // A&S 7.1.26's bound plus 2 ulps of f32 at 2
  EXPECT_GT(worst, 1e-8);                          // an approximation, not the library function
}

TEST(Formulas, ActivationRelusKeepNaN) {
  ExprGraph g;
  Expr f = activation(Activation::relu, input(g, ExprType::f32, "x"));
  EXPECT_TRUE(std::isnan(evaluate_float(f, {{"x", float_value(std::nan(""))}})));
  EXPECT_EQ(evaluate_float(f, {{"x", float_value(-2.0)}}), 0.0);
}

KernelPlan plan_of(const std::string &text) {
  const ParseResult parsed = parse_spec(text);
  EXPECT_TRUE(parsed.ok()) << text;
  const OpSpec spec = parsed.entries.at(0).spec;
  const TileConfig c = resolve_vectors(spec, default_tile_config(spec, "sm_80", false));
  return plan_kernel(spec, c, "sm_80", false);
}

// --- the main loop's copies ---

// linear_copy (the main loop's incremental copies) against the definition of a linear operand's
// element: tile element (row, col) of K-tile kt is the matrix element (outer, contig) =
// (mn0 + row, kt * bk + col) of a K-contiguous tile, (kt * bk + row, mn0 + col) of an
// M/N-contiguous one, at outer * ld + contig, read when outer < outer_extent and
// contig < contig_extent (else zero-filled). Every tile element, K-tiles 0..5 over tails in both
// extents, every layout of A and B, tf32, s8 and f16 tiles.
TEST(Formulas, LinearCopyIsTheOperandElementAtEveryKTile) {
  for (const char *text : {"gemm m=100 n=60 k=45 a=f32:row b=f32:col c=f32 acc=f32 math=tf32",
                           "gemm m=100 n=60 k=45 a=f32:col b=f32:row c=f32 acc=f32 math=tf32",
                           "gemm m=100 n=60 k=200 a=s8:row b=s8:col c=s32 acc=s32",
                           "gemm m=100 n=60 k=45 a=f16:col b=f16:row c=f16 acc=f32"}) {
    const KernelPlan p = plan_of(text);
    for (const OperandPlan *op : {&p.a, &p.b}) {
      SCOPED_TRACE(std::string(text) + " operand " + op->name);
      ExprGraph g;
      auto i32 = [&](const char *name) { return input(g, ExprType::i32, name); };
      const LinearCopy lc =
          linear_copy(*op, i32("row"), i32("col"), i32("mn0"), i32("outer_extent"),
                      i32("contig_extent"), input(g, ExprType::i64, "ld"));
      const Expr in = linear_copy_in(*op, lc, i32("kt"));
      const int64_t bk = op->k_contiguous ? op->cols : op->rows;
      const int64_t outer_extent = 70, contig_extent = 93, ld = 101; // tails in both
      for (int64_t mn0 : {int64_t{0}, int64_t{64}})
        for (int64_t kt = 0; kt < 6; ++kt)
          for (int64_t row = 0; row < op->rows; ++row)
            for (int64_t col = 0; col < op->cols; col += op->vec) {
              const int64_t outer = op->k_contiguous ? mn0 + row : kt * bk + row;
              const int64_t contig = op->k_contiguous ? kt * bk + col : mn0 + col;
              const ExprInputs at = ints({{"row", row},
                                          {"col", col},
                                          {"mn0", mn0},
                                          {"kt", kt},
                                          {"outer_extent", outer_extent},
                                          {"contig_extent", contig_extent},
                                          {"ld", ld}});
              const bool inside = outer < outer_extent && contig < contig_extent;
              ASSERT_EQ(evaluate_integer(in, at), inside ? 1 : 0) << row << " " << col << " " << kt;
              ASSERT_EQ(evaluate_integer(lc.fixed, at) + kt * evaluate_integer(lc.step, at),
                        outer * ld + contig)
                  << row << " " << col << " " << kt;
            }
    }
  }
}

// --- fragment loads ---

// ldmatrix_element against the PTX ISA's ldmatrix and the mma's fragment layout
// (compiler/target/mma_table.h): ldmatrix.x4 gives lane L in register i the b16 pair
// (L % 4) of row L / 4 of matrix i, that row read from the address of lane 8 i + L / 4; .trans
// gives it the transposed matrix: element L / 4 of rows 2 (L % 4) and 2 (L % 4) + 1 (the
// addresses of lanes 8 i + 2 (L % 4) + x). Whatever the formula's addresses, every element a lane
// receives must be the one the mma's fragment wants of it: A[m][k] with m = tile * 16 + g +
// a_offset.row, k = ks * K + q * per + a_offset.col; for B, registers 0, 1 are n tile 2 tile and
// 2, 3 n tile 2 tile + 1: B[k][n] with n = g, k = ks * K + q * per + b_k_offset.
TEST(Formulas, LdmatrixLanesLoadTheMmaFragments) {
  int seen[2][2] = {}; // [operand b][trans]
  for (const char *text : {"gemm m=512 n=512 k=256 a=f16 b=f16:col c=f16 acc=f32",
                           "gemm m=512 n=512 k=256 a=f16:col b=f16 c=f16 acc=f32",
                           "gemm m=512 n=512 k=256 a=bf16:col b=bf16:col c=f32 acc=f32",
                           "gemm m=512 n=512 k=256 a=f16 b=f16 c=f16 acc=f32",
                           "gemm m=128 n=128 k=128 a=s8:row b=s8:col c=s32:row acc=s32"}) {
    SCOPED_TRACE(text);
    const KernelPlan p = plan_of(text);
    const int per = elements_per_reg(p.mma);
    for (const OperandPlan *op : {&p.a, &p.b}) {
      if (op->load == FragmentLoad::scalar)
        continue;
      const bool is_b = op->name == 'b', trans = op->load == FragmentLoad::ldmatrix_trans;
      ++seen[is_b][trans];
      ExprGraph g;
      const LdmatrixLane lane = ldmatrix_lane(input(g, ExprType::i32, "lane"));
      const TileElement at =
          ldmatrix_element(p, *op, lane, input(g, ExprType::i32, "warp0"),
                           input(g, ExprType::i32, "tile"), input(g, ExprType::i32, "ks"));
      for (int warp0 : {0, 32})
        for (int tile = 0; tile < 2; ++tile)
          for (int ks = 0; ks < 2; ++ks) {
            int64_t row[32], col[32];
            for (int l = 0; l < 32; ++l) {
              const ExprInputs in =
                  ints({{"lane", l}, {"warp0", warp0}, {"tile", tile}, {"ks", ks}});
              row[l] = evaluate_integer(at.row, in);
              col[l] = evaluate_integer(at.col, in);
            }
            for (int l = 0; l < 32; ++l)
              for (int i = 0; i < 4; ++i)
                for (int x = 0; x < per; ++x) {
                  // the element lane l receives (ISA)
                  const int src = trans ? 8 * i + 2 * (l % 4) + x : 8 * i + l / 4;
                  const int64_t got_row = row[src];
                  const int64_t got_col = col[src] + (trans ? l / 4 : (l % 4) * per + x);
                  // the element the fragment wants (mma_table.h)
                  const int gq = l / 4, q = l % 4;
                  int64_t mn, k;
                  if (!is_b) {
                    const FragOffset o = a_offset(p.mma, i * per + x);
                    mn = warp0 + tile * 16 + gq + o.row;
                    k = ks * p.mma.k + q * a_q_multiplier(p.mma) + o.col;
                  } else {
                    mn = warp0 + (2 * tile + i / 2) * p.mma.n + gq;
                    k = ks * p.mma.k + q * a_q_multiplier(p.mma) +
                        b_k_offset(p.mma, (i % 2) * per + x);
                  }
                  const int64_t want_row = op->k_contiguous ? mn : k;
                  const int64_t want_col = op->k_contiguous ? k : mn;
                  ASSERT_EQ(got_row, want_row) << op->name << " lane " << l << " reg " << i
                                               << " elem " << x << " tile " << tile << " ks " << ks;
                  ASSERT_EQ(got_col, want_col) << op->name << " lane " << l << " reg " << i
                                               << " elem " << x << " tile " << tile << " ks " << ks;
                }
          }
    }
  }
  for (int b = 0; b < 2; ++b)
    for (int t = 0; t < 2; ++t)
      EXPECT_GT(seen[b][t], 0) << "no plan loads " << (b ? "B" : "A") << (t ? " by .trans" : "");
}

// fragment_element, with the fragment map's offsets the backends pass (mma_table.h), against the
// PTX ISA's fragment layouts written here: m8n8k4 f64 (A: a0 = A[g][q]; B: b0 = B[q][g]) and
// m16n8k32 s8 (A: byte x of a_i = A[g + 8 (i % 2)][4 q + x + 16 (i / 2)]; B: byte x of
// b_i = B[4 q + x + 16 i][g]), g = lane >> 2, q = lane & 3.
TEST(Formulas, ScalarFragmentLoadsAreTheIsaFragments) {
  int seen = 0;
  for (const char *text : {"gemm m=512 n=512 k=256 a=f64 b=f64 c=f64 acc=f64",
                           "gemm m=128 n=128 k=128 a=s8:col b=s8:row c=s32:row acc=s32"}) {
    SCOPED_TRACE(text);
    const KernelPlan p = plan_of(text);
    const bool f64 = p.mma.fragments == FragmentMap::m8n8k4_64bit;
    ASSERT_TRUE(f64 || p.mma.fragments == FragmentMap::m16n8k32_8bit);
    const int per = elements_per_reg(p.mma);
    for (const OperandPlan *op : {&p.a, &p.b}) {
      ASSERT_EQ(op->load, FragmentLoad::scalar) << op->name;
      ++seen;
      const bool is_a = op->name == 'a';
      ExprGraph g;
      auto i32 = [&](const char *name) { return input(g, ExprType::i32, name); };
      const TileElement at = fragment_element(p, *op, i32("warp0"), i32("g"), i32("q"), i32("tile"),
                                              i32("ks"), i32("mn_offset"), i32("k_offset"));
      const int regs = is_a ? p.mma.a_regs : p.mma.b_regs;
      for (int lane = 0; lane < 32; ++lane)
        for (int warp0 : {0, 16})
          for (int tile = 0; tile < 2; ++tile)
            for (int ks = 0; ks < 2; ++ks)
              for (int i = 0; i < regs; ++i)
                for (int x = 0; x < per; ++x) {
                  const int gq = lane >> 2, q = lane & 3;
                  int mn_offset = 0, k_offset = 0;
                  if (is_a) {
                    const FragOffset o = a_offset(p.mma, i * per + x);
                    mn_offset = o.row;
                    k_offset = o.col;
                  } else {
                    k_offset = b_k_offset(p.mma, i * per + x);
                  }
                  const ExprInputs in = ints({{"warp0", warp0},
                                              {"g", gq},
                                              {"q", q},
                                              {"tile", tile},
                                              {"ks", ks},
                                              {"mn_offset", mn_offset},
                                              {"k_offset", k_offset}});
                  int64_t mn, k; // the ISA's, within the mma's tile
                  if (f64) {
                    mn = gq;
                    k = q;
                  } else if (is_a) {
                    mn = gq + 8 * (i % 2);
                    k = 4 * q + x + 16 * (i / 2);
                  } else {
                    mn = gq;
                    k = 4 * q + x + 16 * i;
                  }
                  mn += warp0 + tile * (is_a ? p.mma.m : p.mma.n);
                  k += ks * p.mma.k;
                  ASSERT_EQ(evaluate_integer(at.row, in), op->k_contiguous ? mn : k)
                      << op->name << " lane " << lane << " reg " << i << " elem " << x;
                  ASSERT_EQ(evaluate_integer(at.col, in), op->k_contiguous ? k : mn)
                      << op->name << " lane " << lane << " reg " << i << " elem " << x;
                }
    }
  }
  EXPECT_EQ(seen, 4);
}

// epilogue_sum against docs/codegen.md's D = act(alpha * acc + beta * C + bias), computed here
// the way the epilogue type rounds it (each f32 operation rounded to f32), with C not read where
// beta is 0 and the bias not where there is none.
TEST(Formulas, EpilogueSumIsAlphaAccPlusBetaCPlusBias) {
  for (ExprType t : {ExprType::f32, ExprType::f64})
    for (double beta : {0.0, 0.75})
      for (BiasKind bias : {BiasKind::none, BiasKind::row, BiasKind::col}) {
        KernelPlan p;
        p.epilogue.beta = beta;
        p.epilogue.bias = bias;
        ExprGraph g;
        const EpilogueSum sum =
            epilogue_sum(p, input(g, t, "alpha"), input(g, t, "acc"), input(g, t, "beta"),
                         input(g, t, "c"), input(g, t, "bias"));
        const bool f32 = t == ExprType::f32;
        auto r = [&](double v) { return f32 ? static_cast<double>(static_cast<float>(v)) : v; };
        // the inputs, in the epilogue type
        const double a = r(1.0 / 3), x = r(7.1), cc = r(-2.3), bb = r(0.1), be = r(beta);
        ExprInputs in = {{"alpha", float_value(a)}, {"acc", float_value(x)}};
        double want = r(a * x);
        EXPECT_EQ(evaluate_float(sum.scaled, in), want);
        if (beta != 0.0) {
          in["beta"] = float_value(be);
          in["c"] = float_value(cc);
          want = r(want + r(be * cc));
        }
        EXPECT_EQ(evaluate_float(sum.with_c, in), want); // c unbound where beta is 0
        if (bias != BiasKind::none) {
          in["bias"] = float_value(bb);
          want = r(want + bb);
        }
        EXPECT_EQ(evaluate_float(sum.sum, in), want) << "beta " << beta;
      }
}

TEST(Formulas, LdmatrixLaneIsTheIsaSplit) {
  ExprGraph g;
  const LdmatrixLane lane = ldmatrix_lane(input(g, ExprType::i32, "lane"));
  for (int l = 0; l < 32; ++l) { // threads 8i..8i+7 give rows 0..7 of matrix i
    EXPECT_EQ(evaluate_integer(lane.j, ints({{"lane", l}})), l / 8);
    EXPECT_EQ(evaluate_integer(lane.r, ints({{"lane", l}})), l % 8);
  }
}

// --- convolutions ---

// Every element of the gathered (and linear) operands of a convolution's implicit GEMM, through
// global_element, against the explicit im2col matrices of the reference: each element is the
// tensor's value at `elem` when `in`, else zero. Tensors are filled with distinct values.
// A strided dgrad's phase gathers (plan/dgrad_phases.h) against the dense im2col matrix (cols
// columns): phase-grid row m of phase `phase` is dx pixel (n, ph + i * stride, ...) (a hole past
// the tensor reads nothing), phase tap j is the dense tap (first + j_x * step per dimension), so
// A(m, j * Kg + c) of the phase is dense A(pixel, tap * Kg + c), B(j * Kg + k, c) is dense
// B(tap * Kg + k, c). Returns the elements compared.
int phase_gather_matches_im2col(const KernelPlan &p, const OperandPlan &op,
                                const std::vector<double> &matrix, const std::vector<float> &tensor,
                                int64_t cols, int64_t n) {
  const ConvConstants &k = *p.conv;
  const std::array<PhaseAxis, 3> axes = phase_axes(k);
  const bool is_a = op.name == 'a';
  ExprGraph g;
  const GlobalElement e =
      global_element(p, op, input(g, ExprType::i32, "outer"), input(g, ExprType::i32, "contig"),
                     input(g, ExprType::i32, "outer_extent"),
                     input(g, ExprType::i32, "contig_extent"), input(g, ExprType::i64, "ld"));
  int checked = 0;
  for (int64_t phase = 0; phase < dgrad_phase_count(k); ++phase) {
    const int64_t ph[3] = {phase / (k.stride[1] * k.stride[2]), phase / k.stride[2] % k.stride[1],
                           phase % k.stride[2]};
    AxisPhase at[3];
    for (size_t d = 0; d < 3; ++d)
      at[d] = axis_phase(axes[d], ph[d]);
    const int64_t taps = at[0].taps * at[1].taps * at[2].taps;
    const int64_t grid = n * axes[0].rows * axes[1].rows * axes[2].rows;
    const int64_t rows = is_a ? grid : taps * k.kg, width = is_a ? taps * k.kg : k.cg;
    auto dense_tap = [&](int64_t j) {
      const int64_t js = j % at[2].taps, jr = j / at[2].taps % at[1].taps,
                    jt = j / (at[2].taps * at[1].taps);
      return ((at[0].first_tap + jt * axes[0].step) * k.r + at[1].first_tap + jr * axes[1].step) *
                 k.s +
             at[2].first_tap + js * axes[2].step;
    };
    for (int64_t outer = 0; outer < rows; ++outer)
      for (int64_t contig = 0; contig < width; ++contig) {
        ExprInputs in = ints({{"outer", outer},
                              {"contig", contig},
                              {"outer_extent", rows},
                              {"contig_extent", width},
                              {"ld", width}});
        in["phase"] = integer_value(phase);
        int64_t dense_row, dense_col;
        if (is_a) {
          int64_t rest = outer, pixel[3];
          for (int d = 2; d >= 0; --d) {
            pixel[d] = ph[d] + rest % axes[size_t(d)].rows * k.stride[d];
            rest /= axes[size_t(d)].rows;
          }
          if (pixel[0] >= k.d || pixel[1] >= k.h || pixel[2] >= k.w) { // a hole
            EXPECT_EQ(evaluate_integer(e.in, in), 0) << "a hole at row " << outer;
            continue;
          }
          dense_row = ((rest * k.d + pixel[0]) * k.h + pixel[1]) * k.w + pixel[2];
          dense_col = dense_tap(contig / k.kg) * k.kg + contig % k.kg;
        } else {
          dense_row = dense_tap(outer / k.kg) * k.kg + outer % k.kg;
          dense_col = contig;
        }
        const double got = evaluate_integer(e.in, in) != 0
                               ? tensor.at(static_cast<size_t>(evaluate_integer(e.elem, in)))
                               : 0.0;
        EXPECT_EQ(got, matrix[static_cast<size_t>(dense_row * cols + dense_col)])
            << op.name << " (" << to_string(op.gather) << ") phase " << phase << " at outer "
            << outer << ", contig " << contig;
        ++checked;
      }
  }
  return checked;
}

void expect_gathers_match_im2col(const std::string &text) {
  SCOPED_TRACE(text);
  const ParseResult parsed = parse_spec(text);
  ASSERT_TRUE(parsed.ok());
  const OpSpec spec = parsed.entries.at(0).spec;
  const KernelPlan p = plan_of(text);
  ASSERT_TRUE(p.conv);
  const ConvConstants &k = *p.conv;
  const int64_t x_size = spec.conv.n.value * k.d * k.h * k.w * k.c;
  const int64_t y_size = spec.conv.n.value * k.o * k.p * k.q * k.k;
  const int64_t f_size = k.k * k.taps() * k.cg;
  std::vector<float> x(static_cast<size_t>(x_size)), y(static_cast<size_t>(y_size)),
      filter(static_cast<size_t>(f_size));
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(i + 1);
  for (size_t i = 0; i < y.size(); ++i)
    y[i] = static_cast<float>(1000000 + i + 1);
  for (size_t i = 0; i < filter.size(); ++i)
    filter[i] = static_cast<float>(2000000 + i + 1);
  const ConvBuffers buffers{x.data(), filter.data(), y.data(), nullptr};
  const Im2colGemm ref = lower_conv_to_gemm(spec, buffers, MathMode::f32);
  const int64_t M = ref.gemm.gemm.m.value, N = ref.gemm.gemm.n.value, K = ref.gemm.gemm.k.value;
  const bool fprop = k.pass == ConvPass::fprop, wgrad = k.pass == ConvPass::wgrad;
  const std::vector<float> &a_tensor = fprop ? x : y, &b_tensor = wgrad ? x : filter;
  int checked = 0;
  for (const OperandPlan *op : {&p.a, &p.b}) {
    const bool is_a = op->name == 'a';
    if (op->gather == Gather::linear && k.groups > 1)
      continue; // the group's operand is not dense: its ld is the tensor's row
    if (op->gather == Gather::strided_phases || op->gather == Gather::tap_rows_phases) {
      checked += phase_gather_matches_im2col(p, *op, is_a ? ref.a : ref.b, is_a ? y : filter,
                                             is_a ? K : N, spec.conv.n.value);
      continue;
    }
    const bool row = op->layout == MatrixLayout::row;
    // A is M x K, B is K x N; (outer, contig) is (row, column) of a row-major view
    const int64_t rows = is_a ? M : K, cols = is_a ? K : N;
    const int64_t outer_extent = row ? rows : cols, contig_extent = row ? cols : rows;
    ExprGraph g;
    const GlobalElement e =
        global_element(p, *op, input(g, ExprType::i32, "outer"), input(g, ExprType::i32, "contig"),
                       input(g, ExprType::i32, "outer_extent"),
                       input(g, ExprType::i32, "contig_extent"), input(g, ExprType::i64, "ld"));
    const std::vector<double> &matrix = is_a ? ref.a : ref.b;
    const std::vector<float> &tensor = is_a ? a_tensor : b_tensor;
    for (int64_t outer = 0; outer < outer_extent; ++outer)
      for (int64_t contig = 0; contig < contig_extent; ++contig) {
        const ExprInputs in = ints({{"outer", outer},
                                    {"contig", contig},
                                    {"outer_extent", outer_extent},
                                    {"contig_extent", contig_extent},
                                    {"ld", contig_extent}});
        const bool inside = evaluate_integer(e.in, in) != 0;
        const double got =
            inside ? tensor.at(static_cast<size_t>(evaluate_integer(e.elem, in))) : 0.0;
        const int64_t r = row ? outer : contig, c = row ? contig : outer;
        ASSERT_EQ(got, matrix[static_cast<size_t>(r * cols + c)])
            << op->name << " (" << to_string(op->gather) << ") at outer " << outer << ", contig "
            << contig;
        ++checked;
      }
    // past the extents: outside
    EXPECT_EQ(evaluate_integer(e.in, ints({{"outer", outer_extent},
                                           {"contig", 0},
                                           {"outer_extent", outer_extent},
                                           {"contig_extent", contig_extent},
                                           {"ld", contig_extent}})),
              0);
  }
  EXPECT_GT(checked, 0);
}

TEST(Formulas, ConvGathersAreTheIm2colLowering) {
  for (const char *text : {
           "conv2d n=2 h=7 w=7 c=16 k=8 r=3 s=2 pad=2,1 dilation=2 x=f32 acc=f32 math=f32",
           "conv2d n=1 h=9 w=7 c=8 k=16 r=3 s=3 pad=1 stride=2 x=f32 acc=f32 math=f32",
           "conv2d n=1 h=9 w=7 c=8 k=16 r=3 s=3 pad=1 stride=2 pass=dgrad x=f32 acc=f32 math=f32",
           "conv2d n=2 h=7 w=7 c=16 k=8 r=3 s=2 pad=2,1 dilation=2 pass=dgrad x=f32 acc=f32 "
           "math=f32",
           "conv2d n=2 h=5 w=6 c=16 k=24 r=3 s=3 pad=1 pass=wgrad x=f32 acc=f32 math=f32",
           "conv2d n=2 h=5 w=5 c=16 k=32 r=3 s=3 pad=1 groups=2 x=f32 acc=f32 math=f32",
           "conv3d n=2 d=5 h=4 w=4 c=16 k=8 t=3 r=1 s=2 pad=1,0,0 stride=2,1,2 dilation=1,2,1 "
           "pass=dgrad x=f32 acc=f32 math=f32",
           "conv3d n=1 d=4 h=5 w=4 c=8 k=16 t=3 r=3 s=3 pad=1 pass=wgrad x=f32 acc=f32 math=f32",
       })
    expect_gathers_match_im2col(text);
}

// The direct depthwise kernel's taps (depthwise_point, depthwise_tap), summed on the host in the
// kernel's order, against the accumulators of the direct-loop reference convolution
// (compiler/reference/conv_reference.h). Small integers: every sum is exact.
void expect_depthwise_taps_match_reference(const std::string &text) {
  SCOPED_TRACE(text);
  const ParseResult parsed = parse_spec(text);
  ASSERT_TRUE(parsed.ok());
  const OpSpec spec = parsed.entries.at(0).spec;
  const KernelPlan p = plan_of(text);
  ASSERT_TRUE(p.depthwise && p.conv);
  const ConvConstants &k = *p.conv;
  const bool fprop = k.pass == ConvPass::fprop;
  const int64_t n = spec.conv.n.value;
  std::vector<float> x(static_cast<size_t>(n * k.d * k.h * k.w * k.c)),
      y(static_cast<size_t>(n * k.o * k.p * k.q * k.k)),
      filter(static_cast<size_t>(k.k * k.taps()));
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
  for (size_t i = 0; i < y.size(); ++i)
    y[i] = static_cast<float>(static_cast<int>(i % 11) - 5);
  for (size_t i = 0; i < filter.size(); ++i)
    filter[i] = static_cast<float>(static_cast<int>(i % 5) - 2);
  const std::vector<float> source = fprop ? x : y; // before the reference writes its output
  std::vector<float> x_out = x, y_out = y;
  const ConvBuffers buffers{fprop ? x.data() : x_out.data(), filter.data(),
                            fprop ? y_out.data() : y.data(), nullptr};
  const ReferenceResult ref = reference_conv(spec, buffers, MathMode::f32);
  const int64_t pixels = n * (fprop ? k.o * k.p * k.q : k.d * k.h * k.w);
  const int64_t channels = fprop ? k.k : k.c;
  ASSERT_EQ(static_cast<int64_t>(ref.accumulators.size()), pixels * channels);
  ExprGraph g;
  auto i32 = [&](const char *name) { return input(g, ExprType::i32, name); };
  const DepthwisePoint at = depthwise_point(k, i32("row"), i32("col"));
  const DepthwiseTap tap = depthwise_tap(k, at, i32("t"), i32("r"), i32("s"));
  int taps_inside = 0;
  for (int64_t row = 0; row < pixels; ++row)
    for (int64_t col = 0; col < channels; ++col) {
      double sum = 0;
      for (int64_t t = 0; t < k.t; ++t)
        for (int64_t r = 0; r < k.r; ++r)
          for (int64_t s = 0; s < k.s; ++s) {
            const ExprInputs in = ints({{"row", row}, {"col", col}, {"t", t}, {"r", r}, {"s", s}});
            if (evaluate_integer(tap.in, in) == 0)
              continue;
            ++taps_inside;
            sum += double{source.at(static_cast<size_t>(evaluate_integer(tap.elem, in)))} *
                   filter.at(static_cast<size_t>(evaluate_integer(tap.filter_elem, in)));
          }
      ASSERT_EQ(sum, ref.accumulators[static_cast<size_t>(row * channels + col)])
          << "pixel " << row << ", channel " << col;
    }
  EXPECT_GT(taps_inside, 0);
}

TEST(Formulas, DepthwiseTapsAreTheReferenceConvolution) {
  for (const char *text : {
           "conv2d n=2 h=7 w=6 c=8 k=8 groups=8 r=3 s=3 pad=1 x=f32 acc=f32 math=f32",
           "conv2d n=1 h=9 w=9 c=8 k=8 groups=8 r=5 s=5 pad=2 stride=2 dilation=1 x=f32 acc=f32 "
           "math=f32",
           "conv2d n=1 h=9 w=9 c=8 k=8 groups=8 r=5 s=5 pad=2 stride=2 pass=dgrad x=f32 acc=f32 "
           "math=f32",
           "conv2d n=2 h=6 w=7 c=4 k=4 groups=4 r=3 s=2 pad=1,0 dilation=2,1 pass=dgrad x=f32 "
           "acc=f32 math=f32",
       })
    expect_depthwise_taps_match_reference(text);
}

} // namespace
} // namespace tcjit::codegen
