// The whole space ranked by the cost model's static prediction (no compile): what model-topk
// measures first and what the default chooser takes. Near-ties (within 1%) prefer no split-K, the
// larger CTA tile (more reuse), the larger warp tile (fewer instructions per mma), then fewer
// estimated registers.
#pragma once

#include "compiler/codegen/plan/tile_config.h"
#include "tcjit/op_spec.h"
#include "tuner/perf_model.h"

#include <vector>

namespace tcjit::tuner {

struct RankedConfig {
  codegen::TileConfig config;
  Prediction prediction;
  size_t index = 0; // in the space given
};

std::vector<RankedConfig> rank_by_model(const OpSpec &spec,
                                        const std::vector<codegen::TileConfig> &space,
                                        bool tf32_off, const GpuModel &gpu);

} // namespace tcjit::tuner
