// The cuDNN anchor on a real GPU (ctest label gpu; skipped, with the reason, without one): every
// candidate of every pass in both heuristic modes runs on the device and its output is checked
// against tcjit's CPU reference.
#include "bench/gpu_tool/cudnn_anchor.h"

#include "runtime/cuda/cuda_driver.h"
#include "tests/bench/conv_problem_reference.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace tcjit::bench {
namespace {

TEST(CudnnAnchorOnTheGpu, EveryCandidateOfEveryPassMatchesTheReference) {
  const std::shared_ptr<const cuda::CudaDriver> driver = cuda::process_cuda_driver();
  if (!driver->loaded || driver->device_count == 0) {
    GTEST_SKIP() << "no GPU: " << (driver->error.empty() ? "no CUDA device" : driver->error);
  }
  std::vector<std::string> candidates = cuda::default_cudnn_candidates();
  candidates.push_back(TCJIT_TOOLKIT_LIBCUDNN);
  const CudnnLibrary library = load_cudnn(candidates);
  if (!library.loaded) {
    GTEST_SKIP() << library.error;
  }
  CUcontext context = nullptr;
  ASSERT_EQ(driver->cuDevicePrimaryCtxRetain(&context, 0), CUDA_SUCCESS);
  ASSERT_EQ(driver->cuCtxSetCurrent(context), CUDA_SUCCESS);

  ConvProblem problem;
  problem.name = "test_3x3";
  problem.n = 2;
  problem.h = problem.w = 14;
  problem.c = 32;
  problem.k = 64;
  problem.r = problem.s = 3;
  problem.pad_h = problem.pad_w = 1;
  problem.stride_h = problem.stride_w = 2;
  const std::vector<uint16_t> x = testing::random_eighths_f16(testing::x_count(problem), 1);
  const std::vector<uint16_t> w = testing::random_eighths_f16(testing::w_count(problem), 2);
  const std::vector<uint16_t> y = testing::random_eighths_f16(testing::y_count(problem), 3);
  ConvOperands operands;
  for (auto [host, device] : {std::pair{&x, &operands.x}, {&w, &operands.w}, {&y, &operands.y}}) {
    CUdeviceptr p = 0;
    ASSERT_EQ(driver->cuMemAlloc_v2(&p, host->size() * 2), CUDA_SUCCESS);
    *device = p;
  }
  const auto restore_inputs = [&] {
    ASSERT_EQ(driver->cuMemcpyHtoD_v2(operands.x, x.data(), x.size() * 2), CUDA_SUCCESS);
    ASSERT_EQ(driver->cuMemcpyHtoD_v2(operands.w, w.data(), w.size() * 2), CUDA_SUCCESS);
    ASSERT_EQ(driver->cuMemcpyHtoD_v2(operands.y, y.data(), y.size() * 2), CUDA_SUCCESS);
  };

  for (const char *pass : {"fprop", "dgrad", "wgrad"}) {
    problem.pass = pass;
    const ReferenceResult expected = testing::reference_output(problem, x, w, y);
    const uint64_t output = problem.pass == "fprop"   ? operands.y
                            : problem.pass == "dgrad" ? operands.x
                                                      : operands.w;
    for (HeuristicMode mode : {HeuristicMode::A, HeuristicMode::B}) {
      const AnchorPlan plan = plan_cudnn(library, problem, operands, mode);
      ASSERT_TRUE(plan.ok) << pass << ": " << plan.why_not;
      for (const AnchorCandidate &candidate : plan.candidates) {
        restore_inputs();
        ASSERT_EQ(driver->cuMemsetD8_v2(output, 0x7e, expected.values.size() * 2), CUDA_SUCCESS);
        candidate.enqueue(nullptr);
        ASSERT_EQ(driver->cuCtxSynchronize(), CUDA_SUCCESS) << candidate.description;
        std::vector<uint16_t> got(expected.values.size());
        ASSERT_EQ(driver->cuMemcpyDtoH_v2(got.data(), output, got.size() * 2), CUDA_SUCCESS);
        // One f16 rounding of the output, plus room for engines that reduce in lower precision
        // or transform (Winograd, FFT): 2^-10 |ref| + 2^-9 * sum |terms|.
        int wrong = 0;
        for (size_t i = 0; i < got.size(); ++i) {
          const double value = f16_bits_to_f32(got[i]), ref = expected.values[i];
          const double tolerance =
              std::ldexp(std::fabs(ref), -10) + std::ldexp(expected.magnitudes[i], -9);
          if (!(std::fabs(value - ref) <= tolerance) && ++wrong <= 3) {
            ADD_FAILURE() << pass << " " << plan.variant << " " << candidate.description
                          << ": element " << i << " is " << value << ", expected " << ref;
          }
        }
        EXPECT_EQ(wrong, 0) << pass << " " << plan.variant << " " << candidate.description;
      }
    }
  }
  for (uint64_t p : {operands.x, operands.w, operands.y}) {
    driver->cuMemFree_v2(p);
  }
}

} // namespace
} // namespace tcjit::bench
