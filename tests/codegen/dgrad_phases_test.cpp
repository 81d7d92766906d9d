// Strided dgrad by phases (compiler/codegen/plan/dgrad_phases.h):
// - the phase arithmetic (first tap, tap count, base) and the gathers' and epilogue's formulas,
//   evaluated on the host, against the direct definition (a tap reaches pixel h when
//   (h + pad - r * dil) divides by the stride);
// - kernels of both backends on the emulator against reference_conv (strides 2 and 3, padding,
//   dilation, stride > filter with phases that have no tap, conv3d, groups, tails, beta != 0);
// - the emulator's mma count: the phases' own K-tiles only, ~1/stride^2 of the dense count.
#include "compiler/codegen/plan/dgrad_phases.h"
#include "compiler/codegen/plan/tile_config.h"
#include "compiler/dsl/parser.h"
#include "engine/kernel_compile.h"
#include "engine/verify_kernel.h"
#include "runtime/emu/emu_device.h"
#include "tests/common/test_names.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tcjit::codegen {
namespace {

// The taps r of [0, filter) that reach input coordinate `phase` (and every phase + i * stride).
std::vector<int64_t> taps_of(int64_t phase, int64_t stride, int64_t dil, int64_t pad,
                             int64_t filter) {
  std::vector<int64_t> out;
  for (int64_t r = 0; r < filter; ++r)
    if (((phase + pad - r * dil) % stride + stride) % stride == 0)
      out.push_back(r);
  return out;
}

TEST(DgradPhases, AxisPhasesAreTheTapsThatDivide) {
  for (int64_t stride = 1; stride <= 4; ++stride)
    for (int64_t dil = 1; dil <= 4; ++dil)
      for (int64_t pad = 0; pad <= 4; ++pad)
        for (int64_t filter = 1; filter <= 7; ++filter) {
          ConvConstants k;
          k.pass = ConvPass::dgrad;
          k.w = 9;
          k.s = filter;
          k.q = 4;
          k.pad[2] = pad;
          k.stride[2] = stride;
          k.dilation[2] = dil;
          const PhaseAxis axis = phase_axes(k)[2];
          int64_t total = 0;
          for (int64_t ph = 0; ph < stride; ++ph) {
            SCOPED_TRACE(testing::Message() << "stride " << stride << " dil " << dil << " pad "
                                            << pad << " filter " << filter << " phase " << ph);
            const std::vector<int64_t> want = taps_of(ph, stride, dil, pad, filter);
            const AxisPhase got = axis_phase(axis, ph);
            ASSERT_EQ(got.taps, int64_t(want.size()));
            total += got.taps;
            if (want.empty())
              continue;
            EXPECT_TRUE(got.taps == axis.taps_lo || got.taps == axis.taps_hi);
            for (size_t j = 0; j < want.size(); ++j)
              EXPECT_EQ(got.first_tap + int64_t(j) * axis.step, want[j]);
            EXPECT_EQ(got.base * stride, ph + pad - got.first_tap * dil);
            // the formulas, evaluated, agree with the host's
            ExprGraph g;
            const PhaseExprs e = phase_exprs(k, constant(g, ExprType::i32, ph));
            EXPECT_EQ(evaluate_integer(e.taps[2]), got.taps);
            EXPECT_EQ(evaluate_integer(e.first_tap[2]), got.first_tap);
            EXPECT_EQ(int32_t(evaluate_integer(e.base[2])), got.base);
          }
          EXPECT_EQ(total, filter) << "every tap reaches exactly one phase";
        }
}

// The direct definition of the phase gathers: for each phase, phase-grid pixel and phase tap,
// what dy element, filter element and dx pixel they stand for.
void check_gathers(const ConvConstants &k, int64_t n) {
  const std::array<PhaseAxis, 3> axes = phase_axes(k);
  const int64_t phases = dgrad_phase_count(k);
  const int64_t extent[3] = {k.d, k.h, k.w}, out[3] = {k.o, k.p, k.q}, filt[3] = {k.t, k.r, k.s};
  for (int64_t phase = 0; phase < phases; ++phase) {
    const int64_t ph[3] = {phase / (k.stride[1] * k.stride[2]), phase / k.stride[2] % k.stride[1],
                           phase % k.stride[2]};
    std::vector<int64_t> taps[3];
    for (int d = 0; d < 3; ++d)
      taps[d] = taps_of(ph[d], k.stride[d], k.dilation[d], k.pad[d], filt[d]);
    const int64_t tap_count = int64_t(taps[0].size() * taps[1].size() * taps[2].size());
    ExprGraph g;
    Expr phase_in = input(g, ExprType::i32, "phase"), outer = input(g, ExprType::i32, "outer"),
         contig = input(g, ExprType::i32, "contig"), row = input(g, ExprType::i32, "row");
    Expr yes = constant(g, ExprType::b1, 1);
    const PhaseElement a = strided_phase_element(k, phase_in, yes, outer, contig);
    const PhaseElement b = tap_rows_phase_element(k, phase_in, yes, outer, contig);
    const PhaseElement d = dgrad_output_row(k, phase_in, row, constant(g, ExprType::i32, 1 << 30));
    EXPECT_EQ(evaluate_integer(dgrad_phase_k(k, phase_in), {{"phase", integer_value(phase)}}),
              tap_count * k.kg);
    const int64_t grid = n * axes[0].rows * axes[1].rows * axes[2].rows;
    for (int64_t m = 0; m < grid; ++m) {
      int64_t rest = m, i[3], pixel[3];
      for (int dd = 2; dd >= 0; --dd) {
        i[dd] = rest % axes[size_t(dd)].rows;
        rest /= axes[size_t(dd)].rows;
        pixel[dd] = ph[dd] + i[dd] * k.stride[dd];
      }
      const int64_t nn = rest;
      const bool hole = pixel[0] >= k.d || pixel[1] >= k.h || pixel[2] >= k.w;
      const ExprInputs at_row{{"phase", integer_value(phase)}, {"row", integer_value(m)}};
      ASSERT_EQ(evaluate_integer(d.in, at_row), hole ? 0 : 1) << "row " << m;
      if (!hole) {
        EXPECT_EQ(evaluate_integer(d.elem, at_row),
                  ((nn * extent[0] + pixel[0]) * extent[1] + pixel[1]) * extent[2] + pixel[2]);
      }
      for (int64_t j = 0; j < tap_count; ++j) {
        const int64_t jt = j / int64_t(taps[2].size() * taps[1].size()),
                      jr = j / int64_t(taps[2].size()) % int64_t(taps[1].size()),
                      js = j % int64_t(taps[2].size());
        const int64_t tap[3] = {taps[0][size_t(jt)], taps[1][size_t(jr)], taps[2][size_t(js)]};
        for (int64_t ch = 0; ch < k.kg; ch += std::max<int64_t>(1, k.kg - 1)) {
          const ExprInputs at{{"phase", integer_value(phase)},
                              {"outer", integer_value(m)},
                              {"contig", integer_value(j * k.kg + ch)}};
          bool valid = !hole;
          int64_t o[3];
          for (int dd = 0; dd < 3; ++dd) {
            const int64_t num = pixel[dd] + k.pad[dd] - tap[dd] * k.dilation[dd];
            ASSERT_EQ(num % k.stride[dd], 0) << "a phase tap that does not divide";
            o[dd] = num / k.stride[dd];
            valid = valid && num >= 0 && o[dd] < out[dd];
          }
          ASSERT_EQ(evaluate_integer(a.in, at), valid ? 1 : 0)
              << "phase " << phase << " row " << m << " tap " << j;
          if (valid) {
            EXPECT_EQ(evaluate_integer(a.elem, at),
                      (((nn * k.o + o[0]) * k.p + o[1]) * k.q + o[2]) * k.k + ch);
          }
          if (m == 0) { // B: row j * Kg + ch, column c
            const ExprInputs bt{{"phase", integer_value(phase)},
                                {"outer", integer_value(j * k.kg + ch)},
                                {"contig", integer_value(1)}};
            const int64_t flat = (tap[0] * k.r + tap[1]) * k.s + tap[2];
            EXPECT_EQ(evaluate_integer(b.elem, bt), (ch * k.taps() + flat) * k.cg + 1);
          }
        }
      }
    }
  }
}

ConvConstants constants_of(const std::string &spec_text) {
  const OpSpec spec = parse_spec(spec_text).entries.at(0).spec;
  return lower_conv(spec).conv;
}

TEST(DgradPhases, GatherAndOutputFormulasMatchTheDefinition) {
  check_gathers(constants_of("conv2d n=2 h=7 w=6 c=4 k=3 r=3 s=2 pad=1,0 stride=2,3 "
                             "dilation=1,2 pass=dgrad x=f16 acc=f32"),
                2);
  check_gathers(constants_of("conv2d n=1 h=9 w=9 c=2 k=2 r=3 s=3 pad=2 stride=2 dilation=2 "
                             "pass=dgrad x=f16 acc=f32"),
                1); // gcd(stride, dilation) = 2: odd phases have no tap
  check_gathers(constants_of("conv2d n=1 h=8 w=7 c=2 k=3 r=1 s=2 stride=3 pass=dgrad x=f16 "
                             "acc=f32"),
                2); // stride > filter
  check_gathers(constants_of("conv3d n=1 d=5 h=4 w=5 c=2 k=2 t=3 r=2 s=3 pad=1 stride=2 "
                             "pass=dgrad x=f16 acc=f32"),
                2);
}

TEST(DgradPhases, TakenForStridedDgradOnly) {
  auto phased = [](const std::string &s) {
    return lower_conv(parse_spec(s).entries.at(0).spec).a == Gather::strided_phases;
  };
  EXPECT_TRUE(phased("conv2d n=1 h=8 w=8 c=16 k=16 r=3 s=3 pad=1 stride=2 pass=dgrad x=f16"));
  EXPECT_TRUE(phased("conv2d n=1 h=8 w=8 c=16 k=16 r=3 s=3 pad=1 stride=1,2 pass=dgrad x=f16"));
  EXPECT_FALSE(phased("conv2d n=1 h=8 w=8 c=16 k=16 r=3 s=3 pad=1 pass=dgrad x=f16"));
  EXPECT_FALSE(phased("conv2d n=1 h=8 w=8 c=16 k=16 r=3 s=3 pad=1 stride=2 x=f16"));
  EXPECT_FALSE(phased("conv2d n=1 h=8 w=8 c=16 k=16 r=3 s=3 pad=1 stride=2 pass=wgrad x=f16"));
  // split-K is refused (the phases' K differ), with the reason
  const OpSpec spec =
      parse_spec("conv2d n=1 h=8 w=8 c=16 k=16 r=3 s=3 pad=1 stride=2 pass=dgrad x=f16 acc=f32")
          .entries.at(0)
          .spec;
  TileConfig config;
  std::string error;
  ASSERT_TRUE(parse_tile_config("32x32x32 w16x16 s2 k2", config, error)) << error;
  config.vec_a = config.vec_b = 8;
  bool refused = false;
  for (const ConfigError &e : validate_tile_config(spec, config, "sm_80", false))
    refused = refused || (e.field == "split_k" && e.message.find("phase") != std::string::npos);
  EXPECT_TRUE(refused);
}

// --- on the emulator, both backends ---

struct Case {
  const char *spec;
  const char *config;
};
void PrintTo(const Case &c, std::ostream *os) {
  *os << c.spec << " [" << c.config << "]";
}

const Case kCases[] = {
    // stride 2 with odd extents (holes in the phase grid), M and N tails
    {"conv2d n=2 h=9 w=7 c=24 k=16 r=3 s=3 pad=1 stride=2 pass=dgrad x=f16 acc=f32",
     "32x32x32 w16x16 s2"},
    // stride 3, padding, f16 output (the staged epilogue), bf16 and tf32 and s8
    {"conv2d n=1 h=10 w=11 c=8 k=16 r=3 s=3 pad=1 stride=3 pass=dgrad x=f16 acc=f32",
     "32x32x32 w16x16 s3"},
    {"conv2d n=2 h=10 w=8 c=16 k=24 r=5 s=3 pad=2,1 stride=3,2 pass=dgrad x=bf16 acc=f32",
     "32x32x32 w16x16 s2"},
    {"conv2d n=2 h=9 w=9 c=16 k=16 r=3 s=3 pad=1 stride=2 pass=dgrad x=f32 acc=f32 math=tf32",
     "32x32x16 w16x16 s3"},
    {"conv2d n=2 h=9 w=9 c=16 k=32 r=3 s=3 pad=1 stride=2 pass=dgrad x=s8 acc=s32 alpha=0.05",
     "32x32x64 w16x16 s3"},
    {"conv2d n=2 h=7 w=7 c=8 k=8 r=3 s=3 pad=1 stride=2 pass=dgrad x=f64 acc=f64", ""},
    {"conv2d n=2 h=7 w=7 c=8 k=8 r=3 s=3 pad=1 stride=2 pass=dgrad x=f32 acc=f32 math=f32",
     "32x32x8 w32x32 s2"},
    // dilation with gcd(stride, dilation) = 2: the odd phases have no tap (zeros)
    {"conv2d n=2 h=9 w=9 c=16 k=8 r=3 s=3 pad=2 dilation=2 stride=2 pass=dgrad x=f16 acc=f32",
     "32x32x32 w16x16 s2"},
    // stride > filter: 1x1 stride 2 (3 of 4 phases empty) and 2x2 stride 3, with beta * C,
    // bias and an activation where nothing is summed
    {"conv2d n=2 h=8 w=8 c=16 k=32 r=1 s=1 stride=2 pass=dgrad x=f16 acc=f32 alpha=1.5 beta=0.5 "
     "bias=col act=relu",
     "32x32x32 w16x16 s2"},
    {"conv2d n=1 h=11 w=10 c=8 k=16 r=2 s=2 stride=3 pass=dgrad x=f32 acc=f32 math=tf32 beta=-1",
     "32x32x16 w16x16 s2"},
    // conv3d stride (2,2,2)
    {"conv3d n=1 d=5 h=6 w=5 c=8 k=16 t=3 r=3 s=3 pad=1 stride=2 pass=dgrad x=f16 acc=f32",
     "32x32x32 w16x16 s2"},
    // groups (per-group bias), beta
    {"conv2d n=2 h=7 w=7 c=32 k=16 r=3 s=3 pad=1 stride=2 groups=2 pass=dgrad x=f16 acc=f32 "
     "alpha=0.5 beta=0.25 bias=col act=gelu",
     "32x32x32 w16x16 s2"},
    // narrow vectors (Kg = 4, Cg = 6) and the default config
    {"conv2d n=2 h=9 w=8 c=6 k=4 r=3 s=3 pad=1 stride=2 pass=dgrad x=f16 acc=f32", ""},
};

class DgradPhasesEmu : public ::testing::TestWithParam<Case> {};

TEST_P(DgradPhasesEmu, BothBackendsMatchTheReference) {
  const Case &c = GetParam();
  const OpSpec spec = parse_spec(c.spec).entries.at(0).spec;
  CompileOptions options;
  if (*c.config) {
    TileConfig config;
    std::string error;
    ASSERT_TRUE(parse_tile_config(c.config, config, error)) << error;
    options.config = config;
  }
  for (Backend backend : {Backend::llvm, Backend::cuda_source}) {
    SCOPED_TRACE(to_string(backend));
    options.backend = backend;
    const CompiledKernel k = engine::compile_kernel(spec, options);
    ASSERT_TRUE(k.ok()) << k.errors[0].field << ": " << k.errors[0].message;
    ASSERT_EQ(k.plan.a.gather, Gather::strided_phases);
    emu::EmuDevice dev;
    const engine::KernelCheck check = engine::run_and_check_kernel(dev, k, spec, /*seed=*/11);
    EXPECT_GT(check.report.count, 0);
    EXPECT_TRUE(check.report.ok()) << check.report.summary();
  }
}

std::string case_name(const ::testing::TestParamInfo<Case> &info) {
  return ::tcjit::test::test_name(info.param.spec, info.param.config);
}

INSTANTIATE_TEST_SUITE_P(Strided, DgradPhasesEmu, ::testing::ValuesIn(kCases), case_name);

// The emulator's mma count is the phases' own: per phase, CTAs over the phase grid x its K-tiles
// (none for a phase without taps) x the mma per K-tile; the dense implicit GEMM's count is stride^2
// times that (3x3, pad 1, stride 2, K per group a multiple of bk: the 1 + 2 + 2 + 4 taps of the
// four phases are the 9 of one dense pixel; 1x1 stride 2: one phase of four has the tap; stride 3 =
// filter: one tap per phase), the sizes chosen so that the phase grids fill whole CTA tiles.
TEST(DgradPhasesEmu, MmaCountIsThePhasesUsefulWork) {
  struct Layer {
    const char *spec;
    int64_t n, h, w, cg, kg, r, s, stride, groups;
    double min_ratio;
  };
  const Layer layers[] = {
      {"conv2d n=2 h=16 w=16 c=32 k=64 r=3 s=3 pad=1 stride=2 pass=dgrad x=f16 acc=f32", 2, 16, 16,
       32, 64, 3, 3, 2, 1, 4.0},
      {"conv2d n=2 h=16 w=16 c=32 k=32 r=1 s=1 stride=2 pass=dgrad x=f16 acc=f32", 2, 16, 16, 32,
       32, 1, 1, 2, 1, 4.0},
      {"conv2d n=1 h=24 w=24 c=32 k=32 r=3 s=3 pad=1 stride=3 pass=dgrad x=f16 acc=f32", 1, 24, 24,
       32, 32, 3, 3, 3, 1, 9.0},
  };
  const int bm = 32, bn = 32, bk = 32, mma_per_ktile = (bm / 16) * (bn / 8) * (bk / 16);
  for (const Layer &l : layers) {
    SCOPED_TRACE(l.spec);
    const OpSpec spec = parse_spec(l.spec).entries.at(0).spec;
    CompileOptions options;
    TileConfig config;
    std::string error;
    ASSERT_TRUE(parse_tile_config("32x32x32 w16x16 s2", config, error)) << error;
    options.config = config;
    const CompiledKernel k = engine::compile_kernel(spec, options);
    ASSERT_TRUE(k.ok()) << k.errors[0].message;
    emu::EmuDevice dev;
    const engine::KernelCheck check = engine::run_and_check_kernel(dev, k, spec, 3);
    ASSERT_TRUE(check.report.ok()) << check.report.summary();
    ASSERT_TRUE(check.counters.has_value());
    auto tiles = [](int64_t v, int64_t t) { return (v + t - 1) / t; };
    const int64_t n_tiles = tiles(l.cg, bn);
    const int64_t dense = l.groups * tiles(l.n * l.h * l.w, bm) * n_tiles *
                          tiles(l.r * l.s * l.kg, bk) * mma_per_ktile;
    const PhaseTotals t = phase_totals(k.plan.conv.value());
    const std::array<PhaseAxis, 3> axes = phase_axes(*k.plan.conv);
    int64_t phased = 0;
    for (int64_t ph = 0; ph < l.stride; ++ph)
      for (int64_t pw = 0; pw < l.stride; ++pw) {
        const int64_t taps = axis_phase(axes[1], ph).taps * axis_phase(axes[2], pw).taps;
        phased += l.groups * tiles(l.n * t.rows_per_image, bm) * n_tiles * tiles(taps * l.kg, bk) *
                  mma_per_ktile; // a phase without taps: none
      }
    EXPECT_EQ(int64_t(check.counters->mma_instructions), phased);
    EXPECT_GE(double(dense) / double(check.counters->mma_instructions), l.min_ratio)
        << "dense " << dense << " mma, phased " << check.counters->mma_instructions;
  }
}

} // namespace
} // namespace tcjit::codegen
