// The cuDNN anchor against the toolkit's own libcudnn.so.9 (no fake driver in this process).
// Without a GPU, cuDNN still checks on the host every descriptor made before the handle (the
// three tensors, the convolution and the pass's operation are finalized by the real library), so
// the anchor's attribute names, types and counts are held to cuDNN's own rules here; the first
// call that needs a GPU, cudnnCreate, is where it stops. With a GPU it makes the plans.
#include "bench/gpu_tool/cudnn_anchor.h"

#include "runtime/cuda/cuda_driver.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

namespace tcjit::bench {
namespace {

TEST(CudnnAnchorOnTheToolkitsCudnn, TheRealLibraryAcceptsEveryDescriptorOfEveryPass) {
  const std::string path = TCJIT_TOOLKIT_LIBCUDNN;
  if (!std::filesystem::exists(path)) {
    GTEST_SKIP() << "the toolkit has no " << path;
  }
  const CudnnLibrary library = load_cudnn({path});
  ASSERT_TRUE(library.loaded) << library.error;
  EXPECT_GE(library.version, 90000u);

  // With a GPU the workspace is allocated in the current context: the primary context's.
  const std::shared_ptr<const cuda::CudaDriver> driver = cuda::process_cuda_driver();
  const bool gpu = driver->loaded && driver->device_count > 0;
  if (gpu) {
    CUcontext context = nullptr;
    ASSERT_EQ(driver->cuDevicePrimaryCtxRetain(&context, 0), CUDA_SUCCESS);
    ASSERT_EQ(driver->cuCtxSetCurrent(context), CUDA_SUCCESS);
  }
  ConvProblem problem;
  problem.name = "test_3x3";
  problem.n = 2;
  problem.h = problem.w = 14;
  problem.c = 32;
  problem.k = 64;
  problem.r = problem.s = 3;
  problem.pad_h = problem.pad_w = 1;
  problem.stride_h = problem.stride_w = 2;
  const ConvOperands never_run{0x100000, 0x200000, 0x300000}; // plans are made, never executed
  for (const char *pass : {"fprop", "dgrad", "wgrad"}) {
    for (HeuristicMode mode : {HeuristicMode::A, HeuristicMode::B}) {
      problem.pass = pass;
      const AnchorPlan plan = plan_cudnn(library, problem, never_run, mode);
      if (gpu) {
        EXPECT_TRUE(plan.ok) << pass << " " << plan.variant << ": " << plan.why_not;
      } else {
        EXPECT_FALSE(plan.ok);
        EXPECT_NE(plan.why_not.find("cuDNN cudnnCreate failed"), std::string::npos)
            << pass << " " << plan.variant
            << ": the descriptors before the handle must pass: " << plan.why_not;
      }
    }
  }
}

} // namespace
} // namespace tcjit::bench
