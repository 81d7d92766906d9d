// The cuDNN anchor (bench/gpu_tool/cudnn_anchor.h) on fakes: the fake driver
// (tests/cuda/fake_libcuda.cpp, loaded as libcuda.so.1 before the anchor opens the driver) and
// the fake libcudnn.so.9 (fake_cudnn.cpp), whose cudnnBackendExecute computes the convolution on
// the fake driver's host memory through the strides it was given. Each candidate's output is
// checked against tcjit's CPU reference (compiler/reference/conv_reference.h).
#include "bench/gpu_tool/cudnn_anchor.h"

#include "compiler/reference/numeric_convert.h"
#include "runtime/cuda/cuda_driver.h"
#include "tests/bench/conv_problem_reference.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace tcjit::bench {
namespace {

using Configure = void (*)(int, unsigned, int64_t);

class CudnnAnchorOnFakes : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    // Before anything opens the driver: the runtime's dlopen("libcuda.so.1") then finds the fake.
    fake_cuda_ = dlopen(TCJIT_FAKE_LIBCUDA_SO1, RTLD_NOW | RTLD_GLOBAL);
  }

  void SetUp() override {
    ASSERT_NE(fake_cuda_, nullptr) << dlerror();
    fake_cudnn_ = dlopen(TCJIT_FAKE_LIBCUDNN_SO9, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(fake_cudnn_, nullptr) << dlerror();
    configure_ = reinterpret_cast<Configure>(dlsym(fake_cudnn_, "fake_cudnn_configure"));
    call_log_ = reinterpret_cast<const char *(*)()>(dlsym(fake_cudnn_, "fake_cudnn_call_log"));
    reset_log_ = reinterpret_cast<void (*)()>(dlsym(fake_cudnn_, "fake_cudnn_reset_call_log"));
    live_descriptors_ =
        reinterpret_cast<int (*)()>(dlsym(fake_cudnn_, "fake_cudnn_live_descriptors"));
    live_handles_ = reinterpret_cast<int (*)()>(dlsym(fake_cudnn_, "fake_cudnn_live_handles"));
    live_allocations_ =
        reinterpret_cast<int (*)()>(dlsym(fake_cuda_, "fake_cuda_live_allocations"));
    ASSERT_TRUE(configure_ && call_log_ && reset_log_ && live_descriptors_ && live_handles_ &&
                live_allocations_);
    configure_(4, 0, 256);
    reset_log_();

    library_ = load_cudnn({TCJIT_FAKE_LIBCUDNN_SO9});
    ASSERT_TRUE(library_.loaded) << library_.error;
    driver_ = cuda::process_cuda_driver();
    ASSERT_TRUE(driver_->loaded) << driver_->error;
    CUcontext context = nullptr;
    ASSERT_EQ(driver_->cuDevicePrimaryCtxRetain(&context, 0), CUDA_SUCCESS);
    ASSERT_EQ(driver_->cuCtxSetCurrent(context), CUDA_SUCCESS);

    problem_.name = "test_3x3";
    problem_.n = 2;
    problem_.h = problem_.w = 9;
    problem_.c = 8;
    problem_.k = 16;
    problem_.r = problem_.s = 3;
    problem_.pad_h = problem_.pad_w = 1;
    problem_.stride_h = problem_.stride_w = 2;
    x_ = random_f16(problem_.n * problem_.h * problem_.w * problem_.c, 1);
    w_ = random_f16(problem_.k * problem_.r * problem_.s * problem_.c, 2);
    y_ = random_f16(problem_.n * problem_.p() * problem_.q() * problem_.k, 3);
    operands_ = {upload(x_), upload(w_), upload(y_)};
  }

  void TearDown() override {
    for (uint64_t p : {operands_.x, operands_.w, operands_.y}) {
      if (p) {
        driver_->cuMemFree_v2(p);
      }
    }
  }

  static std::vector<uint16_t> random_f16(int64_t count, unsigned seed) {
    return testing::random_eighths_f16(count, seed);
  }
  uint64_t upload(const std::vector<uint16_t> &host) {
    CUdeviceptr p = 0;
    EXPECT_EQ(driver_->cuMemAlloc_v2(&p, host.size() * 2), CUDA_SUCCESS);
    EXPECT_EQ(driver_->cuMemcpyHtoD_v2(p, host.data(), host.size() * 2), CUDA_SUCCESS);
    return p;
  }
  std::vector<uint16_t> download(uint64_t p, size_t count) {
    std::vector<uint16_t> host(count);
    EXPECT_EQ(driver_->cuMemcpyDtoH_v2(host.data(), p, count * 2), CUDA_SUCCESS);
    return host;
  }

  // What tcjit's reference gives for the problem's pass on the uploaded tensors, in the written
  // tensor's memory order (NHWC, or KRSC for dw).
  std::vector<double> reference(const std::string &pass) {
    ConvProblem problem = problem_;
    problem.pass = pass;
    const ReferenceValues values = testing::reference_output(problem, x_, w_, y_).values;
    return {values.begin(), values.end()};
  }

  // The tensor `pass` writes, and its element count.
  std::pair<uint64_t, size_t> output_of(const std::string &pass) const {
    if (pass == "fprop") {
      return {operands_.y, y_.size()};
    }
    if (pass == "dgrad") {
      return {operands_.x, x_.size()};
    }
    return {operands_.w, w_.size()};
  }

  // Runs each candidate on `stream` into an output filled with NaN first, and checks it against
  // the reference within one f16 rounding: |got - ref| <= 2^-10 |ref| + 2^-14.
  void expect_every_candidate_correct(const AnchorPlan &plan, const std::string &pass,
                                      void *stream) {
    const std::vector<double> expected = reference(pass);
    const auto [output, count] = output_of(pass);
    for (const AnchorCandidate &candidate : plan.candidates) {
      // The inputs as uploaded (an earlier pass wrote into one of them), the output all NaN.
      ASSERT_EQ(driver_->cuMemcpyHtoD_v2(operands_.x, x_.data(), x_.size() * 2), CUDA_SUCCESS);
      ASSERT_EQ(driver_->cuMemcpyHtoD_v2(operands_.w, w_.data(), w_.size() * 2), CUDA_SUCCESS);
      ASSERT_EQ(driver_->cuMemcpyHtoD_v2(operands_.y, y_.data(), y_.size() * 2), CUDA_SUCCESS);
      ASSERT_EQ(driver_->cuMemsetD8_v2(output, 0x7e, count * 2), CUDA_SUCCESS); // f16 NaN
      candidate.enqueue(stream);
      const std::vector<uint16_t> got = download(output, count);
      ASSERT_EQ(got.size(), expected.size());
      int wrong = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        const double value = f16_bits_to_f32(got[i]);
        const double tolerance = std::ldexp(std::fabs(expected[i]), -10) + std::ldexp(1.0, -14);
        if (!(std::fabs(value - expected[i]) <= tolerance) && ++wrong <= 3) {
          ADD_FAILURE() << pass << " " << plan.variant << " " << candidate.description
                        << ": element " << i << " is " << value << ", expected " << expected[i];
        }
      }
      EXPECT_EQ(wrong, 0) << pass << " " << plan.variant << " " << candidate.description;
    }
  }

  std::string log() const { return call_log_(); }

  static inline void *fake_cuda_ = nullptr;
  void *fake_cudnn_ = nullptr;
  Configure configure_ = nullptr;
  const char *(*call_log_)() = nullptr;
  void (*reset_log_)() = nullptr;
  int (*live_descriptors_)() = nullptr;
  int (*live_handles_)() = nullptr;
  int (*live_allocations_)() = nullptr;
  CudnnLibrary library_;
  std::shared_ptr<const cuda::CudaDriver> driver_;
  ConvProblem problem_;
  std::vector<uint16_t> x_, w_, y_;
  ConvOperands operands_;
};

std::string stream_text(void *stream) {
  char text[64];
  std::snprintf(text, sizeof(text), "stream=%p", stream);
  return text;
}

TEST_F(CudnnAnchorOnFakes, EveryPassInBothModesEveryCandidateComputesTheConvolution) {
  void *const stream = reinterpret_cast<void *>(0x5eed);
  for (const char *pass : {"fprop", "dgrad", "wgrad"}) {
    for (HeuristicMode mode : {HeuristicMode::A, HeuristicMode::B}) {
      problem_.pass = pass;
      const AnchorPlan plan = plan_cudnn(library_, problem_, operands_, mode);
      ASSERT_TRUE(plan.ok) << plan.why_not;
      EXPECT_EQ(plan.anchor, "cuDNN");
      EXPECT_EQ(plan.variant, mode == HeuristicMode::A ? "mode A" : "mode B");
      ASSERT_EQ(plan.candidates.size(), 4u);
      for (size_t i = 0; i < plan.candidates.size(); ++i) {
        EXPECT_EQ(plan.candidates[i].rank, static_cast<int>(i));
      }
      // Mode A's order is the fake's engines 10..13, mode B's the reverse.
      EXPECT_EQ(plan.candidates[0].description.rfind(
                    mode == HeuristicMode::A ? "engine 10" : "engine 13", 0),
                0u)
          << plan.candidates[0].description;
      expect_every_candidate_correct(plan, pass, stream);
    }
  }
  EXPECT_EQ(log().find("refused"), std::string::npos) << log();
}

TEST_F(CudnnAnchorOnFakes, GroupedConvolutionEveryPass) {
  problem_.groups = 2; // w: k x r x s x c/2
  driver_->cuMemFree_v2(operands_.w);
  w_ = random_f16(problem_.k * problem_.r * problem_.s * problem_.c / 2, 4);
  operands_.w = upload(w_);
  for (const char *pass : {"fprop", "dgrad", "wgrad"}) {
    problem_.pass = pass;
    const AnchorPlan plan = plan_cudnn(library_, problem_, operands_, HeuristicMode::A, 2);
    ASSERT_TRUE(plan.ok) << plan.why_not;
    ASSERT_EQ(plan.candidates.size(), 2u);
    expect_every_candidate_correct(plan, pass, nullptr);
  }
}

// The fake holds the anchor to the documented rules: it refuses what the documentation forbids.
TEST_F(CudnnAnchorOnFakes, TheFakeRefusesWhatTheDocumentationForbids) {
  const CudnnLibrary &l = library_;
  cudnnBackendDescriptor_t tensor = nullptr;
  ASSERT_EQ(l.cudnnBackendCreateDescriptor(CUDNN_BACKEND_TENSOR_DESCRIPTOR, &tensor),
            CUDNN_STATUS_SUCCESS);
  const int32_t narrow[4] = {1, 8, 9, 9};
  EXPECT_EQ(
      l.cudnnBackendSetAttribute(tensor, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT32, 4, narrow),
      CUDNN_STATUS_BAD_PARAM)
      << "dimensions are CUDNN_TYPE_INT64";
  const int64_t uid = 1;
  EXPECT_EQ(
      l.cudnnBackendSetAttribute(tensor, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 2, &uid),
      CUDNN_STATUS_BAD_PARAM)
      << "one unique id";
  EXPECT_EQ(l.cudnnBackendSetAttribute(tensor, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_INT64,
                                       1, &uid),
            CUDNN_STATUS_BAD_PARAM)
      << "not a tensor's attribute";
  EXPECT_EQ(
      l.cudnnBackendSetAttribute(tensor, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid),
      CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(l.cudnnBackendFinalize(tensor), CUDNN_STATUS_BAD_PARAM) << "dims, strides... missing";
  char message[256] = {};
  l.cudnnGetLastErrorString(message, sizeof(message));
  EXPECT_NE(std::string(message).find("is required and was not set"), std::string::npos) << message;
  int64_t count = 0, value = 0;
  EXPECT_EQ(l.cudnnBackendGetAttribute(tensor, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1,
                                       &count, &value),
            CUDNN_STATUS_NOT_INITIALIZED)
      << "read before finalize";
  cudnnBackendDescriptor_t op = nullptr;
  ASSERT_EQ(
      l.cudnnBackendCreateDescriptor(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR, &op),
      CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(l.cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
                                       CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &tensor),
            CUDNN_STATUS_BAD_PARAM)
      << "an unfinalized descriptor as a value";
  EXPECT_EQ(l.cudnnBackendDestroyDescriptor(op), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(l.cudnnBackendDestroyDescriptor(tensor), CUDNN_STATUS_SUCCESS);
  EXPECT_EQ(live_descriptors_(), 0);
}

TEST_F(CudnnAnchorOnFakes, CallSequenceHeuristicModeFinalizeAndExecuteOnTheGivenStream) {
  problem_.pass = "fprop";
  const AnchorPlan plan = plan_cudnn(library_, problem_, operands_, HeuristicMode::B, 2);
  ASSERT_TRUE(plan.ok) << plan.why_not;
  ASSERT_EQ(plan.candidates.size(), 2u);
  EXPECT_EQ(plan.candidates[0].description,
            "engine 13 (tile_size=3 stages=3), heuristic rank 0, workspace 768 B");
  const std::string planning = log();
  const std::vector<std::string> in_order = {"cudnnBackendFinalize TENSOR",
                                             "cudnnBackendFinalize CONVOLUTION",
                                             "cudnnBackendFinalize OPERATION_CONVOLUTION_FORWARD",
                                             "cudnnCreate",
                                             "cudnnBackendFinalize OPERATIONGRAPH",
                                             "cudnnBackendFinalize ENGINEHEUR mode=B",
                                             "cudnnBackendFinalize EXECUTION_PLAN engine=13",
                                             "cudnnBackendFinalize EXECUTION_PLAN engine=12",
                                             "cudnnBackendFinalize VARIANT_PACK"};
  size_t at = 0;
  for (const std::string &call : in_order) {
    at = planning.find(call, at);
    ASSERT_NE(at, std::string::npos) << call << " missing or out of order in:\n" << planning;
  }
  EXPECT_EQ(planning.find("cudnnBackendExecute"), std::string::npos) << "planning runs nothing";
  EXPECT_EQ(planning.find("refused"), std::string::npos) << planning;

  reset_log_();
  void *const stream = reinterpret_cast<void *>(0x5eed);
  plan.candidates[1].enqueue(stream);
  plan.candidates[0].enqueue(nullptr);
  EXPECT_EQ(log(), "cudnnSetStream " + stream_text(stream) + "\ncudnnBackendExecute " +
                       stream_text(stream) + " engine=12\ncudnnSetStream " + stream_text(nullptr) +
                       "\ncudnnBackendExecute " + stream_text(nullptr) + " engine=13\n");
}

TEST_F(CudnnAnchorOnFakes, PlansThatDoNotFinalizeAreSkippedAndCounted) {
  configure_(5, 0b00101u, 256); // engines 10 and 12 refuse to make an execution plan
  problem_.pass = "dgrad";
  const AnchorPlan plan = plan_cudnn(library_, problem_, operands_, HeuristicMode::A);
  ASSERT_TRUE(plan.ok) << plan.why_not;
  ASSERT_EQ(plan.candidates.size(), 3u);
  EXPECT_EQ(plan.candidates[0].description.rfind("engine 11", 0), 0u);
  EXPECT_NE(plan.candidates[0].description.find("heuristic rank 1"), std::string::npos);
  EXPECT_EQ(plan.candidates[1].description.rfind("engine 13", 0), 0u);
  const CudnnPlanSummary summary = cudnn_plan_summary(plan);
  EXPECT_EQ(summary.heuristic_configs, 5);
  EXPECT_EQ(summary.tried, 5);
  EXPECT_EQ(summary.refused, 2);
  EXPECT_NE(summary.first_refusal.find("CUDNN_STATUS_NOT_SUPPORTED"), std::string::npos)
      << summary.first_refusal;
  EXPECT_NE(summary.first_refusal.find("engine 10 does not support"), std::string::npos)
      << "cudnnGetLastErrorString's text: " << summary.first_refusal;
  EXPECT_EQ(summary.workspace_bytes, 4u * 256u) << "the largest usable plan's";
  expect_every_candidate_correct(plan, "dgrad", nullptr);

  // Only the first max_candidates configs are tried.
  const AnchorPlan three = plan_cudnn(library_, problem_, operands_, HeuristicMode::A, 3);
  ASSERT_TRUE(three.ok) << three.why_not;
  EXPECT_EQ(three.candidates.size(), 1u);
  EXPECT_EQ(cudnn_plan_summary(three).tried, 3);
  EXPECT_EQ(cudnn_plan_summary(three).refused, 2);
}

TEST_F(CudnnAnchorOnFakes, NoPlanFinalizesSaysWhy) {
  configure_(2, 0b11u, 0);
  problem_.pass = "wgrad";
  const AnchorPlan plan = plan_cudnn(library_, problem_, operands_, HeuristicMode::B);
  EXPECT_FALSE(plan.ok);
  EXPECT_TRUE(plan.candidates.empty());
  EXPECT_NE(plan.why_not.find("offered 2 engine configs; none of the 2 tried"), std::string::npos)
      << plan.why_not;
  EXPECT_NE(plan.why_not.find("does not support this operation graph"), std::string::npos)
      << plan.why_not;
}

TEST_F(CudnnAnchorOnFakes, ReleasesHandleDescriptorsAndWorkspaceWithThePlan) {
  const int allocations = live_allocations_();
  {
    problem_.pass = "wgrad";
    AnchorPlan plan = plan_cudnn(library_, problem_, operands_, HeuristicMode::A);
    ASSERT_TRUE(plan.ok) << plan.why_not;
    EXPECT_EQ(cudnn_plan_summary(plan).workspace_bytes, 3u * 256u);
    EXPECT_EQ(live_allocations_(), allocations + 1) << "one workspace, the largest";
    EXPECT_EQ(live_handles_(), 1);
    EXPECT_GT(live_descriptors_(), 0);
    // A candidate kept after its plan keeps the state alive.
    const AnchorCandidate kept = plan.candidates.back();
    plan = AnchorPlan{};
    kept.enqueue(nullptr);
    EXPECT_EQ(live_handles_(), 1);
  }
  EXPECT_EQ(live_descriptors_(), 0);
  EXPECT_EQ(live_handles_(), 0);
  EXPECT_EQ(live_allocations_(), allocations);
}

TEST_F(CudnnAnchorOnFakes, AWorkspaceTheDriverCannotAllocateSaysSoAndReleasesEverything) {
  auto set_alloc_limit =
      reinterpret_cast<void (*)(size_t)>(dlsym(fake_cuda_, "fake_cuda_set_alloc_limit"));
  ASSERT_NE(set_alloc_limit, nullptr);
  set_alloc_limit(512); // the workspace needs 768 bytes
  problem_.pass = "fprop";
  const AnchorPlan plan = plan_cudnn(library_, problem_, operands_, HeuristicMode::A);
  set_alloc_limit(0);
  EXPECT_FALSE(plan.ok);
  EXPECT_TRUE(plan.candidates.empty());
  EXPECT_NE(plan.why_not.find("cuMemAlloc_v2"), std::string::npos) << plan.why_not;
  EXPECT_NE(plan.why_not.find("cuDNN workspace of 768 bytes"), std::string::npos) << plan.why_not;
  EXPECT_EQ(live_descriptors_(), 0);
  EXPECT_EQ(live_handles_(), 0);
}

TEST_F(CudnnAnchorOnFakes, AProblemItCannotDescribeIsRefusedWithoutCallingCudnn) {
  problem_.pass = "xgrad";
  const AnchorPlan plan = plan_cudnn(library_, problem_, operands_, HeuristicMode::A);
  EXPECT_FALSE(plan.ok);
  EXPECT_NE(plan.why_not.find("pass \"xgrad\""), std::string::npos) << plan.why_not;
  problem_.pass = "fprop";
  problem_.groups = 3;
  EXPECT_NE(plan_cudnn(library_, problem_, operands_, HeuristicMode::A).why_not.find("groups=3"),
            std::string::npos);
  EXPECT_EQ(log().find("cudnnCreate"), std::string::npos) << log();
}

TEST_F(CudnnAnchorOnFakes, OlderThanCudnn9IsRefused) {
  auto set_version =
      reinterpret_cast<void (*)(size_t)>(dlsym(fake_cudnn_, "fake_cudnn_set_version"));
  ASSERT_NE(set_version, nullptr);
  set_version(8907);
  const CudnnLibrary old = load_cudnn({TCJIT_FAKE_LIBCUDNN_SO9});
  set_version(91900);
  EXPECT_FALSE(old.loaded);
  EXPECT_NE(old.error.find("cuDNN 8.9.7"), std::string::npos) << old.error;
  EXPECT_NE(old.error.find("needs cuDNN 9"), std::string::npos) << old.error;
  EXPECT_EQ(library_.version, 91900u);
  EXPECT_EQ(cuda::vendor_version_text(cuda::VendorLibrary::cudnn,
                                      static_cast<long long>(library_.version)),
            "9.19.0");
}

TEST(CudnnLibraryMissing, SaysWhatWasTriedAndHowToGoOn) {
  const CudnnLibrary missing =
      load_cudnn({"/nonexistent/tcjit-test/libcudnn.so.9", "libcudnn_tcjit_absent.so.9"});
  EXPECT_FALSE(missing.loaded);
  EXPECT_NE(missing.error.find("cuDNN is not available"), std::string::npos) << missing.error;
  EXPECT_NE(missing.error.find("/nonexistent/tcjit-test/libcudnn.so.9"), std::string::npos);
  EXPECT_NE(missing.error.find("libcudnn_tcjit_absent.so.9"), std::string::npos);
  EXPECT_NE(missing.error.find("LD_LIBRARY_PATH"), std::string::npos);

  // A library that opens but is no cuDNN (the fake driver) is named with what it lacks.
  const CudnnLibrary not_cudnn = load_cudnn({TCJIT_FAKE_LIBCUDA_SO1});
  EXPECT_FALSE(not_cudnn.loaded);
  EXPECT_NE(not_cudnn.error.find("is not a usable cuDNN: it lacks cudnnGetVersion, "),
            std::string::npos)
      << not_cudnn.error;

  ConvProblem problem;
  problem.pass = "fprop";
  const AnchorPlan plan = plan_cudnn(missing, problem, {}, HeuristicMode::A);
  EXPECT_FALSE(plan.ok);
  EXPECT_EQ(plan.anchor, "cuDNN");
  EXPECT_EQ(plan.why_not, missing.error);
}

} // namespace
} // namespace tcjit::bench
