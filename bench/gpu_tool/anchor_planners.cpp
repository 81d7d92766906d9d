#include "bench/gpu_tool/anchor_planners.h"

namespace tcjit::bench {

namespace {

AnchorPlan not_built(const std::string &anchor, const std::string &variant) {
  AnchorPlan plan;
  plan.anchor = anchor;
  plan.variant = variant;
  plan.why_not = "this tcjit_gpu_bench was built without the " + anchor + " anchor";
  return plan;
}

} // namespace

// The libraries' plans (cublaslt_anchor.h's plan_cublaslt, cudnn_anchor.h's plan_cudnn) are
// wired in here; until then each anchor column says it is not built.
AnchorPlanners library_anchor_planners() {
  AnchorPlanners planners;
  planners.gemm = [](const GemmProblem &, const GemmOperands &) {
    return std::vector<AnchorPlan>{not_built("cuBLASLt", "heuristic")};
  };
  planners.conv = [](const ConvProblem &, const ConvOperands &) {
    return std::vector<AnchorPlan>{not_built("cuDNN", "mode A"), not_built("cuDNN", "mode B")};
  };
  return planners;
}

} // namespace tcjit::bench
