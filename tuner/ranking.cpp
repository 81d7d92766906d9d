#include "tuner/ranking.h"

#include "compiler/codegen/plan/conv_lowering.h"
#include "tuner/cost_model.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <tuple>

namespace tcjit::tuner {

std::vector<RankedConfig> rank_by_model(const OpSpec &spec,
                                        const std::vector<codegen::TileConfig> &space,
                                        bool tf32_off, const GpuModel &gpu) {
  // The spec's part of every prediction, derived once per channel padding (0, or a convolution's
  // padded variant): the facts and the problem of the spec the kernel computes.
  struct Computed {
    int pad_c = 0;
    codegen::SpecFacts facts;
    Problem problem;
  };
  std::vector<Computed> computed;
  auto computed_for = [&](int pad_c) -> const Computed & {
    for (const Computed &c : computed)
      if (c.pad_c == pad_c)
        return c;
    codegen::TileConfig padded;
    padded.pad_c = pad_c;
    const OpSpec s = spec.kind == OpKind::gemm ? spec : codegen::effective_spec(spec, padded);
    computed.push_back({pad_c, codegen::spec_facts(s, tf32_off, pad_c), model_problem(s)});
    return computed.back();
  };
  std::vector<RankedConfig> ranked;
  std::vector<int> registers; // estimated, per ranked config
  ranked.reserve(space.size());
  double best = 0;
  for (size_t i = 0; i < space.size(); ++i) {
    const Computed &c = computed_for(space[i].pad_c);
    RankedConfig r{space[i], predict_config(gpu, spec, c.facts, c.problem, space[i]), i};
    if (!r.prediction.launchable)
      continue;
    best = best == 0 ? r.prediction.seconds : std::min(best, r.prediction.seconds);
    registers.push_back(estimated_registers(c.facts, space[i]));
    ranked.push_back(std::move(r));
  }
  const int ebits = dtype_bits(codegen::gemm_view(spec).gemm.a.dtype);
  auto key = [&](const RankedConfig &r, int estimated_registers) {
    const codegen::TileConfig &c = r.config;
    // Predictions within 1% of each other are a tie: the model is not that precise.
    const long bucket = std::lround(std::log(r.prediction.seconds / best) / std::log(1.01));
    // Then fewer K-tile barriers that nothing covers: each K-tile ends at a barrier that drains
    // its CTA's tensor pipe, which another resident CTA fills; with one CTA per SM, a wider bk
    // halves the drains. Measured on an H200 at 4096^3 f16: 128x256 (one CTA per SM) with bk64
    // 1.24x faster than with bk32, where the model, without a barrier term, predicts them within
    // 0.1%. Then what the model does not see: fewer registers, wide vectors, 3 stages, no
    // rasterization, 64-byte K-tiles.
    const int kbytes = c.bk * ebits / 8;
    const int uncovered_barriers = r.prediction.ctas_per_sm == 1 ? 4096 / kbytes : 0;
    return std::make_tuple(bucket, c.split_k, -(c.bm * c.bn), -(c.wm * c.wn), uncovered_barriers,
                           estimated_registers, -(c.vec_a + c.vec_b), std::abs(c.stages - 3),
                           c.raster_group, std::abs(kbytes - 64), r.index);
  };
  // Each key once (not per comparison); the index makes every key distinct.
  using Key = decltype(key(ranked.front(), 0));
  std::vector<std::pair<Key, size_t>> keys;
  keys.reserve(ranked.size());
  for (size_t i = 0; i < ranked.size(); ++i)
    keys.emplace_back(key(ranked[i], registers[i]), i);
  std::sort(keys.begin(), keys.end());
  std::vector<RankedConfig> sorted;
  sorted.reserve(ranked.size());
  for (const auto &[k, i] : keys)
    sorted.push_back(std::move(ranked[i]));
  return sorted;
}

} // namespace tcjit::tuner
