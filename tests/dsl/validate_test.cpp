// validate_spec on OpSpecs built in code (not through the DSL), and the dtype tables.
#include "compiler/spec/printer.h"
#include "compiler/spec/validate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace tcjit {
namespace {

OpSpec half_gemm(int64_t m, int64_t n, int64_t k) {
  OpSpec s;
  s.gemm.m = Dim::fixed_size(m);
  s.gemm.n = Dim::fixed_size(n);
  s.gemm.k = Dim::fixed_size(k);
  return s; // f16 row-major everywhere, acc f32
}

OpSpec conv2d(int64_t hw, int64_t c, int64_t k, int64_t rs) {
  OpSpec s;
  s.kind = OpKind::conv2d;
  s.conv.h = s.conv.w = hw;
  s.conv.c = c;
  s.conv.k = k;
  s.conv.r = s.conv.s = rs;
  s.conv.filter.layout = TensorLayout::krsc;
  return s;
}

// "key: message" lines, for readable comparisons.
std::vector<std::string> errors_of(const OpSpec &spec) {
  std::vector<std::string> lines;
  for (const SpecError &e : validate_spec(spec))
    lines.push_back(e.key + ": " + e.message);
  return lines;
}

using Lines = std::vector<std::string>;

TEST(Validate, ValidSpecsHaveNoErrors) {
  EXPECT_EQ(errors_of(half_gemm(1, 1, 1)), Lines{});
  EXPECT_EQ(errors_of(conv2d(8, 4, 4, 3)), Lines{});
}

TEST(Validate, SparseAndBopApplyWhereTheySay) {
  OpSpec f16 = half_gemm(64, 64, 64);
  f16.bop = BitOp::xor_popc;
  ASSERT_EQ(errors_of(f16).size(), 1u);
  EXPECT_EQ(errors_of(f16)[0].rfind("bop: bop=xor applies to b1 inputs only", 0), 0u)
      << errors_of(f16)[0];
  OpSpec conv = conv2d(8, 32, 32, 3);
  conv.sparsity = Sparsity::two_four;
  ASSERT_EQ(errors_of(conv).size(), 1u);
  EXPECT_EQ(errors_of(conv)[0].rfind("sparse: sparse=2:4 applies to gemm only", 0), 0u)
      << errors_of(conv)[0];
}

TEST(Validate, SparseGemmOfF16AndBf16IsAcceptedWithCompressedLda) {
  OpSpec f16 = half_gemm(64, 48, 96);
  f16.sparsity = Sparsity::two_four;
  EXPECT_EQ(errors_of(f16), Lines{});
  f16.gemm.a.ld = 48; // k/2 compressed elements
  EXPECT_EQ(errors_of(f16), Lines{});
  OpSpec bf16 = f16;
  bf16.gemm.a.dtype = bf16.gemm.b.dtype = bf16.gemm.c.dtype = DType::bf16;
  EXPECT_EQ(errors_of(bf16), Lines{});
}

TEST(Validate, SparseGemmRefusalsSayWhatToDo) {
  OpSpec s = half_gemm(64, 48, 96);
  s.sparsity = Sparsity::two_four;
  OpSpec f64 = s;
  f64.gemm.a.dtype = f64.gemm.b.dtype = f64.gemm.c.dtype = f64.acc = DType::f64;
  ASSERT_EQ(errors_of(f64).size(), 1u);
  EXPECT_EQ(errors_of(f64)[0].rfind("sparse: sparse=2:4 is compiled for a=f16 and a=bf16", 0), 0u)
      << errors_of(f64)[0];
  EXPECT_NE(errors_of(f64)[0].find("a=s8 and a=u8 (mma.sp m16n8k64, acc=s32)"), std::string::npos);
  EXPECT_NE(errors_of(f64)[0].find("a=tf32 (mma.sp m16n8k16"), std::string::npos);
  OpSpec f32 = s; // tf32's mma.sp: k a multiple of 16; math=f32 has none
  f32.gemm.a.dtype = f32.gemm.b.dtype = f32.gemm.c.dtype = DType::f32;
  EXPECT_EQ(errors_of(f32), Lines{});
  f32.gemm.k = Dim::fixed_size(40);
  ASSERT_EQ(errors_of(f32).size(), 1u);
  EXPECT_NE(errors_of(f32)[0].find("k to be a multiple of 16 (the K of mma.sp m16n8k16); k=40"),
            std::string::npos)
      << errors_of(f32)[0];
  f32.gemm.k = Dim::fixed_size(96);
  f32.math = MathMode::f32;
  ASSERT_EQ(errors_of(f32).size(), 1u);
  EXPECT_NE(errors_of(f32)[0].find("math=f32 has no sparse tensor-core mma: use math=tf32"),
            std::string::npos)
      << errors_of(f32)[0];
  OpSpec s8 = s; // k = 96: a multiple of 32, not of s8's 64
  s8.gemm.a.dtype = s8.gemm.b.dtype = DType::s8;
  s8.gemm.c.dtype = DType::s32;
  s8.acc = DType::s32;
  ASSERT_EQ(errors_of(s8).size(), 1u);
  EXPECT_NE(errors_of(s8)[0].find("k to be a multiple of 64 (the K of mma.sp m16n8k64); k=96"),
            std::string::npos)
      << errors_of(s8)[0];
  OpSpec col = s;
  col.gemm.a.layout = MatrixLayout::col;
  ASSERT_EQ(errors_of(col).size(), 1u);
  EXPECT_NE(errors_of(col)[0].find("needs A row-major"), std::string::npos) << errors_of(col)[0];
  EXPECT_NE(errors_of(col)[0].find("write a=f16:row"), std::string::npos) << errors_of(col)[0];
  OpSpec k48 = half_gemm(64, 48, 48);
  k48.sparsity = Sparsity::two_four;
  ASSERT_EQ(errors_of(k48).size(), 1u);
  EXPECT_NE(errors_of(k48)[0].find("k to be a multiple of 32 (the K of mma.sp m16n8k32); k=48"),
            std::string::npos)
      << errors_of(k48)[0];
  OpSpec lda = s;
  lda.gemm.a.ld = 47;
  ASSERT_EQ(errors_of(lda).size(), 1u);
  EXPECT_EQ(errors_of(lda)[0].rfind("lda: lda=47 is too small: with sparse=2:4", 0), 0u)
      << errors_of(lda)[0];
}

// s4/u4 (mma.sp m16n8k128, 4:8 by pairs): accepted row x col with k a multiple of 128 and an even
// compressed lda, mixed pairs too; the refusals name the fix.
TEST(Validate, SparseGemmOf4BitTypes) {
  OpSpec s = half_gemm(64, 48, 256);
  s.sparsity = Sparsity::two_four;
  s.gemm.a.dtype = s.gemm.b.dtype = DType::s4;
  s.gemm.b.layout = MatrixLayout::col;
  s.gemm.c.dtype = s.acc = DType::s32;
  EXPECT_EQ(errors_of(s), Lines{});
  s.gemm.a.ld = 160; // compressed values, >= k/2 and even
  EXPECT_EQ(errors_of(s), Lines{});
  for (const auto &[a, b] : {std::pair{DType::u4, DType::u4}, std::pair{DType::s4, DType::u4},
                             std::pair{DType::u4, DType::s4}}) {
    OpSpec m = s;
    m.gemm.a.dtype = a;
    m.gemm.b.dtype = b;
    EXPECT_EQ(errors_of(m), Lines{}) << to_string(a) << " x " << to_string(b);
  }
  OpSpec k = s; // a multiple of 32 (whole 16-byte pieces), not of the sparse mma's 128
  k.gemm.k = Dim::fixed_size(192);
  ASSERT_EQ(errors_of(k).size(), 1u);
  EXPECT_NE(errors_of(k)[0].find("k to be a multiple of 128 (the K of mma.sp m16n8k128); k=192"),
            std::string::npos)
      << errors_of(k)[0];
  EXPECT_NE(errors_of(k)[0].find("pad K with zero columns of A"), std::string::npos);
  OpSpec odd = s;
  odd.gemm.a.ld = 129;
  ASSERT_EQ(errors_of(odd).size(), 1u);
  EXPECT_EQ(errors_of(odd)[0].rfind("lda: lda=129 does not start every row on a byte", 0), 0u)
      << errors_of(odd)[0];
  OpSpec small = s;
  small.gemm.a.ld = 100;
  ASSERT_EQ(errors_of(small).size(), 1u);
  EXPECT_EQ(errors_of(small)[0].rfind("lda: lda=100 is too small: with sparse=2:4", 0), 0u)
      << errors_of(small)[0];
  OpSpec col = s;
  col.gemm.a.layout = MatrixLayout::col;
  const Lines e = errors_of(col);
  ASSERT_FALSE(e.empty());
  bool says_row = false;
  for (const std::string &line : e)
    says_row = says_row || line.find("write a=s4:row") != std::string::npos;
  EXPECT_TRUE(says_row) << e[0];
  OpSpec brow = s;
  brow.gemm.b.layout = MatrixLayout::row;
  ASSERT_EQ(errors_of(brow).size(), 1u);
  EXPECT_NE(errors_of(brow)[0].find("b=s4:col"), std::string::npos) << errors_of(brow)[0];
  // the refusal of other types lists s4/u4
  OpSpec f64 = s;
  f64.gemm.a.dtype = f64.gemm.b.dtype = f64.gemm.c.dtype = f64.acc = DType::f64;
  f64.gemm.b.layout = MatrixLayout::row;
  f64.gemm.a.ld.reset();
  ASSERT_FALSE(errors_of(f64).empty());
  EXPECT_NE(errors_of(f64)[0].find("a=s4 and a=u4 (mma.sp m16n8k128, acc=s32"), std::string::npos)
      << errors_of(f64)[0];
}

TEST(Printer, SparseAndBopArePrintedOnlyWhereTheyApply) {
  OpSpec dense = half_gemm(64, 64, 64);
  EXPECT_EQ(print_spec(dense).find("sparse"), std::string::npos);
  EXPECT_EQ(print_spec(dense).find("bop"), std::string::npos);
  OpSpec sparse = dense;
  sparse.sparsity = Sparsity::two_four;
  EXPECT_NE(print_spec(sparse).find(" sparse=2:4"), std::string::npos) << print_spec(sparse);
  OpSpec binary = dense;
  binary.gemm.a.dtype = binary.gemm.b.dtype = DType::b1;
  binary.bop = BitOp::xor_popc;
  EXPECT_NE(print_spec(binary).find(" bop=xor"), std::string::npos) << print_spec(binary);
}

// a != b: exactly the pairs of the mma table (s8 x u8, u8 x s8); convolutions never mix.
TEST(Validate, MixedInputsAreTheMmaTablePairs) {
  OpSpec s = half_gemm(64, 64, 64);
  for (const auto &[a, b] : {std::pair{DType::s8, DType::u8}, std::pair{DType::u8, DType::s8}}) {
    s.gemm.a.dtype = a;
    s.gemm.b.dtype = b;
    s.gemm.c.dtype = DType::s32;
    s.acc = DType::s32;
    EXPECT_EQ(errors_of(s), Lines{}) << to_string(a) << " x " << to_string(b);
  }
  s.gemm.a.dtype = DType::s8;
  s.gemm.b.dtype = DType::f16;
  EXPECT_EQ(errors_of(s), Lines{"b: b=f16 does not match a=s8: the multiplied inputs a and b must "
                                "have the same dtype, or be one of the mixed pairs a=s8 b=u8, "
                                "a=u8 b=s8, a=e4m3 b=e5m2, a=e5m2 b=e4m3, a=s4 b=u4, a=u4 b=s4"});
  OpSpec c = conv2d(8, 8, 8, 3);
  c.conv.x.dtype = DType::s8;
  c.conv.filter.dtype = DType::u8;
  c.conv.y.dtype = DType::s32;
  c.acc = DType::s32;
  EXPECT_EQ(errors_of(c), Lines{"filter: filter=u8 does not match x=s8: in fprop, the multiplied "
                                "inputs x and filter must have the same dtype (mixed dtypes are "
                                "for gemm only)"});
}

TEST(Validate, DimsAndRanges) {
  OpSpec s = half_gemm(0, 1, max_size + 1);
  s.gemm.batch = Dim::range_of(4, 2);
  EXPECT_EQ(errors_of(s), (Lines{"m: m=0 is out of range: sizes are 1..2147483647",
                                 "k: k=2147483648 is out of range: sizes are 1..2147483647",
                                 "batch: batch=4..2 is not a valid range: a range lo..hi needs 1 "
                                 "<= lo <= hi <= 2147483647"}));
  s = half_gemm(1, 1, 1);
  s.gemm.m = Dim::range_of(0, 5);
  EXPECT_EQ(errors_of(s), (Lines{"m: m=0..5 is not a valid range: a range lo..hi needs 1 <= lo "
                                 "<= hi <= 2147483647"}));
}

TEST(Validate, LeadingDimensions) {
  OpSpec s = half_gemm(100, 200, 300);
  s.gemm.a.ld = 300; // row-major m x k: lda >= k
  s.gemm.b.layout = MatrixLayout::col;
  s.gemm.b.ld = 299; // column-major k x n: ldb >= k
  s.gemm.c.ld = std::int64_t{0};
  EXPECT_EQ(errors_of(s),
            (Lines{"ldb: ldb=299 is too small: b is column-major k x n, so ldb must be at least "
                   "k=300",
                   "ldc: ldc=0 is out of range: leading dimensions are 1..2147483647"}));
  // Against a symbolic extent the rule cannot be checked here.
  s = half_gemm(1, 1, 1);
  s.gemm.k = Dim::any_size();
  s.gemm.a.ld = 1;
  EXPECT_EQ(errors_of(s), Lines{});
}

TEST(Validate, SizeOverflowUsesRangeUpperBounds) {
  OpSpec s = half_gemm(1 << 20, 1 << 20, 1);
  s.gemm.batch = Dim::range_of(1, max_size); // c: 2^31 * 2^40 elements of 16 bits
  EXPECT_EQ(errors_of(s), (Lines{"c: c is too large: 2147483647 x 1048576 x 1048576 elements of "
                                 "16 bits do not fit 64-bit size arithmetic; make the problem "
                                 "smaller"}));
  s.gemm.batch = Dim::any_size(); // checked at run time
  EXPECT_EQ(errors_of(s), Lines{});
  // The leading dimension counts, not the logical width.
  s = half_gemm(1 << 20, 1, 1);
  s.gemm.a.ld = max_size;
  s.gemm.batch = Dim::fixed_size(1 << 20);
  // (c, 2^20 x 2^20 x 1 f16 = 2 TiB, fits 64-bit arithmetic but not the 1 TiB operand limit)
  EXPECT_EQ(errors_of(s), (Lines{"a: a is too large: 1048576 x 1048576 x 2147483647 elements of "
                                 "16 bits do not fit 64-bit size arithmetic; make the problem "
                                 "smaller",
                                 "c: c is too large: 1048576 x 1048576 x 1 elements of 16 bits "
                                 "are 2199023255552 bytes; an operand is limited to "
                                 "1099511627776 bytes (1 TiB: more than any GPU's memory, and "
                                 "the emulator's device memory); make the problem smaller"}));
}

TEST(Validate, ConcreteOperandsAreLimitedTo1TiB) {
  // 1024 x lda=2^31-1 f16: 4 TiB (fits 64-bit arithmetic, but no buffer can hold it)
  OpSpec s = half_gemm(1024, 64, 64);
  s.gemm.a.ld = max_size;
  EXPECT_EQ(errors_of(s), (Lines{"a: a is too large: 1024 x 2147483647 elements of 16 bits are "
                                 "4398046509056 bytes; an operand is limited to 1099511627776 "
                                 "bytes (1 TiB: more than any GPU's memory, and the emulator's "
                                 "device memory); make the problem or lda=2147483647 smaller"}));
  // exactly 1 TiB is allowed: 2^9 x 2^30 f16 elements
  s = half_gemm(512, 64, 1 << 30);
  EXPECT_EQ(errors_of(s), Lines{});
  s.gemm.batch = Dim::fixed_size(2);
  EXPECT_EQ(errors_of(s).size(), 1u);
  // symbolic sizes are checked once bound
  s.gemm.m = Dim::any_size();
  EXPECT_EQ(errors_of(s), Lines{});
}

TEST(Validate, DtypeTablesMatchTheRules) {
  using enum DType;
  const std::vector<std::pair<DType, std::vector<DType>>> accs{
      {f16, {f32, f16}}, {bf16, {f32}}, {tf32, {f32}}, {f32, {f32}}, {f64, {f64}}, {s8, {s32}},
      {u8, {s32}},       {e4m3, {f32}}, {e5m2, {f32}}, {s4, {s32}},  {u4, {s32}},  {b1, {s32}}};
  const std::vector<std::pair<DType, std::vector<DType>>> outputs{{f16, {f16, f32}},
                                                                  {bf16, {bf16, f32}},
                                                                  {tf32, {f32}},
                                                                  {f32, {f32}},
                                                                  {f64, {f64}},
                                                                  {s8, {s32, s8}},
                                                                  {u8, {s32, s8}},
                                                                  {s4, {s32, s8}},
                                                                  {u4, {s32, s8}},
                                                                  {b1, {s32, s8}},
                                                                  {e4m3, {f16, bf16, f32}},
                                                                  {e5m2, {f16, bf16, f32}}};
  const std::vector<DType> all{f16, bf16, tf32, f32, f64, s8, u8, s32, s4, u4, e4m3, e5m2, b1};
  for (const auto &[input, allowed] : accs)
    for (const DType t : all)
      EXPECT_EQ(is_allowed_acc(input, t),
                std::find(allowed.begin(), allowed.end(), t) != allowed.end())
          << to_string(input) << " -> acc " << to_string(t);
  for (const auto &[input, allowed] : outputs)
    for (const DType t : all)
      EXPECT_EQ(is_allowed_output(input, t),
                std::find(allowed.begin(), allowed.end(), t) != allowed.end())
          << to_string(input) << " -> " << to_string(t);
  for (const DType t : all)
    EXPECT_EQ(is_multiplicand_type(t),
              accs.end() != std::find_if(accs.begin(), accs.end(),
                                         [&](const auto &p) { return p.first == t; }));
  EXPECT_EQ(default_acc_dtype(f16), f32);
  EXPECT_EQ(default_acc_dtype(f64), f64);
  EXPECT_EQ(default_acc_dtype(u8), s32);
  EXPECT_EQ(default_output_dtype(tf32), f32);
  EXPECT_EQ(default_output_dtype(s8), s32);
  EXPECT_EQ(default_output_dtype(bf16), bf16);
  EXPECT_EQ(default_acc_dtype(e4m3), f32);
  EXPECT_EQ(default_output_dtype(e5m2), f16);
}

TEST(Validate, NoDtypeIsReservedAnyMore) {
  OpSpec s = half_gemm(1, 1, 1);
  // every dtype of the DSL is now supported: none is parsed and then refused as reserved
  for (int t = 0; t <= static_cast<int>(DType::b1); ++t)
    EXPECT_FALSE(is_reserved_type(static_cast<DType>(t))) << to_string(static_cast<DType>(t));
  s.acc = DType::s4; // an integer accumulator of an f16 GEMM: refused as not allowed
  EXPECT_EQ(errors_of(s).size(), 1u);
}

// Packed sub-byte inputs: K-contiguous layouts, K in whole 16-byte pieces, byte-aligned leading
// dimensions, the s4 x u4 mixes, GEMM only.
OpSpec packed_gemm(DType a, DType b, int64_t k) {
  OpSpec s = half_gemm(64, 48, k);
  s.gemm.a.dtype = a;
  s.gemm.b.dtype = b;
  s.gemm.b.layout = MatrixLayout::col;
  s.gemm.c.dtype = DType::s32;
  s.acc = DType::s32;
  return s;
}

TEST(Validate, PackedInputs) {
  using enum DType;
  for (const auto &[a, b] :
       std::vector<std::pair<DType, DType>>{{s4, s4}, {u4, u4}, {s4, u4}, {u4, s4}, {b1, b1}})
    EXPECT_EQ(errors_of(packed_gemm(a, b, 512)), Lines{}) << to_string(a) << to_string(b);
  OpSpec xor_spec = packed_gemm(b1, b1, 128);
  xor_spec.bop = BitOp::xor_popc;
  EXPECT_EQ(errors_of(xor_spec), Lines{});
  EXPECT_EQ(errors_of(packed_gemm(s4, s8, 64)),
            Lines{"b: b=s8 does not match a=s4: the multiplied inputs a and b must have the same "
                  "dtype, or be one of the mixed pairs a=s8 b=u8, a=u8 b=s8, a=e4m3 b=e5m2, "
                  "a=e5m2 b=e4m3, a=s4 b=u4, a=u4 b=s4"});
  EXPECT_EQ(errors_of(packed_gemm(b1, s4, 128)).size(), 1u);
  EXPECT_EQ(errors_of(packed_gemm(s4, s4, 48)),
            Lines{"k: k=48 is not a multiple of 32: s4 values are packed 2 per byte and K must "
                  "fill whole 16-byte pieces; pad K with zeros to 64"});
  EXPECT_EQ(errors_of(packed_gemm(b1, b1, 200)),
            Lines{"k: k=200 is not a multiple of 128: b1 values are packed 8 per byte and K must "
                  "fill whole 16-byte pieces; pad K with zeros to 256"});
  OpSpec layouts = packed_gemm(u4, u4, 64);
  layouts.gemm.a.layout = MatrixLayout::col;
  layouts.gemm.b.layout = MatrixLayout::row;
  const Lines errors = errors_of(layouts);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0], "a: a=u4:col: packed u4 inputs must lie K-contiguous (the tensor core reads "
                       "them row x col); store A row-major and B column-major (a=u4:row "
                       "b=u4:col), or transpose A");
  EXPECT_EQ(errors[1].rfind("b: b=u4:row: packed u4 inputs must lie K-contiguous", 0), 0u);
  OpSpec ld = packed_gemm(b1, b1, 128);
  ld.gemm.a.ld = 132;
  ld.gemm.b.ld = 136;
  EXPECT_EQ(errors_of(ld), Lines{"lda: lda=132 does not start every row on a byte: b1 values "
                                 "are packed 8 per byte, so lda must be a multiple of 8 (use "
                                 "lda=136)"});
  OpSpec conv = conv2d(8, 64, 64, 3);
  conv.conv.x.dtype = conv.conv.filter.dtype = s4;
  conv.conv.y.dtype = s32;
  conv.acc = s32;
  ASSERT_EQ(errors_of(conv).size(), 1u);
  EXPECT_EQ(errors_of(conv)[0].rfind("x: x=s4: tcjit has no conv2d in packed s4 inputs", 0), 0u)
      << errors_of(conv)[0];
}

TEST(Validate, EpilogueNumbersMustBeFinite) {
  OpSpec s = half_gemm(1, 1, 1);
  s.epilogue.alpha = std::numeric_limits<double>::quiet_NaN();
  s.epilogue.beta = -std::numeric_limits<double>::infinity();
  EXPECT_EQ(errors_of(s),
            (Lines{"alpha: alpha=nan is not a finite number: alpha and beta must be finite",
                   "beta: beta=-inf is not a finite number: alpha and beta must be finite"}));
}

TEST(Validate, ConvInputsDependOnThePass) {
  OpSpec s = conv2d(8, 4, 4, 3);
  s.conv.pass = ConvPass::dgrad; // multiplies y and filter, computes x
  s.conv.x.dtype = DType::f32;
  EXPECT_EQ(errors_of(s), Lines{});
  EXPECT_EQ(input_dtype(s), DType::f16);
  s.conv.pass = ConvPass::fprop; // x=f32 is now an input that does not match filter=f16
  EXPECT_EQ(input_dtype(s), DType::f32);
  EXPECT_EQ(errors_of(s), (Lines{"filter: filter=f16 does not match x=f32: in fprop, the "
                                 "multiplied inputs x and filter must have the same dtype "
                                 "(mixed dtypes are for gemm only)",
                                 "y: y=f16 is not a valid output for f32 inputs (fprop computes "
                                 "y): f32 inputs produce f32 (use y=f32)"}));
}

TEST(Validate, ConvGeometry) {
  OpSpec s = conv2d(8, 64, 64, 3);
  s.conv.groups = 0;
  s.conv.pad = {0, -1, 0};
  EXPECT_EQ(errors_of(s),
            (Lines{"pad: pad=-1,0 is out of range: pads are 0..2147483647 in every dimension",
                   "groups: groups=0 is out of range: groups are 1..2147483647"}));
  s = conv2d(8, 64, 64, 3);
  s.conv.d = 2;
  EXPECT_EQ(errors_of(s), (Lines{": conv2d has no depth dimension: d and t must be 1, and the "
                                 "depth entries of pad, stride and dilation 0, 1 and 1"}));
  s = conv2d(4, 8, 8, 3);
  s.conv.dilation = {1, 1, 3};
  s.conv.pad = {0, 0, 1};
  EXPECT_EQ(errors_of(s), (Lines{"s: output width is less than 1: q = (w + 2*pad - dilation*(s-1) "
                                 "- 1)/stride + 1 with w=4, pad=1, dilation=3, s=3: the dilated "
                                 "filter (7) is larger than the padded input (6); use a smaller s "
                                 "or dilation, more padding, or a larger w"}));
  s.conv.pad = {0, 0, 2}; // 4 + 2*2 - 3*2 - 1 = 1 >= 0: fits
  EXPECT_EQ(errors_of(s), Lines{});
}

TEST(Validate, ConvLayoutsAndBias) {
  OpSpec s = conv2d(8, 4, 4, 3);
  s.kind = OpKind::conv3d; // keeps the 2-D layouts
  s.conv.filter.layout = TensorLayout::kctrs;
  EXPECT_EQ(errors_of(s),
            (Lines{"x: layout 'nhwc' is not valid for x of conv3d (use ndhwc or ncdhw)",
                   "y: layout 'nhwc' is not valid for y of conv3d (use ndhwc or ncdhw)"}));
  s = conv2d(8, 4, 4, 3);
  s.epilogue.bias = BiasKind::row;
  s.conv.pass = ConvPass::wgrad;
  EXPECT_EQ(errors_of(s), (Lines{"bias: bias=row does not apply to pass=wgrad: wgrad computes the "
                                 "filter gradient, which has no bias (use bias=none)"}));
}

TEST(Validate, ConvSizeOverflow) {
  OpSpec s = conv2d(max_size, max_size, 1, 1);
  s.conv.n = Dim::range_of(1, max_size);
  const std::vector<SpecError> errors = validate_spec(s);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].key, "x");
  EXPECT_EQ(errors[1].key, "y");
}

} // namespace
} // namespace tcjit
