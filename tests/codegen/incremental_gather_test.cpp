// Incremental im2col addressing (compiler/codegen/plan/incremental_gather.h), where it is risky:
// a K-tile that crosses filter positions mid-tile (C not a multiple of the K-tile, several taps per
// K-tile), padding on every side, dilation, stride, conv3d, groups, channel padding, element-wise
// copies, split-K (a first K-tile other than 0), every input dtype.
//  - On the host: a thread's walk through the K-tiles (the rows' masks and offsets once, the
//    position advanced K-tile by K-tile, past the end too) against the explicit im2col matrix of
//    the reference (compiler/reference/im2col.h): every element a copy reads is the matrix's, and
//    every element outside the matrix or the input tensor is reported out. Exact.
//  - On the emulator: the kernels of both backends against the CPU reference, under the tolerance
//    model (docs/numerics.md).
#include "compiler/codegen/plan/incremental_gather.h"
#include "compiler/codegen/plan/tile_config.h"
#include "compiler/dsl/parser.h"
#include "compiler/reference/im2col.h"
#include "engine/kernel_compile.h"
#include "engine/verify_kernel.h"
#include "runtime/emu/emu_device.h"
#include "tests/common/test_names.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace tcjit {
namespace {

using codegen::ExprGraph;
using codegen::ExprInputs;
using codegen::ExprType;
using codegen::IncrementalPosition;
using codegen::KernelPlan;
using codegen::OperandPlan;

struct Case {
  const char *spec;
  const char *config;
};

void PrintTo(const Case &c, std::ostream *os) {
  *os << c.spec << " [" << c.config << "]";
}

// fprop layers where incremental addressing is risky, each with a config whose K-tile makes it so.
const Case kCases[] = {
    // C = 24, bk = 32: K-tiles cross a filter position mid-tile; padding on every side
    {"conv2d n=2 h=5 w=6 c=24 k=16 r=3 s=3 pad=1 x=f16 acc=f32", "64x32x32 w32x32 s3"},
    // C = 8, bk = 32: four taps per K-tile; stride 2
    {"conv2d n=1 h=9 w=7 c=8 k=16 r=3 s=3 pad=1 stride=2 x=f16 acc=f32", "32x32x32 w16x16 s3"},
    // dilation, per-dimension padding, R != S; C = 16 < bk
    {"conv2d n=2 h=7 w=7 c=16 k=8 r=3 s=2 pad=2,1 dilation=2 x=f16 acc=f32", "64x32x32 w32x32 s3"},
    // asymmetric stride and dilation, C = 40 (bk = 32 walks 32, 8 + 24, 16 + 16, ...)
    {"conv2d n=2 h=8 w=9 c=40 k=16 r=2 s=3 pad=1,2 stride=2,1 dilation=1,2 x=bf16 acc=f32",
     "32x32x32 w16x16 s2"},
    // C = 64 over two K-tiles per tap (the ResNet shapes), an M tail (M = 2*5*5 = 50)
    {"conv2d n=2 h=5 w=5 c=64 k=16 r=3 s=3 pad=1 x=f16 acc=f32", "32x32x32 w16x16 s3"},
    // 1x1: the tap never moves, C = 48 (wraps into t, the K tail)
    {"conv2d n=3 h=4 w=4 c=48 k=16 r=1 s=1 x=f16 acc=f32", "32x32x32 w16x16 s2"},
    // conv3d with padding, stride and dilation per dimension
    {"conv3d n=1 d=5 h=4 w=5 c=16 k=8 t=3 r=2 s=3 pad=1,0,1 stride=2,1,1 dilation=1,2,1 x=f16 "
     "acc=f32",
     "32x32x32 w16x16 s3"},
    // groups: each group's channels (Cg = 16, K-tile 32: two taps per K-tile)
    {"conv2d n=2 h=5 w=5 c=32 k=32 r=3 s=3 pad=1 groups=2 x=f16 acc=f32 bias=col",
     "32x32x32 w16x16 s3"},
    // element-wise copies (C = 3, 2-byte vectors; 7x7 stride 2, the stem's shape)
    {"conv2d n=2 h=9 w=9 c=3 k=16 r=7 s=7 pad=3 stride=2 x=f16 acc=f32", "32x32x32 w16x16 s3"},
    // channel padding: C = 3 padded to 8 (four taps per K-tile)
    {"conv2d n=2 h=9 w=9 c=3 k=16 r=3 s=3 pad=1 x=f16 acc=f32", "32x32x32 w16x16 s3 pc8"},
    // split-K: the slices start at K-tiles other than 0
    {"conv2d n=2 h=5 w=5 c=24 k=16 r=3 s=3 pad=1 x=f16 acc=f32", "32x32x32 w16x16 s3 k3"},
    // the other dtypes: tf32 (K-tile 16 over C = 24), s8 and u8 (K-tile 64 over C = 40), f32 SIMT
    {"conv2d n=2 h=5 w=6 c=24 k=16 r=3 s=3 pad=1 stride=2 x=f32 acc=f32 math=tf32",
     "64x32x16 w32x32 s3"},
    {"conv2d n=2 h=5 w=6 c=40 k=16 r=3 s=3 pad=1 x=s8 acc=s32 alpha=0.05", "64x32x64 w32x32 s3"},
    {"conv2d n=2 h=5 w=6 c=40 k=16 r=3 s=3 pad=2 dilation=2 x=u8 acc=s32", "64x32x64 w32x32 s3"},
    {"conv2d n=2 h=5 w=6 c=12 k=16 r=3 s=3 pad=1 x=f32 acc=f32 math=f32", "32x32x8 w32x32 s2"},
};

std::string case_name(const ::testing::TestParamInfo<Case> &info) {
  return test::test_name(info.param.spec, info.param.config);
}

OpSpec spec_of(const char *text) {
  const ParseResult parsed = parse_spec(text);
  EXPECT_TRUE(parsed.ok()) << text;
  return parsed.entries.at(0).spec;
}

codegen::TileConfig config_of(const char *text) {
  codegen::TileConfig config;
  std::string error;
  EXPECT_TRUE(codegen::parse_tile_config(text, config, error)) << error;
  return config;
}

// The plan the kernels get: of the channel-padded spec where the config pads.
struct Planned {
  OpSpec spec; // as the main kernel sees it (c padded)
  KernelPlan plan;
};
Planned plan_case(const Case &c) {
  OpSpec spec = spec_of(c.spec);
  const codegen::TileConfig config = codegen::resolve_vectors(spec, config_of(c.config));
  if (config.pad_c > 0)
    spec = codegen::padded_conv(spec, config.pad_c);
  const codegen::TileConfig resolved = codegen::resolve_vectors(spec, config_of(c.config));
  return {spec, codegen::plan_kernel(spec, resolved, "sm_80", false)};
}

class IncrementalGather : public ::testing::TestWithParam<Case> {};

// Every thread of a CTA at every M-tile and slice, through all its K-tiles and two past the end:
// the copies' `in` and addresses against the im2col matrix of each group.
TEST_P(IncrementalGather, WalkReadsTheIm2colMatrix) {
  const Planned planned = plan_case(GetParam());
  const KernelPlan &p = planned.plan;
  const OperandPlan &op = p.a;
  ASSERT_TRUE(codegen::incremental_gather_applies(p, op)) << "the case does not test the path";
  const codegen::ConvConstants &k = *p.conv;
  const OpSpec &spec = planned.spec;
  const int64_t n = spec.conv.n.value;
  std::vector<float> x(static_cast<size_t>(n * k.d * k.h * k.w * k.c)),
      y(static_cast<size_t>(n * k.o * k.p * k.q * k.k)),
      filter(static_cast<size_t>(k.k * k.taps() * k.cg));
  for (size_t i = 0; i < x.size(); ++i) // nonzero: a zero is the padding's
    x[i] = static_cast<float>(i + 1);
  // the im2col matrix depends on the geometry only: the reference reads f32 tensors
  OpSpec f32_spec = spec;
  f32_spec.conv.x.dtype = f32_spec.conv.filter.dtype = f32_spec.conv.y.dtype = DType::f32;
  f32_spec.acc = DType::f32;
  f32_spec.math = MathMode::f32;
  const ConvBuffers buffers{x.data(), filter.data(), y.data(), nullptr};
  const Im2colGemm ref = lower_conv_to_gemm(f32_spec, buffers, MathMode::f32);
  const int64_t M = ref.gemm.gemm.m.value, K = ref.gemm.gemm.k.value;
  ASSERT_EQ(K, k.taps() * k.cg);

  ExprGraph g;
  const codegen::IncrementalRow row = incremental_row(p, op, input(g, ExprType::i32, "outer"),
                                                      input(g, ExprType::i32, "outer_extent"));
  const IncrementalPosition start = incremental_position(p, op, input(g, ExprType::i32, "contig"));
  const IncrementalPosition at{input(g, ExprType::i32, "c"), input(g, ExprType::i32, "s"),
                               input(g, ExprType::i32, "r"), input(g, ExprType::i32, "t")};
  const IncrementalPosition next = advance_position(p, op, at);
  const codegen::IncrementalStep step = incremental_step(p, op, at);
  const codegen::Expr in = codegen::incremental_in({input(g, ExprType::i32, "mask"), {}},
                                                   {input(g, ExprType::i32, "bits"), {}});

  const int vecs_per_row = op.cols / op.vec, rows_per_pass = p.threads / vecs_per_row;
  const int bk = op.cols, ktiles = static_cast<int>((K + bk - 1) / bk);
  const int per_slice = (ktiles + p.config.split_k - 1) / p.config.split_k;
  int64_t checked = 0, inside = 0;
  for (int64_t group = 0; group < k.groups; ++group)
    for (int64_t m0 = 0; m0 < M; m0 += p.config.bm)
      for (int slice = 0; slice < p.config.split_k; ++slice)
        for (int tid = 0; tid < p.threads; ++tid) {
          const int64_t col = tid % vecs_per_row * op.vec;
          // the thread's rows, once
          std::vector<int64_t> mask, offset;
          for (int it = 0; it < op.copies_per_thread; ++it) {
            const ExprInputs rin{
                {"outer", codegen::integer_value(m0 + tid / vecs_per_row + it * rows_per_pass)},
                {"outer_extent", codegen::integer_value(M)}};
            mask.push_back(evaluate_integer(row.mask, rin));
            offset.push_back(evaluate_integer(row.offset, rin));
          }
          // the position of the slice's first K-tile, then K-tile by K-tile
          const int kt_begin = slice * per_slice;
          const ExprInputs sin{{"contig", codegen::integer_value(kt_begin * bk + col)}};
          int64_t pos[4] = {evaluate_integer(start.c, sin), evaluate_integer(start.s, sin),
                            evaluate_integer(start.r, sin), evaluate_integer(start.t, sin)};
          for (int kt = kt_begin; kt < ktiles + 2; ++kt) {
            const ExprInputs pin{{"c", codegen::integer_value(pos[0])},
                                 {"s", codegen::integer_value(pos[1])},
                                 {"r", codegen::integer_value(pos[2])},
                                 {"t", codegen::integer_value(pos[3])}};
            const int64_t bits = evaluate_integer(step.bits, pin);
            const int64_t step_offset = evaluate_integer(step.offset, pin);
            const int64_t contig = static_cast<int64_t>(kt) * bk + col;
            for (int it = 0; it < op.copies_per_thread; ++it) {
              const int64_t idx = tid + static_cast<int64_t>(it) * p.threads;
              if (idx >= op.copies)
                continue; // the copy a guarded loop skips
              const int64_t outer = m0 + idx / vecs_per_row;
              const bool got_in =
                  evaluate_integer(in, {{"mask", codegen::integer_value(mask[it])},
                                        {"bits", codegen::integer_value(bits)}}) != 0;
              for (int v = 0; v < op.vec; ++v) {
                const bool in_matrix = outer < M && contig + v < K;
                const double want =
                    in_matrix ? ref.a[static_cast<size_t>((group * M + outer) * K + contig + v)]
                              : 0.0;
                double value = 0.0;
                if (got_in) {
                  const int64_t bytes = offset[it] + step_offset;
                  ASSERT_EQ(bytes % op.esize, 0);
                  const int64_t elem = group * k.cg + bytes / op.esize + v;
                  ASSERT_GE(elem, 0) << "outer " << outer << " contig " << contig;
                  ASSERT_LT(elem, static_cast<int64_t>(x.size()));
                  value = x[static_cast<size_t>(elem)];
                  ++inside;
                }
                ASSERT_EQ(value, want)
                    << "group " << group << ", outer " << outer << ", contig " << contig + v
                    << ", K-tile " << kt << " (slice start " << kt_begin << ")";
                // where the matrix holds a value, the copy must read it (not zero-fill)
                if (in_matrix && want != 0.0) {
                  ASSERT_TRUE(got_in);
                }
                ++checked;
              }
            }
            const int64_t advanced[4] = {
                evaluate_integer(next.c, pin), evaluate_integer(next.s, pin),
                evaluate_integer(next.r, pin), evaluate_integer(next.t, pin)};
            std::copy(std::begin(advanced), std::end(advanced), std::begin(pos));
          }
        }
  EXPECT_GT(inside, 0);
  EXPECT_GT(checked, inside); // the padding and the tails were walked too
}

// Both backends' kernels on the emulator against the CPU reference.
TEST_P(IncrementalGather, BothBackendsMatchTheReference) {
  const Case &c = GetParam();
  const OpSpec spec = spec_of(c.spec);
  codegen::CompileOptions options;
  options.config = config_of(c.config);
  for (codegen::Backend backend : {codegen::Backend::llvm, codegen::Backend::cuda_source}) {
    SCOPED_TRACE(codegen::to_string(backend));
    options.backend = backend;
    const codegen::CompiledKernel kernel = engine::compile_kernel(spec, options);
    ASSERT_TRUE(kernel.ok()) << kernel.errors[0].field << ": " << kernel.errors[0].message;
    ASSERT_TRUE(codegen::incremental_gather_applies(kernel.plan, kernel.plan.a));
    emu::EmuDevice dev;
    const engine::KernelCheck check = engine::run_and_check_kernel(dev, kernel, spec, /*seed=*/3);
    EXPECT_GT(check.report.count, 0);
    EXPECT_TRUE(check.report.ok()) << check.report.summary();
  }
}

INSTANTIATE_TEST_SUITE_P(Conv, IncrementalGather, ::testing::ValuesIn(kCases), case_name);

// Where the path does not apply, the plan keeps global_element's gather: the other passes and
// gathers, and more copy rows per thread than the state may hold in registers.
TEST(IncrementalGatherScope, OnlyFpropImcolWithinItsLimits) {
  auto applies = [](const char *spec, const char *config) {
    const Planned planned = plan_case({spec, config});
    return std::pair{codegen::incremental_gather_applies(planned.plan, planned.plan.a),
                     codegen::incremental_gather_applies(planned.plan, planned.plan.b)};
  };
  const char *layer = "conv2d n=2 h=10 w=12 c=64 k=64 r=3 s=3 pad=1 stride=2 x=f16 acc=f32";
  EXPECT_EQ(applies(layer, "64x64x32 w32x32 s3"), std::pair(true, false));
  for (const char *pass : {" pass=dgrad", " pass=wgrad"})
    EXPECT_EQ(applies((std::string(layer) + pass).c_str(), "64x64x32 w32x32 s3"),
              std::pair(false, false))
        << pass;
  // 128x32 f16 elements one by one over 128 threads: 32 rows per thread
  EXPECT_EQ(
      applies("conv2d n=2 h=9 w=9 c=3 k=16 r=3 s=3 pad=1 x=f16 acc=f32", "128x32x32 w64x16 s2"),
      std::pair(false, false));
}

// A K-tile's offset past 2^31 bytes (a tap a whole 1024x1024 plane further in a conv3d) is kept in
// 64 bits, as is a row's, against the direct element index.
TEST(IncrementalGatherScope, WideTensorsTakeA64BitOffset) {
  const Planned planned = plan_case({"conv3d n=2 d=4 h=1024 w=1024 c=1024 k=64 t=3 r=3 s=3 pad=1 "
                                     "x=f16 acc=f32",
                                     "64x64x32 w32x32 s3"});
  const KernelPlan &p = planned.plan;
  ASSERT_TRUE(codegen::incremental_gather_applies(p, p.a));
  ExprGraph g;
  const IncrementalPosition at{input(g, ExprType::i32, "c"), input(g, ExprType::i32, "s"),
                               input(g, ExprType::i32, "r"), input(g, ExprType::i32, "t")};
  const codegen::IncrementalStep step = incremental_step(p, p.a, at);
  ASSERT_EQ(step.offset.type(), ExprType::i64);
  const int64_t want = (((2 * 1024 + 2) * int64_t{1024} + 2) * 1024 + 8) * 2; // t=2 r=2 s=2 c=8
  EXPECT_EQ(evaluate_integer(step.offset, {{"c", codegen::integer_value(8)},
                                           {"s", codegen::integer_value(2)},
                                           {"r", codegen::integer_value(2)},
                                           {"t", codegen::integer_value(2)}}),
            want);
  // the last output pixel of image 1: (n 1, o 3, p 1023, q 1023) at tap (0, 0, 0), pad 1
  const codegen::IncrementalRow row = incremental_row(p, p.a, input(g, ExprType::i32, "outer"),
                                                      input(g, ExprType::i32, "outer_extent"));
  const int64_t pixels = 4 * int64_t{1024} * 1024, last = 2 * pixels - 1;
  const ExprInputs rin{{"outer", codegen::integer_value(last)},
                       {"outer_extent", codegen::integer_value(2 * pixels)}};
  const int64_t elem = (((1 * 4 + 2) * int64_t{1024} + 1022) * 1024 + 1022) * 1024;
  EXPECT_EQ(evaluate_integer(row.offset, rin), elem * 2);
}

} // namespace
} // namespace tcjit
