// The cuBLASLt anchor (bench/gpu_tool/cublaslt_anchor.h) over the fake cuBLASLt
// (tests/bench/fake_cublaslt.cpp, which computes D on host memory exactly as cuBLASLt documents
// its layouts) and the fake libcuda (tests/cuda, loaded as libcuda.so.1 so that the anchor's
// workspace comes from it). Every candidate's D is checked against a loop over the problem's own
// definition (A row-major, B column-major, D row-major, bias[n], GELU): a wrong transpose, leading
// dimension or batch stride in the anchor gives wrong numbers or a refused call.
#include "bench/gpu_tool/cublaslt_anchor.h"
#include "runtime/cuda/vendor_libraries.h"

#include "compiler/reference/activation.h"
#include "compiler/reference/numeric_convert.h"
#include "compiler/reference/random_fill.h"

#include <cublasLt.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <dlfcn.h>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using tcjit::DType;
using namespace tcjit::bench;

std::vector<std::string> lines_of(const std::string &text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
  }
  return lines;
}

template <class F> F symbol(void *library, const char *name) {
  return reinterpret_cast<F>(dlsym(library, name));
}

class CublasLtAnchor : public ::testing::Test {
protected:
  void SetUp() override {
    fake_cuda_ = dlopen(TCJIT_FAKE_LIBCUDA_SO1, RTLD_NOW | RTLD_GLOBAL);
    ASSERT_NE(fake_cuda_, nullptr) << dlerror();
    library_ = load_cublaslt({TCJIT_FAKE_CUBLASLT});
    ASSERT_TRUE(library_.loaded) << library_.error;
    fake_ = dlopen(TCJIT_FAKE_CUBLASLT, RTLD_NOW | RTLD_NOLOAD);
    ASSERT_NE(fake_, nullptr) << dlerror();
    call_log_ = symbol<const char *(*)()>(fake_, "fake_cublaslt_call_log");
    reset_log_ = symbol<void (*)()>(fake_, "fake_cublaslt_reset_call_log");
    set_results_ = symbol<void (*)(int)>(fake_, "fake_cublaslt_set_heuristic_results");
    fail_call_ = symbol<void (*)(const char *, int)>(fake_, "fake_cublaslt_fail_call");
    live_objects_ = symbol<int (*)()>(fake_, "fake_cublaslt_live_objects");
    cuda_log_ = symbol<const char *(*)()>(fake_cuda_, "fake_cuda_call_log");
    reset_cuda_log_ = symbol<void (*)()>(fake_cuda_, "fake_cuda_reset_call_log");
    live_allocations_ = symbol<int (*)()>(fake_cuda_, "fake_cuda_live_allocations");
    set_alloc_limit_ = symbol<void (*)(size_t)>(fake_cuda_, "fake_cuda_set_alloc_limit");
    ASSERT_TRUE(call_log_ && reset_log_ && set_results_ && fail_call_ && live_objects_ &&
                cuda_log_ && reset_cuda_log_ && live_allocations_ && set_alloc_limit_);
    set_results_(8);
    fail_call_(nullptr, CUBLAS_STATUS_SUCCESS);
    set_alloc_limit_(0);
  }
  void TearDown() override {
    if (fail_call_) {
      fail_call_(nullptr, CUBLAS_STATUS_SUCCESS);
      set_results_(8);
      set_alloc_limit_(0);
    }
  }

  void *fake_cuda_ = nullptr, *fake_ = nullptr;
  CublasLtLibrary library_;
  const char *(*call_log_)() = nullptr;
  void (*reset_log_)() = nullptr;
  void (*set_results_)(int) = nullptr;
  void (*fail_call_)(const char *, int) = nullptr;
  int (*live_objects_)() = nullptr;
  const char *(*cuda_log_)() = nullptr;
  void (*reset_cuda_log_)() = nullptr;
  int (*live_allocations_)() = nullptr;
  void (*set_alloc_limit_)(size_t) = nullptr;
};

// A problem's operands in host memory (the fake libcuda's device memory is host memory, so the
// fake cuBLASLt reads these addresses as they are), filled with seeded random values.
struct HostOperands {
  DType in, out;
  std::vector<unsigned char> a, b, bias, d;
  GemmOperands addresses() {
    GemmOperands ops;
    ops.a = reinterpret_cast<uint64_t>(a.data());
    ops.b = reinterpret_cast<uint64_t>(b.data());
    ops.bias = bias.empty() ? 0 : reinterpret_cast<uint64_t>(bias.data());
    ops.d = reinterpret_cast<uint64_t>(d.data());
    return ops;
  }
};

DType input_dtype(const std::string &dtype) {
  return dtype == "f16"    ? DType::f16
         : dtype == "bf16" ? DType::bf16
         : dtype == "s8"   ? DType::s8
                           : DType::f32;
}

HostOperands make_operands(const GemmProblem &p) {
  HostOperands h;
  h.in = input_dtype(p.dtype);
  h.out = p.dtype == "s8" ? DType::s32 : h.in;
  const auto bytes = [](DType t, int64_t count) {
    return static_cast<size_t>(count * tcjit::dtype_storage_bytes(t));
  };
  h.a.resize(bytes(h.in, p.batch * p.m * p.k));
  h.b.resize(bytes(h.in, p.batch * p.k * p.n));
  h.d.resize(bytes(h.out, p.batch * p.m * p.n));
  tcjit::fill_random(h.in, h.a.data(), p.batch * p.m * p.k, 11);
  tcjit::fill_random(h.in, h.b.data(), p.batch * p.k * p.n, 12);
  if (p.bias_gelu) {
    h.bias.resize(bytes(h.out, p.n));
    tcjit::fill_random(h.out, h.bias.data(), p.n, 13);
  }
  return h;
}

// An input element as the math sees it (tf32: the f32 value rounded to TF32).
double input(const HostOperands &h, const std::string &dtype, const std::vector<unsigned char> &v,
             int64_t index) {
  const double value = tcjit::read_element(h.in, v.data(), index);
  return dtype == "tf32" ? tcjit::round_to_tf32(static_cast<float>(value)) : value;
}

// D = gelu_tanh(A x B + bias) from the problem's definition, in double, and how far the device's
// answer may be from it: the output's rounding (f16 2^-11, bf16 2^-8, f32 2^-24 of |D|), f32
// accumulation (k 2^-23 of the sum of |a b|) and GELU's float evaluation (1e-6); s8 is exact.
void expect_matches_reference(const GemmProblem &p, const HostOperands &h, const std::string &who) {
  const double output_rounding = p.dtype == "f16"    ? std::ldexp(1.0, -11)
                                 : p.dtype == "bf16" ? std::ldexp(1.0, -8)
                                                     : std::ldexp(1.0, -24);
  int64_t wrong = 0;
  for (int64_t batch = 0; batch < p.batch; ++batch) {
    for (int64_t i = 0; i < p.m; ++i) {
      for (int64_t j = 0; j < p.n; ++j) {
        double sum = 0, magnitude = 0;
        for (int64_t kk = 0; kk < p.k; ++kk) {
          const double x = input(h, p.dtype, h.a, batch * p.m * p.k + i * p.k + kk); // row-major
          const double y = input(h, p.dtype, h.b, batch * p.k * p.n + j * p.k + kk); // col-major
          sum += x * y;
          magnitude += std::fabs(x * y);
        }
        if (p.bias_gelu) {
          sum = tcjit::apply_activation(tcjit::Activation::gelu_tanh,
                                        sum + tcjit::read_element(h.out, h.bias.data(), j));
        }
        const double got = tcjit::read_element(h.out, h.d.data(), (batch * p.m + i) * p.n + j);
        const double tolerance =
            p.dtype == "s8" ? 0
                            : output_rounding * std::fabs(sum) +
                                  static_cast<double>(p.k) * std::ldexp(1.0, -23) * magnitude +
                                  (p.bias_gelu ? 1e-6 : 0);
        if (!(std::fabs(got - sum) <= tolerance) && ++wrong <= 3) {
          ADD_FAILURE() << who << ": D[" << batch << "][" << i << "][" << j << "] = " << got
                        << ", expected " << sum << " (tolerance " << tolerance << ")";
        }
      }
    }
  }
  EXPECT_EQ(wrong, 0) << who << ": elements out of tolerance";
}

GemmProblem problem(const std::string &dtype, bool bias_gelu, int64_t batch) {
  GemmProblem p;
  p.name = "test";
  p.m = 12; // m, n and k differ, so that a transposed operand is refused or gives wrong numbers
  p.n = 20;
  p.k = 16;
  p.batch = batch;
  p.dtype = dtype;
  p.bias_gelu = bias_gelu;
  return p;
}

TEST_F(CublasLtAnchor, EveryCandidateComputesTheProblemForEachDtypeEpilogueAndBatch) {
  EXPECT_EQ(library_.version, 130100u);
  EXPECT_EQ(tcjit::cuda::vendor_version_text(tcjit::cuda::VendorLibrary::cublaslt,
                                             static_cast<long long>(library_.version)),
            "13.1.0");
  for (const std::string dtype : {"f16", "bf16", "tf32", "s8"}) {
    for (const bool bias_gelu : {false, true}) {
      if (dtype == "s8" && bias_gelu) {
        continue; // refused, see UnsupportedCombinationsSayWhy
      }
      for (const int64_t batch : {1, 3}) {
        const GemmProblem p = problem(dtype, bias_gelu, batch);
        HostOperands h = make_operands(p);
        const AnchorPlan plan = plan_cublaslt(library_, p, h.addresses());
        const std::string what =
            dtype + (bias_gelu ? " bias+gelu" : "") + " batch " + std::to_string(batch);
        ASSERT_TRUE(plan.ok) << what << ": " << plan.why_not;
        EXPECT_EQ(plan.anchor, "cuBLASLt");
        EXPECT_EQ(plan.variant, "heuristic");
        ASSERT_EQ(plan.candidates.size(), 8u) << what;
        for (const AnchorCandidate &candidate : plan.candidates) {
          std::fill(h.d.begin(), h.d.end(), 0xff); // NaN / -1: nothing left from a previous run
          candidate.enqueue(nullptr);
          expect_matches_reference(p, h, what + " candidate " + std::to_string(candidate.rank));
        }
      }
    }
  }
}

TEST_F(CublasLtAnchor, CallSequenceFromHandleToDestroyOnTheGivenStream) {
  const GemmProblem p = problem("f16", true, 2);
  HostOperands h = make_operands(p);
  const int allocations_before = live_allocations_();
  reset_log_();
  reset_cuda_log_();
  {
    const AnchorPlan plan = plan_cublaslt(library_, p, h.addresses());
    ASSERT_TRUE(plan.ok) << plan.why_not;
    EXPECT_EQ(live_allocations_(), allocations_before + 1) << "the workspace";
    plan.candidates.at(0).enqueue(reinterpret_cast<void *>(0x5eed));
  }
  EXPECT_EQ(live_objects_(), 0) << "every handle and descriptor destroyed";
  EXPECT_EQ(live_allocations_(), allocations_before) << "the workspace freed";

  std::vector<std::string> calls, attributes;
  for (const std::string &line : lines_of(call_log_())) {
    (line.find("Attribute ") != std::string::npos ? attributes : calls).push_back(line);
  }
  const std::vector<std::string> expected = {"cublasLtCreate",
                                             "cublasLtMatmulDescCreate",
                                             "cublasLtMatrixLayoutCreate",
                                             "cublasLtMatrixLayoutCreate",
                                             "cublasLtMatrixLayoutCreate",
                                             "cublasLtMatmulPreferenceCreate",
                                             "cublasLtMatmulAlgoGetHeuristic",
                                             "cublasLtMatmul stream=0x5eed",
                                             "cublasLtMatmulPreferenceDestroy",
                                             "cublasLtMatrixLayoutDestroy",
                                             "cublasLtMatrixLayoutDestroy",
                                             "cublasLtMatrixLayoutDestroy",
                                             "cublasLtMatmulDescDestroy",
                                             "cublasLtDestroy"};
  EXPECT_EQ(calls, expected) << call_log_();
  const auto has = [&](const std::string &line) {
    return std::find(attributes.begin(), attributes.end(), line) != attributes.end();
  };
  for (const auto attribute :
       {CUBLASLT_MATMUL_DESC_TRANSA, CUBLASLT_MATMUL_DESC_TRANSB, CUBLASLT_MATMUL_DESC_EPILOGUE,
        CUBLASLT_MATMUL_DESC_BIAS_POINTER, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE}) {
    EXPECT_TRUE(has("cublasLtMatmulDescSetAttribute " + std::to_string(attribute))) << attribute;
  }
  for (const auto attribute :
       {CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET}) {
    EXPECT_TRUE(has("cublasLtMatrixLayoutSetAttribute " + std::to_string(attribute)));
  }
  EXPECT_TRUE(has("cublasLtMatmulPreferenceSetAttribute " +
                  std::to_string(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES)));
  EXPECT_TRUE(
      has("cublasLtMatmulAlgoConfigGetAttribute " + std::to_string(CUBLASLT_ALGO_CONFIG_TILE_ID)));

  const std::vector<std::string> driver = lines_of(cuda_log_());
  EXPECT_EQ(std::count(driver.begin(), driver.end(), "cuMemAlloc_v2"), 1) << cuda_log_();
  EXPECT_EQ(std::count(driver.begin(), driver.end(), "cuMemFree_v2"), 1) << cuda_log_();
}

TEST_F(CublasLtAnchor, CandidatesFollowTheHeuristicUpToTheAskedNumber) {
  const GemmProblem p = problem("bf16", false, 1);
  HostOperands h = make_operands(p);
  set_results_(3);
  AnchorPlan plan = plan_cublaslt(library_, p, h.addresses());
  ASSERT_TRUE(plan.ok) << plan.why_not;
  ASSERT_EQ(plan.candidates.size(), 3u);
  for (int rank = 0; rank < 3; ++rank) {
    EXPECT_EQ(plan.candidates[static_cast<size_t>(rank)].rank, rank);
  }
  // The fake's first algorithm: id 21, tile CUBLASLT_MATMUL_TILE_128x128 (20), stages
  // CUBLASLT_MATMUL_STAGES_64x3 (15), no split-k, 1 MiB of workspace.
  EXPECT_EQ(plan.candidates[0].description,
            "algo 21 tile 20 stages 15 split-k 1 reduction 0 swizzle 0 custom 0 workspace 1048576 "
            "waves 0.50");
  EXPECT_NE(plan.candidates[1].description, plan.candidates[0].description);

  set_results_(8);
  plan = plan_cublaslt(library_, p, h.addresses(), 2);
  ASSERT_TRUE(plan.ok) << plan.why_not;
  EXPECT_EQ(plan.candidates.size(), 2u);

  set_results_(0);
  plan = plan_cublaslt(library_, p, h.addresses());
  EXPECT_FALSE(plan.ok);
  EXPECT_TRUE(plan.candidates.empty());
  EXPECT_NE(plan.why_not.find("returned no usable algorithm"), std::string::npos) << plan.why_not;
  EXPECT_EQ(live_objects_(), 0) << "a refused plan releases what it created";
}

TEST_F(CublasLtAnchor, MissingLibrarySaysWhatWasTriedAndHowToGoOn) {
  const CublasLtLibrary missing =
      load_cublaslt({"/nonexistent/libcublasLt.so.13", "libcublasLt-not-here.so"});
  EXPECT_FALSE(missing.loaded);
  EXPECT_NE(missing.error.find("cuBLASLt"), std::string::npos) << missing.error;
  EXPECT_NE(missing.error.find("/nonexistent/libcublasLt.so.13"), std::string::npos);
  EXPECT_NE(missing.error.find("libcublasLt-not-here.so"), std::string::npos);
  EXPECT_NE(missing.error.find("LD_LIBRARY_PATH"), std::string::npos);

  const GemmProblem p = problem("f16", false, 1);
  HostOperands h = make_operands(p);
  const AnchorPlan plan = plan_cublaslt(missing, p, h.addresses());
  EXPECT_FALSE(plan.ok);
  EXPECT_EQ(plan.anchor, "cuBLASLt");
  EXPECT_EQ(plan.why_not, missing.error);

  // A library that opens but is no cuBLASLt (the fake libcuda) is named with what it lacks.
  const CublasLtLibrary wrong = load_cublaslt({TCJIT_FAKE_LIBCUDA});
  EXPECT_FALSE(wrong.loaded);
  EXPECT_NE(wrong.error.find("does not export"), std::string::npos) << wrong.error;
  EXPECT_NE(wrong.error.find("cublasLtMatmul"), std::string::npos) << wrong.error;
}

TEST_F(CublasLtAnchor, UnsupportedCombinationsSayWhyWithoutAskingCublasLt) {
  const auto why_not = [&](GemmProblem p) {
    HostOperands h = make_operands(p);
    reset_log_();
    const AnchorPlan plan = plan_cublaslt(library_, p, h.addresses());
    EXPECT_FALSE(plan.ok);
    EXPECT_TRUE(plan.candidates.empty());
    EXPECT_STREQ(call_log_(), "") << "cuBLASLt is not asked";
    return plan.why_not;
  };
  std::string reason = why_not(problem("s8", true, 1));
  EXPECT_NE(reason.find("int8"), std::string::npos) << reason;
  EXPECT_NE(reason.find("bias+GELU"), std::string::npos) << reason;

  GemmProblem odd = problem("s8", false, 1);
  odd.n = 18;
  reason = why_not(odd);
  EXPECT_NE(reason.find("multiples of 4"), std::string::npos) << reason;
  EXPECT_NE(reason.find("n=18"), std::string::npos) << reason;

  reason = why_not(problem("f64", false, 1));
  EXPECT_NE(reason.find("'f64'"), std::string::npos) << reason;

  GemmProblem empty = problem("f16", false, 1);
  empty.k = 0;
  reason = why_not(empty);
  EXPECT_NE(reason.find("m, n, k and batch"), std::string::npos) << reason;
}

TEST_F(CublasLtAnchor, FailuresCarryTheStatusOrDriverErrorName) {
  const GemmProblem p = problem("tf32", false, 1);
  HostOperands h = make_operands(p);
  const AnchorPlan plan = plan_cublaslt(library_, p, h.addresses());
  ASSERT_TRUE(plan.ok) << plan.why_not;
  fail_call_("cublasLtMatmul", CUBLAS_STATUS_EXECUTION_FAILED);
  try {
    plan.candidates.at(0).enqueue(nullptr);
    ADD_FAILURE() << "a refused cublasLtMatmul must throw";
  } catch (const std::runtime_error &error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("cublasLtMatmul failed (CUBLAS_STATUS_EXECUTION_FAILED"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("algo 21"), std::string::npos) << message;
  }
  fail_call_(nullptr, CUBLAS_STATUS_SUCCESS);

  set_alloc_limit_(size_t{1} << 20); // below the 32 MiB workspace
  const AnchorPlan no_workspace = plan_cublaslt(library_, p, h.addresses());
  EXPECT_FALSE(no_workspace.ok);
  EXPECT_NE(no_workspace.why_not.find("cuMemAlloc_v2 failed (CUDA_ERROR_OUT_OF_MEMORY"),
            std::string::npos)
      << no_workspace.why_not;
  EXPECT_NE(no_workspace.why_not.find("workspace"), std::string::npos) << no_workspace.why_not;
}

TEST_F(CublasLtAnchor, AFailingCallIsNamedAndEverythingCreatedIsReleased) {
  const GemmProblem p = problem("f16", true, 2);
  HostOperands h = make_operands(p);
  const int allocations_before = live_allocations_();
  for (const char *call :
       {"cublasLtCreate", "cublasLtMatmulDescCreate", "cublasLtMatmulDescSetAttribute",
        "cublasLtMatrixLayoutCreate", "cublasLtMatrixLayoutSetAttribute",
        "cublasLtMatmulPreferenceCreate", "cublasLtMatmulPreferenceSetAttribute",
        "cublasLtMatmulAlgoGetHeuristic", "cublasLtMatmulAlgoConfigGetAttribute"}) {
    fail_call_(call, CUBLAS_STATUS_INTERNAL_ERROR);
    const AnchorPlan plan = plan_cublaslt(library_, p, h.addresses());
    EXPECT_FALSE(plan.ok) << call;
    EXPECT_NE(plan.why_not.find(std::string(call) + " failed (CUBLAS_STATUS_INTERNAL_ERROR"),
              std::string::npos)
        << plan.why_not;
    EXPECT_NE(plan.why_not.find("GEMM test (m=12 n=20 k=16 batch=2 f16 bias+gelu)"),
              std::string::npos)
        << plan.why_not;
    EXPECT_EQ(live_objects_(), 0) << call;
    EXPECT_EQ(live_allocations_(), allocations_before) << call;
  }
  // No algorithm for the configuration: said as such.
  fail_call_("cublasLtMatmulAlgoGetHeuristic", CUBLAS_STATUS_NOT_SUPPORTED);
  const AnchorPlan plan = plan_cublaslt(library_, p, h.addresses());
  EXPECT_NE(plan.why_not.find("heuristic offers no algorithm"), std::string::npos) << plan.why_not;
  EXPECT_NE(plan.why_not.find("CUBLAS_STATUS_NOT_SUPPORTED"), std::string::npos) << plan.why_not;
}

// The fake itself reads layouts as cuBLASLt documents them, checked on a product worked out by
// hand: without this, a fake that shared the anchor's misreading would pass the tests above.
TEST_F(CublasLtAnchor, FakeReadsColumnAndRowOrderAsDocumented) {
  const auto create = symbol<decltype(&cublasLtCreate)>(fake_, "cublasLtCreate");
  const auto destroy = symbol<decltype(&cublasLtDestroy)>(fake_, "cublasLtDestroy");
  const auto desc_create =
      symbol<decltype(&cublasLtMatmulDescCreate)>(fake_, "cublasLtMatmulDescCreate");
  const auto desc_set =
      symbol<decltype(&cublasLtMatmulDescSetAttribute)>(fake_, "cublasLtMatmulDescSetAttribute");
  const auto desc_destroy =
      symbol<decltype(&cublasLtMatmulDescDestroy)>(fake_, "cublasLtMatmulDescDestroy");
  const auto layout_create =
      symbol<decltype(&cublasLtMatrixLayoutCreate)>(fake_, "cublasLtMatrixLayoutCreate");
  const auto layout_set = symbol<decltype(&cublasLtMatrixLayoutSetAttribute)>(
      fake_, "cublasLtMatrixLayoutSetAttribute");
  const auto layout_destroy =
      symbol<decltype(&cublasLtMatrixLayoutDestroy)>(fake_, "cublasLtMatrixLayoutDestroy");
  const auto matmul = symbol<decltype(&cublasLtMatmul)>(fake_, "cublasLtMatmul");
  ASSERT_TRUE(create && destroy && desc_create && desc_set && desc_destroy && layout_create &&
              layout_set && layout_destroy && matmul);

  // A = [1 2 3; 4 5 6] (2 x 3) stored column-major, B = [1 0; 0 1; 1 1] (3 x 2) stored row-major,
  // D = A B = [4 5; 10 11] column-major.
  const float a[] = {1, 4, 2, 5, 3, 6};
  const float b[] = {1, 0, 0, 1, 1, 1};
  float d[4] = {};
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a_layout = nullptr, b_layout = nullptr, d_layout = nullptr;
  ASSERT_EQ(create(&handle), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(desc_create(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(layout_create(&a_layout, CUDA_R_32F, 2, 3, 2), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(layout_create(&b_layout, CUDA_R_32F, 3, 2, 2), CUBLAS_STATUS_SUCCESS);
  ASSERT_EQ(layout_create(&d_layout, CUDA_R_32F, 2, 2, 2), CUBLAS_STATUS_SUCCESS);
  const int32_t row = CUBLASLT_ORDER_ROW;
  ASSERT_EQ(layout_set(b_layout, CUBLASLT_MATRIX_LAYOUT_ORDER, &row, sizeof(row)),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(layout_set(b_layout, CUBLASLT_MATRIX_LAYOUT_ORDER, &row, 2),
            CUBLAS_STATUS_INVALID_VALUE)
      << "a size that is not the attribute's";
  const float alpha = 1, beta = 0;
  ASSERT_EQ(matmul(handle, desc, &alpha, a, a_layout, b, b_layout, &beta, d, d_layout, d, d_layout,
                   nullptr, nullptr, 0, nullptr),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(std::vector<float>(d, d + 4), (std::vector<float>{4, 10, 5, 11}));
  // op(A) = A^T is 3 x 2: it no longer matches D's 2 rows.
  const int32_t transpose = CUBLAS_OP_T;
  ASSERT_EQ(desc_set(desc, CUBLASLT_MATMUL_DESC_TRANSA, &transpose, sizeof(transpose)),
            CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(matmul(handle, desc, &alpha, a, a_layout, b, b_layout, &beta, d, d_layout, d, d_layout,
                   nullptr, nullptr, 0, nullptr),
            CUBLAS_STATUS_INVALID_VALUE);
  EXPECT_EQ(matmul(nullptr, desc, &alpha, a, a_layout, b, b_layout, &beta, d, d_layout, d, d_layout,
                   nullptr, nullptr, 0, nullptr),
            CUBLAS_STATUS_NOT_INITIALIZED);
  for (cublasLtMatrixLayout_t layout : {a_layout, b_layout, d_layout}) {
    EXPECT_EQ(layout_destroy(layout), CUBLAS_STATUS_SUCCESS);
  }
  EXPECT_EQ(desc_destroy(desc), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(destroy(handle), CUBLAS_STATUS_SUCCESS);
  EXPECT_EQ(destroy(handle), CUBLAS_STATUS_NOT_INITIALIZED) << "a destroyed handle";
}

} // namespace
