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
  std::vector<RankedConfig> ranked;
  ranked.reserve(space.size());
  double best = 0;
  for (size_t i = 0; i < space.size(); ++i) {
    RankedConfig r{space[i], predict_config(gpu, spec, space[i], tf32_off), i};
    if (!r.prediction.launchable)
      continue;
    best = best == 0 ? r.prediction.seconds : std::min(best, r.prediction.seconds);
    ranked.push_back(std::move(r));
  }
  const int ebits = dtype_bits(codegen::gemm_view(spec).gemm.a.dtype);
  auto key = [&](const RankedConfig &r) {
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
                           estimated_registers(spec, c, tf32_off), -(c.vec_a + c.vec_b),
                           std::abs(c.stages - 3), c.raster_group, std::abs(kbytes - 64), r.index);
  };
  std::stable_sort(ranked.begin(), ranked.end(),
                   [&](const RankedConfig &a, const RankedConfig &b) { return key(a) < key(b); });
  return ranked;
}

} // namespace tcjit::tuner
