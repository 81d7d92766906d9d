// The canonical form: golden strings, and parse(print(spec)) == spec for every valid spec.
#include "dsl_test_util.h"

#include "compiler/spec/validate.h"

#include <bit>
#include <cmath>
#include <random>

namespace tcjit {
namespace {

std::string canonical(std::string_view text) {
  return print_spec(TCJIT_PARSE_ONE(text));
}

TEST(Printer, GoldenGemm) {
  EXPECT_EQ(canonical("gemm m=4096 n=4096 k=4096 a=f16:row b=f16:col c=f16:row acc=f32"),
            "gemm m=4096 n=4096 k=4096 batch=1 a=f16:row b=f16:col c=f16:row acc=f32 alpha=1 "
            "beta=0 bias=none act=none");
  EXPECT_EQ(canonical("gemm m=1024 n=1000 k=2048 a=bf16:row b=bf16:row c=f32:row acc=f32 "
                      "alpha=1 beta=1 bias=col act=gelu"),
            "gemm m=1024 n=1000 k=2048 batch=1 a=bf16:row b=bf16:row c=f32:row acc=f32 alpha=1 "
            "beta=1 bias=col act=gelu");
  EXPECT_EQ(canonical("gemm m=? n=4096 k=4096 batch=8 a=f32:row b=f32:col c=f32:row acc=f32 "
                      "math=tf32"),
            "gemm m=? n=4096 k=4096 batch=8 a=f32:row b=f32:col c=f32:row acc=f32 math=tf32 "
            "alpha=1 beta=0 bias=none act=none");
  EXPECT_EQ(canonical("gemm m=512 n=512 k=512 a=s8:row b=s8:col c=s32:row acc=s32"),
            "gemm m=512 n=512 k=512 batch=1 a=s8:row b=s8:col c=s32:row acc=s32 alpha=1 beta=0 "
            "bias=none act=none");
  EXPECT_EQ(canonical("gemm m=256 n=256 k=256 a=f64:row b=f64:row c=f64:row acc=f64"),
            "gemm m=256 n=256 k=256 batch=1 a=f64:row b=f64:row c=f64:row acc=f64 alpha=1 beta=0 "
            "bias=none act=none");
}

TEST(Printer, GoldenConv) {
  EXPECT_EQ(canonical("conv2d n=32 h=56 w=56 c=64 k=64 r=3 s=3 pad=1 stride=1 dilation=1 "
                      "groups=1 x=f16:nhwc filter=f16:krsc y=f16:nhwc acc=f32 act=relu "
                      "pass=fprop"),
            "conv2d n=32 h=56 w=56 c=64 k=64 r=3 s=3 pad=1 stride=1 dilation=1 groups=1 "
            "pass=fprop x=f16:nhwc filter=f16:krsc y=f16:nhwc acc=f32 alpha=1 beta=0 bias=none "
            "act=relu");
  EXPECT_EQ(canonical("conv2d n=8 h=28 w=28 c=128 k=128 r=3 s=3 pad=1 groups=128 x=f16:nhwc "
                      "filter=f16:krsc y=f16:nhwc acc=f32"),
            "conv2d n=8 h=28 w=28 c=128 k=128 r=3 s=3 pad=1 stride=1 dilation=1 groups=128 "
            "pass=fprop x=f16:nhwc filter=f16:krsc y=f16:nhwc acc=f32 alpha=1 beta=0 bias=none "
            "act=none");
  EXPECT_EQ(canonical("conv3d n=2 d=16 h=32 w=32 c=32 k=64 t=3 r=3 s=3 pad=1 x=bf16:ndhwc "
                      "filter=bf16:ktrsc y=bf16:ndhwc acc=f32 pass=dgrad"),
            "conv3d n=2 d=16 h=32 w=32 c=32 k=64 t=3 r=3 s=3 pad=1 stride=1 dilation=1 groups=1 "
            "pass=dgrad x=bf16:ndhwc filter=bf16:ktrsc y=bf16:ndhwc acc=f32 alpha=1 beta=0 "
            "bias=none act=none");
}

TEST(Printer, OptionalKeysListsAndNumbers) {
  // lda/ldb/ldc after c, only when set; math only for f32/tf32 inputs (auto is printed).
  EXPECT_EQ(canonical("gemm m=1..64 n=8 k=8 a=f32:col b=f32 ldb=16 lda=64 alpha=0.5 beta=1e-7"),
            "gemm m=1..64 n=8 k=8 batch=1 a=f32:col b=f32:row c=f32:row lda=64 ldb=16 acc=f32 "
            "math=auto alpha=0.5 beta=1e-07 bias=none act=none");
  // Per-dimension lists: one number when equal, else h,w (conv2d) or d,h,w (conv3d).
  EXPECT_EQ(canonical("conv2d n=? h=9 w=9 c=8 k=8 r=3 s=1 pad=1,0 stride=2,2 dilation=1,1 "
                      "x=f32:nchw pass=wgrad"),
            "conv2d n=? h=9 w=9 c=8 k=8 r=3 s=1 pad=1,0 stride=2 dilation=1 groups=1 pass=wgrad "
            "x=f32:nchw filter=f32:krsc y=f32:nchw acc=f32 math=auto alpha=1 beta=0 bias=none "
            "act=none");
  EXPECT_EQ(canonical("conv3d n=1..4 d=4 h=9 w=9 c=8 k=8 t=1 r=3 s=3 pad=0,1,1 stride=1,2,2 "
                      "x=f16:ncdhw"),
            "conv3d n=1..4 d=4 h=9 w=9 c=8 k=8 t=1 r=3 s=3 pad=0,1,1 stride=1,2,2 dilation=1 "
            "groups=1 pass=fprop x=f16:ncdhw filter=f16:ktrsc y=f16:ncdhw acc=f32 alpha=1 beta=0 "
            "bias=none act=none");
}

TEST(Printer, Entries) {
  WorkloadEntry entry;
  entry.spec = TCJIT_PARSE_ONE("gemm m=8 n=8 k=8 a=f16 b=f16");
  EXPECT_EQ(print_entry(entry), "gemm m=8 n=8 k=8 batch=1 a=f16:row b=f16:row c=f16:row acc=f32 "
                                "alpha=1 beta=0 bias=none act=none");
  entry.name = "qkv.proj-1";
  entry.weight = 12;
  EXPECT_EQ(print_entry(entry), "qkv.proj-1: gemm m=8 n=8 k=8 batch=1 a=f16:row b=f16:row "
                                "c=f16:row acc=f32 alpha=1 beta=0 bias=none act=none weight=12");
}

// parse(print(spec)) == spec, and printing is idempotent.
void expect_round_trip(const OpSpec &spec) {
  const std::string text = print_spec(spec);
  const ParseResult parsed = parse_spec(text);
  ASSERT_TRUE(parsed.ok()) << text << "\n" << rendered(parsed);
  ASSERT_EQ(parsed.entries.size(), 1u);
  EXPECT_EQ(parsed.entries[0].spec, spec) << text;
  EXPECT_EQ(print_spec(parsed.entries[0].spec), text);
}

TEST(RoundTrip, Examples) {
  for (const std::string_view line : {
           "gemm m=4096 n=4096 k=4096 a=f16:row b=f16:col c=f16:row acc=f32",
           "gemm m=1024 n=1000 k=2048 a=bf16:row b=bf16:row c=f32:row acc=f32 alpha=1 beta=1 "
           "bias=col act=gelu",
           "gemm m=? n=4096 k=4096 batch=8 a=f32:row b=f32:col c=f32:row acc=f32 math=tf32",
           "gemm m=512 n=512 k=512 a=s8:row b=s8:col c=s32:row acc=s32",
           "gemm m=256 n=256 k=256 a=f64:row b=f64:row c=f64:row acc=f64",
           "conv2d n=32 h=56 w=56 c=64 k=64 r=3 s=3 pad=1 stride=1 dilation=1 groups=1 "
           "x=f16:nhwc filter=f16:krsc y=f16:nhwc acc=f32 act=relu pass=fprop",
           "conv2d n=8 h=28 w=28 c=128 k=128 r=3 s=3 pad=1 groups=128 x=f16:nhwc "
           "filter=f16:krsc y=f16:nhwc acc=f32",
           "conv3d n=2 d=16 h=32 w=32 c=32 k=64 t=3 r=3 s=3 pad=1 x=bf16:ndhwc filter=bf16:ktrsc "
           "y=bf16:ndhwc acc=f32 pass=dgrad",
       })
    expect_round_trip(TCJIT_PARSE_ONE(line));
}

// --- a sweep of random valid specs --------------------------------------------------------------

// Deterministic everywhere: only the engine's raw output is used (distributions differ between
// standard libraries).
struct Random {
  std::mt19937_64 engine{20240601};
  uint64_t below(uint64_t n) { return engine() % n; }
  bool coin() { return below(2) == 1; }
  template <class T, size_t N> T pick(const std::array<T, N> &a) { return a[below(N)]; }
  int64_t size(int64_t largest) {
    switch (below(4)) {
    case 0: return 1;
    case 1: return largest;
    default: return 1 + static_cast<int64_t>(below(static_cast<uint64_t>(largest)));
    }
  }
  Dim dim() {
    switch (below(4)) {
    case 0: return Dim::any_size();
    case 1: {
      const int64_t lo = size(4096);
      return Dim::range_of(lo, lo + static_cast<int64_t>(below(100000)));
    }
    default: return Dim::fixed_size(size(below(8) == 0 ? max_size : 100000));
    }
  }
  double real() {
    switch (below(5)) {
    case 0: return 0.0;
    case 1: return 1.0;
    case 2: return static_cast<double>(static_cast<int64_t>(below(2001)) - 1000) / 8.0;
    default: {
      const double any = std::bit_cast<double>(engine());
      return std::isfinite(any) ? any : 0.25;
    }
    }
  }
};

constexpr std::array<DType, 7> inputs{DType::f16, DType::bf16, DType::tf32, DType::f32,
                                      DType::f64, DType::s8,   DType::u8};
constexpr std::array<DType, 6> outputs{DType::f16, DType::bf16, DType::f32,
                                       DType::f64, DType::s8,   DType::s32};

template <size_t N>
DType pick_allowed(Random &rng, DType input, const std::array<DType, N> &all,
                   bool (*allowed)(DType, DType)) {
  std::vector<DType> choices;
  for (const DType t : all)
    if (allowed(input, t))
      choices.push_back(t);
  return choices[rng.below(choices.size())];
}

void pick_types(Random &rng, OpSpec &spec, DType input) {
  spec.acc = pick_allowed(rng, input, outputs, is_allowed_acc);
  if (input == DType::f32)
    spec.math = rng.pick(std::array{MathMode::automatic, MathMode::tf32, MathMode::f32});
  if (input == DType::tf32)
    spec.math = rng.pick(std::array{MathMode::automatic, MathMode::tf32});
  spec.epilogue.alpha = rng.real();
  spec.epilogue.beta = rng.real();
  spec.epilogue.act = rng.pick(std::array{
      Activation::none, Activation::relu, Activation::tanh, Activation::sigmoid, Activation::elu,
      Activation::gelu, Activation::gelu_tanh, Activation::softplus, Activation::swish});
}

OpSpec random_gemm(Random &rng) {
  OpSpec spec;
  GemmSpec &g = spec.gemm;
  g.m = rng.dim();
  g.n = rng.dim();
  g.k = rng.dim();
  g.batch = rng.coin() ? Dim::fixed_size(1) : rng.dim();
  const DType input = rng.pick(inputs);
  g.a.dtype = g.b.dtype = input;
  g.c.dtype = pick_allowed(rng, input, outputs, is_allowed_output);
  for (MatrixOperand *op : {&g.a, &g.b, &g.c}) {
    op->layout = rng.coin() ? MatrixLayout::row : MatrixLayout::col;
    if (rng.below(4) == 0)
      op->ld = rng.size(max_size);
  }
  pick_types(rng, spec, input);
  spec.epilogue.bias = rng.pick(std::array{BiasKind::none, BiasKind::row, BiasKind::col});
  return spec;
}

OpSpec random_conv(Random &rng) {
  OpSpec spec;
  spec.kind = rng.coin() ? OpKind::conv2d : OpKind::conv3d;
  const bool is_3d = spec.kind == OpKind::conv3d;
  ConvSpec &c = spec.conv;
  c.n = rng.dim();
  c.groups = rng.pick(std::array<int64_t, 4>{1, 1, 2, 4});
  c.c = c.groups * rng.size(64);
  c.k = c.groups * rng.size(64);
  c.h = rng.size(300);
  c.w = rng.size(300);
  c.r = rng.size(7);
  c.s = rng.size(7);
  const size_t first = is_3d ? 0 : 1;
  if (is_3d) {
    c.d = rng.size(30);
    c.t = rng.size(5);
  }
  for (size_t i = first; i < 3; ++i) {
    c.pad[i] = static_cast<int64_t>(rng.below(4));
    c.stride[i] = rng.size(3);
    c.dilation[i] = rng.size(2);
  }
  if (rng.coin()) { // equal entries print as one number
    c.pad.fill(c.pad[2]);
    c.stride.fill(c.stride[2]);
    c.dilation.fill(c.dilation[2]);
    if (!is_3d) {
      c.pad[0] = 0;
      c.stride[0] = c.dilation[0] = 1;
    }
  }
  c.pass = rng.pick(std::array{ConvPass::fprop, ConvPass::dgrad, ConvPass::wgrad});
  const DType input = rng.pick(inputs);
  const DType output = pick_allowed(rng, input, outputs, is_allowed_output);
  c.x.dtype = c.filter.dtype = c.y.dtype = input;
  switch (c.pass) {
  case ConvPass::fprop: c.y.dtype = output; break;
  case ConvPass::dgrad: c.x.dtype = output; break;
  case ConvPass::wgrad: c.filter.dtype = output; break;
  }
  c.x.layout = is_3d ? rng.pick(std::array{TensorLayout::ndhwc, TensorLayout::ncdhw})
                     : rng.pick(std::array{TensorLayout::nhwc, TensorLayout::nchw});
  c.y.layout = is_3d ? rng.pick(std::array{TensorLayout::ndhwc, TensorLayout::ncdhw})
                     : rng.pick(std::array{TensorLayout::nhwc, TensorLayout::nchw});
  c.filter.layout = is_3d ? rng.pick(std::array{TensorLayout::ktrsc, TensorLayout::kctrs})
                          : rng.pick(std::array{TensorLayout::krsc, TensorLayout::kcrs});
  pick_types(rng, spec, input);
  if (c.pass != ConvPass::wgrad)
    spec.epilogue.bias = rng.coin() ? BiasKind::none : BiasKind::col;
  return spec;
}

TEST(RoundTrip, RandomValidSpecs) {
  Random rng;
  int valid = 0, attempts = 0;
  while (valid < 3000 && attempts < 20000) {
    ++attempts;
    const OpSpec spec = rng.coin() ? random_gemm(rng) : random_conv(rng);
    if (!validate_spec(spec).empty())
      continue;
    ++valid;
    expect_round_trip(spec);
    if (::testing::Test::HasFailure())
      return;
  }
  EXPECT_EQ(valid, 3000) << "the generator makes too few valid specs";
}

TEST(RoundTrip, EntriesWithNamesAndWeights) {
  Random rng;
  for (int i = 0; i < 200; ++i) {
    WorkloadEntry entry;
    entry.spec = random_gemm(rng);
    if (!validate_spec(entry.spec).empty())
      continue;
    entry.name = i % 3 == 0 ? "" : "op_" + std::to_string(i) + ".x-y";
    entry.weight = i % 2 == 0 ? 1 : rng.size(max_size);
    entry.line = 1;
    const std::string text = print_entry(entry);
    const ParseResult parsed = parse_workload(text);
    ASSERT_TRUE(parsed.ok()) << text << "\n" << rendered(parsed);
    ASSERT_EQ(parsed.entries.size(), 1u);
    EXPECT_EQ(parsed.entries[0], entry) << text;
  }
}

// act=custom:FILE keeps its path through print and parse; the text is loaded later (tools.hpp).
TEST(RoundTrip, CustomActivationPath) {
  const OpSpec spec =
      TCJIT_PARSE_ONE("gemm m=64 n=64 k=64 a=f16 b=f16:col c=f16 act=custom:acts/leaky-relu_2.cu");
  EXPECT_EQ(spec.epilogue.act, Activation::custom);
  EXPECT_EQ(spec.epilogue.custom.path, "acts/leaky-relu_2.cu");
  EXPECT_EQ(spec.epilogue.custom.source, "");
  EXPECT_NE(print_spec(spec).find(" act=custom:acts/leaky-relu_2.cu"), std::string::npos);
  expect_round_trip(spec);
}

} // namespace
} // namespace tcjit
