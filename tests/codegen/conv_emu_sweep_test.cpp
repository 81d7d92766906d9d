// The long convolution sweep (ctest -L long): seeded random convolutions — conv2d and conv3d, every
// pass, groups (1, 2, 3, depthwise), stride, padding, dilation, channel counts that do and do not
// fill 16-byte vectors, every dtype, epilogues — each with the default config, a random legal
// config of the tuner's space (split-K included) and, where it applies, channel padding, on the
// PTX emulator against the CPU reference.
#include "gemm_runner.h"

#include "compiler/dsl/parser.h"
#include "tuner/search_space.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace tcjit::codegen::test {
namespace {

struct SweepDtype {
  const char *words;
};
constexpr SweepDtype kDtypes[] = {{"x=f16 acc=f32"},           {"x=bf16 acc=f32"},
                                  {"x=f32 acc=f32 math=tf32"}, {"x=s8 acc=s32 alpha=0.05"},
                                  {"x=f64 acc=f64"},           {"x=f32 acc=f32 math=f32"}};
constexpr const char *kEpilogues[] = {"", "act=relu bias=col", "beta=0.5 act=gelu",
                                      "alpha=2 act=sigmoid", "bias=col act=swish"};

std::string random_conv(std::mt19937 &rng) {
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  const bool three_d = pick(0, 4) == 0;
  const int groups_kind = pick(0, 5); // 0-2: 1 group, 3: 2, 4: 3, 5: depthwise
  const int groups = groups_kind <= 2 ? 1 : groups_kind == 3 ? 2 : groups_kind == 4 ? 3 : 0;
  const int cg_choices[] = {1, 3, 4, 8, 12, 16, 24};
  int cg = cg_choices[pick(0, 6)], kg = cg_choices[pick(0, 6)];
  int g = groups;
  if (groups == 0) { // depthwise
    g = cg_choices[pick(1, 6)];
    cg = kg = 1;
  }
  const char *pass = (const char *[]){"fprop", "dgrad", "wgrad"}[pick(0, 2)];
  const int r = pick(1, 3), s = pick(1, 3), t = three_d ? pick(1, 2) : 1;
  const int stride = pick(1, 2), dilation = pick(0, 3) == 0 ? 2 : 1;
  const int pad = pick(0, 2);
  // input sizes the filter fits: in + 2 pad >= dilation * (f - 1) + 1
  auto size = [&](int f) { return std::max(dilation * (f - 1) + 1, pick(3, 8)); };
  std::string text = three_d ? "conv3d" : "conv2d";
  text += " n=" + std::to_string(pick(1, 3));
  if (three_d)
    text += " d=" + std::to_string(size(t)) + " t=" + std::to_string(t);
  text += " h=" + std::to_string(size(r)) + " w=" + std::to_string(size(s)) +
          " c=" + std::to_string(cg * g) + " k=" + std::to_string(kg * g) +
          " r=" + std::to_string(r) + " s=" + std::to_string(s) + " groups=" + std::to_string(g) +
          " pad=" + std::to_string(pad) + " stride=" + std::to_string(stride) +
          " dilation=" + std::to_string(dilation) + " pass=" + pass;
  return text;
}

class ConvSweep : public ::testing::TestWithParam<int> {};

TEST_P(ConvSweep, MatchesReference) {
  std::mt19937 rng(1000u + unsigned(GetParam()));
  int cases = 0;
  for (int i = 0; i < 24; ++i) {
    const std::string base = random_conv(rng);
    const SweepDtype &dt = kDtypes[std::uniform_int_distribution<int>(0, 5)(rng)];
    std::string spec = base + " " + dt.words;
    const bool wgrad = base.find("pass=wgrad") != std::string::npos;
    std::string epi = kEpilogues[std::uniform_int_distribution<int>(0, 4)(rng)];
    if (wgrad && epi.find("bias") != std::string::npos)
      epi = "act=relu"; // a filter gradient has no bias
    spec += " " + epi;
    const ParseResult parsed = parse_spec(spec);
    if (!parsed.ok())
      continue; // e.g. a filter larger than the padded input
    ++cases;
    SCOPED_TRACE(spec);
    // The default config, then a random legal config of the tuner's space (every channel
    // strategy), each against the reference.
    expect_matches(spec);
    const OpSpec &op = parsed.entries.front().spec;
    const tuner::SearchSpace space =
        tuner::enumerate_space(op, "sm_80", false, tuner::a100_model(), tuner::SpaceOptions{});
    ASSERT_FALSE(space.legal.empty());
    const TileConfig &c =
        space.legal[std::uniform_int_distribution<size_t>(0, space.legal.size() - 1)(rng)];
    expect_matches(spec, to_string(c));
  }
  EXPECT_GT(cases, 16);
}

// Named by the generator's seed: 1000 + the parameter.
INSTANTIATE_TEST_SUITE_P(Seeds, ConvSweep, ::testing::Range(0, 8), [](const auto &info) {
  return "seed_" + std::to_string(1000 + info.param);
});

} // namespace
} // namespace tcjit::codegen::test
