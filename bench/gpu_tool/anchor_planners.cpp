#include "bench/gpu_tool/anchor_planners.h"

#include "bench/gpu_tool/cublaslt_anchor.h"
#include "bench/gpu_tool/cudnn_anchor.h"
#include "runtime/cuda/vendor_libraries.h"

#include <memory>
#include <optional>

namespace tcjit::bench {

namespace {

// "libcudnn.so.9 (cuDNN 9.19.0)", and what the plan skipped.
std::string cudnn_note(const CudnnLibrary &library, const AnchorPlan &plan) {
  std::string note = library.path + " (cuDNN " +
                     cuda::vendor_version_text(cuda::VendorLibrary::cudnn,
                                               static_cast<long long>(library.version)) +
                     ")";
  const CudnnPlanSummary summary = cudnn_plan_summary(plan);
  if (summary.refused > 0)
    note += "; " + std::to_string(summary.refused) + " of the " + std::to_string(summary.tried) +
            " engine configs tried did not finalize (first: " + summary.first_refusal + ")";
  return note;
}

} // namespace

// Each library is opened once, on first use, and kept by the planners (their plans hold its
// functions).
AnchorPlanners library_anchor_planners() {
  AnchorPlanners planners;
  auto cublaslt = std::make_shared<std::optional<CublasLtLibrary>>();
  planners.gemm = [cublaslt](const GemmProblem &problem, const GemmOperands &operands) {
    if (!*cublaslt)
      *cublaslt = load_cublaslt(cuda::default_cublaslt_candidates());
    AnchorPlan plan = plan_cublaslt(**cublaslt, problem, operands);
    if ((*cublaslt)->loaded)
      plan.note = (*cublaslt)->path + " (cuBLASLt " +
                  cuda::vendor_version_text(cuda::VendorLibrary::cublaslt,
                                            static_cast<long long>((*cublaslt)->version)) +
                  ")";
    return std::vector<AnchorPlan>{std::move(plan)};
  };
  auto cudnn = std::make_shared<std::optional<CudnnLibrary>>();
  planners.conv = [cudnn](const ConvProblem &problem, const ConvOperands &operands) {
    if (!*cudnn)
      *cudnn = load_cudnn(cuda::default_cudnn_candidates());
    std::vector<AnchorPlan> plans;
    for (HeuristicMode mode : {HeuristicMode::A, HeuristicMode::B}) {
      AnchorPlan plan = plan_cudnn(**cudnn, problem, operands, mode);
      if ((*cudnn)->loaded)
        plan.note = cudnn_note(**cudnn, plan);
      plans.push_back(std::move(plan));
    }
    return plans;
  };
  return planners;
}

} // namespace tcjit::bench
