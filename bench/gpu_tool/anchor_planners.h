// The anchors tcjit_gpu_bench races against: cuBLASLt for the GEMMs, cuDNN (heuristic modes A
// and B) for the convolutions, through race.h's AnchorPlanners.
#pragma once

#include "bench/gpu_tool/race.h"

namespace tcjit::bench {

AnchorPlanners library_anchor_planners();

} // namespace tcjit::bench
