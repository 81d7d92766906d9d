#include "bench/gpu_tool/cublaslt_anchor.h"

#include "runtime/cuda/cuda_driver.h"
#include "support/shared_library.h"

#include <cublasLt.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string_view>

namespace tcjit::bench {

// X(name): every entry point the anchor calls; the library is refused when one is missing.
#define TCJIT_CUBLASLT_REQUIRED_SYMBOLS(X)                                                         \
  X(cublasLtGetVersion)                                                                            \
  X(cublasLtCreate)                                                                                \
  X(cublasLtDestroy)                                                                               \
  X(cublasLtMatmulDescCreate)                                                                      \
  X(cublasLtMatmulDescDestroy)                                                                     \
  X(cublasLtMatmulDescSetAttribute)                                                                \
  X(cublasLtMatrixLayoutCreate)                                                                    \
  X(cublasLtMatrixLayoutDestroy)                                                                   \
  X(cublasLtMatrixLayoutSetAttribute)                                                              \
  X(cublasLtMatmulPreferenceCreate)                                                                \
  X(cublasLtMatmulPreferenceDestroy)                                                               \
  X(cublasLtMatmulPreferenceSetAttribute)                                                          \
  X(cublasLtMatmulAlgoGetHeuristic)                                                                \
  X(cublasLtMatmulAlgoConfigGetAttribute)                                                          \
  X(cublasLtMatmul)

// X(name): used when present (a message then carries the library's own words for a status).
#define TCJIT_CUBLASLT_OPTIONAL_SYMBOLS(X) X(cublasLtGetStatusString)

struct CublasLtApi {
#define TCJIT_CUBLASLT_MEMBER(name) decltype(&::name) name = nullptr;
  TCJIT_CUBLASLT_REQUIRED_SYMBOLS(TCJIT_CUBLASLT_MEMBER)
  TCJIT_CUBLASLT_OPTIONAL_SYMBOLS(TCJIT_CUBLASLT_MEMBER)
#undef TCJIT_CUBLASLT_MEMBER
};

namespace {

// The enumerator's name of a cublasStatus_t (cublas_api.h), whatever the library exports.
std::string status_name(cublasStatus_t status) {
  switch (status) {
  case CUBLAS_STATUS_SUCCESS: return "CUBLAS_STATUS_SUCCESS";
  case CUBLAS_STATUS_NOT_INITIALIZED: return "CUBLAS_STATUS_NOT_INITIALIZED";
  case CUBLAS_STATUS_ALLOC_FAILED: return "CUBLAS_STATUS_ALLOC_FAILED";
  case CUBLAS_STATUS_INVALID_VALUE: return "CUBLAS_STATUS_INVALID_VALUE";
  case CUBLAS_STATUS_ARCH_MISMATCH: return "CUBLAS_STATUS_ARCH_MISMATCH";
  case CUBLAS_STATUS_MAPPING_ERROR: return "CUBLAS_STATUS_MAPPING_ERROR";
  case CUBLAS_STATUS_EXECUTION_FAILED: return "CUBLAS_STATUS_EXECUTION_FAILED";
  case CUBLAS_STATUS_INTERNAL_ERROR: return "CUBLAS_STATUS_INTERNAL_ERROR";
  case CUBLAS_STATUS_NOT_SUPPORTED: return "CUBLAS_STATUS_NOT_SUPPORTED";
  case CUBLAS_STATUS_LICENSE_ERROR: return "CUBLAS_STATUS_LICENSE_ERROR";
  }
  return "cublasStatus_t " + std::to_string(static_cast<int>(status));
}

// "CUBLAS_STATUS_NOT_SUPPORTED: the functionality requested is not supported" (the library's
// words when it has cublasLtGetStatusString).
std::string describe_status(const CublasLtApi &api, cublasStatus_t status) {
  std::string text = status_name(status);
  if (api.cublasLtGetStatusString) {
    if (const char *words = api.cublasLtGetStatusString(status); words && *words) {
      text += std::string(": ") + words;
    }
  }
  return text;
}

// Thrown while planning; plan_cublaslt turns it into why_not.
struct PlanError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// How one of problems.h's dtypes is asked of cuBLASLt (the cublasLtMatmul data-type table):
// f16/bf16 in and out with f32 accumulation and f32 alpha/beta; tf32 is f32 data with
// CUBLAS_COMPUTE_32F_FAST_TF32; s8 in, s32 out, CUBLAS_COMPUTE_32I with s32 alpha/beta.
struct DtypeMapping {
  cudaDataType ab_type, d_type;
  cublasComputeType_t compute;
  cudaDataType scale_type;
  int64_t ab_bytes, d_bytes;
};

std::optional<DtypeMapping> dtype_mapping(const std::string &dtype) {
  if (dtype == "f16") {
    return DtypeMapping{CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F, 2, 2};
  }
  if (dtype == "bf16") {
    return DtypeMapping{CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, 2, 2};
  }
  if (dtype == "tf32") {
    return DtypeMapping{CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F, 4, 4};
  }
  if (dtype == "s8") {
    return DtypeMapping{CUDA_R_8I, CUDA_R_32I, CUBLAS_COMPUTE_32I, CUDA_R_32I, 1, 4};
  }
  return std::nullopt;
}

std::string problem_text(const GemmProblem &p) {
  std::string text = "GEMM";
  if (!p.name.empty()) {
    text += " " + p.name;
  }
  text += " (m=" + std::to_string(p.m) + " n=" + std::to_string(p.n) + " k=" + std::to_string(p.k) +
          " batch=" + std::to_string(p.batch) + " " + p.dtype + (p.bias_gelu ? " bias+gelu)" : ")");
  return text;
}

// Why cuBLASLt is not asked at all (empty when it can be).
std::string unsupported_reason(const GemmProblem &p, const GemmOperands &ops, int max_candidates) {
  if (!dtype_mapping(p.dtype)) {
    return "the cuBLASLt anchor has no mapping for dtype '" + p.dtype +
           "' (it races f16, bf16, tf32 and s8)";
  }
  if (p.m < 1 || p.n < 1 || p.k < 1 || p.batch < 1 || p.m > INT32_MAX || p.n > INT32_MAX ||
      p.k > INT32_MAX || p.batch > INT32_MAX) {
    return "cuBLASLt takes m, n, k and batch from 1 to 2^31-1";
  }
  if (max_candidates < 1) {
    return "asked for " + std::to_string(max_candidates) + " candidates (at least 1)";
  }
  if (ops.a == 0 || ops.b == 0 || ops.d == 0 || (p.bias_gelu && ops.bias == 0)) {
    return "an operand's device address is null (a, b, d" +
           std::string(p.bias_gelu ? ", bias)" : ")");
  }
  if (p.dtype == "s8") {
    // cublasLtMatmul, IMMA kernels: only CUBLAS_COMPUTE_32I's own epilogues exist, and those
    // (bias, ReLU) only with an s8 D and f32 scale/bias; with a regular (column) ordering only
    // "TN" is offered, with cuBLAS's m and k, the leading dimensions of A, B, C multiples of 4
    // and the pointers 4-byte aligned.
    if (p.bias_gelu) {
      return "cuBLASLt has no int8 GEMM with s32 output and a bias+GELU epilogue (its IMMA "
             "epilogues, bias and ReLU, need an s8 D with an f32 scale and bias)";
    }
    if (p.n % 4 != 0 || p.k % 4 != 0) {
      return "cuBLASLt's int8 GEMM in column order needs n and k to be multiples of 4 (cuBLAS's "
             "m and k, and the leading dimensions k and n); here n=" +
             std::to_string(p.n) + " k=" + std::to_string(p.k);
    }
    if (ops.a % 4 != 0 || ops.b % 4 != 0 || ops.d % 4 != 0) {
      return "cuBLASLt's int8 GEMM needs 4-byte aligned A, B and D";
    }
  }
  return {};
}

// The largest power of two (at most 256, cuBLASLt's default preference) dividing every matrix
// address of a batch: the base address and the batch stride in bytes.
uint32_t alignment_of(uint64_t address, uint64_t stride_bytes, int64_t batch) {
  uint64_t combined = address | (batch > 1 ? stride_bytes : 0) | 256;
  return static_cast<uint32_t>(combined & (~combined + 1));
}

// Handles, descriptors and workspace of one plan, released in reverse order when the last
// candidate (or the plan) lets go of them. cuBLASLt's roles: a = our B, b = our A (see below).
struct PlanState {
  std::shared_ptr<const CublasLtApi> api;
  std::shared_ptr<const cuda::CudaDriver> driver;
  cublasLtHandle_t handle = nullptr;
  cublasLtMatmulDesc_t matmul = nullptr;
  cublasLtMatrixLayout_t a_layout = nullptr, b_layout = nullptr, d_layout = nullptr;
  cublasLtMatmulPreference_t preference = nullptr;
  CUdeviceptr workspace = 0;
  const void *a = nullptr, *b = nullptr, *bias = nullptr;
  void *d = nullptr;
  bool integer_scale = false;
  float alpha_f32 = 1.0f, beta_f32 = 0.0f;
  int32_t alpha_s32 = 1, beta_s32 = 0;
  std::string problem;

  PlanState() = default;
  PlanState(const PlanState &) = delete;
  PlanState &operator=(const PlanState &) = delete;
  // Statuses of the destroy calls cannot be reported from here; each is called once on what
  // was created.
  ~PlanState() {
    if (preference) {
      api->cublasLtMatmulPreferenceDestroy(preference);
    }
    for (cublasLtMatrixLayout_t layout : {d_layout, b_layout, a_layout}) {
      if (layout) {
        api->cublasLtMatrixLayoutDestroy(layout);
      }
    }
    if (matmul) {
      api->cublasLtMatmulDescDestroy(matmul);
    }
    if (handle) {
      api->cublasLtDestroy(handle);
    }
    if (workspace) {
      driver->cuMemFree_v2(workspace);
    }
  }

  void check(cublasStatus_t status, std::string_view call, std::string_view what) const {
    if (status != CUBLAS_STATUS_SUCCESS) {
      throw PlanError(std::string(call) + " failed (" + describe_status(*api, status) + ") " +
                      std::string(what) + ", for " + problem);
    }
  }
  template <class T>
  void set_matmul(cublasLtMatmulDescAttributes_t attribute, const T &value, const char *what) {
    check(api->cublasLtMatmulDescSetAttribute(matmul, attribute, &value, sizeof(value)),
          "cublasLtMatmulDescSetAttribute", what);
  }
  template <class T>
  void set_preference(cublasLtMatmulPreferenceAttributes_t attribute, const T &value,
                      const char *what) {
    check(api->cublasLtMatmulPreferenceSetAttribute(preference, attribute, &value, sizeof(value)),
          "cublasLtMatmulPreferenceSetAttribute", what);
  }
  // A column-major (CUBLASLT_ORDER_COL, the default order) rows x cols matrix, `batch` of them
  // `stride` elements apart.
  cublasLtMatrixLayout_t layout(cudaDataType type, int64_t rows, int64_t cols, int64_t ld,
                                int64_t batch, int64_t stride, const char *what) {
    cublasLtMatrixLayout_t created = nullptr;
    check(api->cublasLtMatrixLayoutCreate(&created, type, static_cast<uint64_t>(rows),
                                          static_cast<uint64_t>(cols), ld),
          "cublasLtMatrixLayoutCreate", what);
    if (batch > 1) {
      const int32_t count = static_cast<int32_t>(batch);
      const cublasStatus_t counted = api->cublasLtMatrixLayoutSetAttribute(
          created, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count));
      const cublasStatus_t strided =
          counted != CUBLAS_STATUS_SUCCESS
              ? counted
              : api->cublasLtMatrixLayoutSetAttribute(
                    created, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof(stride));
      if (strided != CUBLAS_STATUS_SUCCESS) {
        api->cublasLtMatrixLayoutDestroy(created);
        check(strided, "cublasLtMatrixLayoutSetAttribute", what);
      }
    }
    return created;
  }
  template <class T>
  T algo_config(const cublasLtMatmulAlgo_t &algo, cublasLtMatmulAlgoConfigAttributes_t attribute,
                const char *what) const {
    T value{};
    size_t written = 0;
    check(api->cublasLtMatmulAlgoConfigGetAttribute(&algo, attribute, &value, sizeof(value),
                                                    &written),
          "cublasLtMatmulAlgoConfigGetAttribute", what);
    return value;
  }
};

// The matmul descriptor, layouts and heuristic preference of `p`.
//
// cuBLASLt is column-major: a layout is rows x cols with ld the distance between columns, and it
// computes D = op(A) op(B) with D of rows x cols. Our D is row-major m x n, which in memory is the
// column-major n x m matrix D^T (ld n). D^T = B^T A^T, so cuBLAS's product is taken with
//   cuBLAS A := our B buffer. Column-major k x n with ld k is exactly how our B is stored (n
//               columns of k); op = T makes it B^T, n x k.
//   cuBLAS B := our A buffer. Row-major m x k is column-major k x m with ld k, i.e. A^T already;
//               op = N.
//   cuBLAS D := our D buffer, column-major n x m with ld n (D^T).
// cuBLAS's (m, n, k) are therefore our (n, m, k): "TN", the one form int8 IMMA kernels take in
// column order. The bias of the epilogue runs along the rows of cuBLAS's D, n of them: our bias[n],
// one per column of our D, broadcast over the m rows (and, with a bias batch stride of 0, over the
// batch). D stays in CUBLASLT_ORDER_COL: cuBLASLt's bias and GELU epilogues refuse a row-order D.
void describe_problem(PlanState &s, const GemmProblem &p, const DtypeMapping &t) {
  s.check(s.api->cublasLtMatmulDescCreate(&s.matmul, t.compute, t.scale_type),
          "cublasLtMatmulDescCreate", "creating the matmul descriptor");
  s.set_matmul(CUBLASLT_MATMUL_DESC_TRANSA, int32_t{CUBLAS_OP_T}, "setting TRANSA");
  s.set_matmul(CUBLASLT_MATMUL_DESC_TRANSB, int32_t{CUBLAS_OP_N}, "setting TRANSB");
  if (p.bias_gelu) {
    s.set_matmul(CUBLASLT_MATMUL_DESC_EPILOGUE, uint32_t{CUBLASLT_EPILOGUE_GELU_BIAS},
                 "setting the GELU_BIAS epilogue");
    s.set_matmul(CUBLASLT_MATMUL_DESC_BIAS_POINTER, s.bias, "setting the bias pointer");
    // The bias has D's type (the default for every non-IMMA kernel), said explicitly.
    s.set_matmul(CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE, static_cast<int32_t>(t.d_type),
                 "setting the bias data type");
  }
  s.a_layout = s.layout(t.ab_type, p.k, p.n, p.k, p.batch, p.k * p.n, "for A (our B)");
  s.b_layout = s.layout(t.ab_type, p.k, p.m, p.k, p.batch, p.m * p.k, "for B (our A)");
  s.d_layout = s.layout(t.d_type, p.n, p.m, p.n, p.batch, p.m * p.n, "for C and D");

  s.check(s.api->cublasLtMatmulPreferenceCreate(&s.preference), "cublasLtMatmulPreferenceCreate",
          "creating the heuristic preference");
  s.set_preference(CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, uint64_t{cublaslt_workspace_bytes},
                   "setting the workspace size");
  const auto address = [](const void *pointer) { return reinterpret_cast<uint64_t>(pointer); };
  s.set_preference(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
                   alignment_of(address(s.a), p.k * p.n * t.ab_bytes, p.batch),
                   "setting A's alignment");
  s.set_preference(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
                   alignment_of(address(s.b), p.m * p.k * t.ab_bytes, p.batch),
                   "setting B's alignment");
  const uint32_t d_alignment = alignment_of(address(s.d), p.m * p.n * t.d_bytes, p.batch);
  s.set_preference(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, d_alignment,
                   "setting C's alignment");
  s.set_preference(CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, d_alignment,
                   "setting D's alignment");
}

// "algo 21 tile 20 stages 15 split-k 1 reduction 0 swizzle 0 custom 0 workspace 4194304 waves
// 0.93": the algorithm's configuration as cuBLASLt reports it (tile and stages are the
// cublasLtMatmulTile_t / cublasLtMatmulStages_t values of cublasLt.h).
std::string describe_algo(const PlanState &s, const cublasLtMatmulHeuristicResult_t &result) {
  const cublasLtMatmulAlgo_t &algo = result.algo;
  const auto id = s.algo_config<int32_t>(algo, CUBLASLT_ALGO_CONFIG_ID, "reading ALGO_ID");
  const auto tile = s.algo_config<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_TILE_ID, "reading TILE_ID");
  const auto stages =
      s.algo_config<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, "reading STAGES_ID");
  const auto split_k =
      s.algo_config<int32_t>(algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, "reading SPLITK_NUM");
  const auto reduction = s.algo_config<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME,
                                                 "reading REDUCTION_SCHEME");
  const auto swizzle =
      s.algo_config<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, "reading CTA_SWIZZLING");
  const auto custom =
      s.algo_config<uint32_t>(algo, CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, "reading CUSTOM_OPTION");
  char waves[32];
  std::snprintf(waves, sizeof(waves), "%.2f", static_cast<double>(result.wavesCount));
  return "algo " + std::to_string(id) + " tile " + std::to_string(tile) + " stages " +
         std::to_string(stages) + " split-k " + std::to_string(split_k) + " reduction " +
         std::to_string(reduction) + " swizzle " + std::to_string(swizzle) + " custom " +
         std::to_string(custom) + " workspace " + std::to_string(result.workspaceSize) + " waves " +
         waves;
}

AnchorCandidate make_candidate(const std::shared_ptr<PlanState> &state, int rank,
                               const cublasLtMatmulHeuristicResult_t &result) {
  AnchorCandidate candidate;
  candidate.rank = rank;
  candidate.description = describe_algo(*state, result);
  candidate.enqueue = [state, algo = result.algo,
                       description = candidate.description](void *stream) {
    const PlanState &s = *state;
    const void *alpha = s.integer_scale ? static_cast<const void *>(&s.alpha_s32) : &s.alpha_f32;
    const void *beta = s.integer_scale ? static_cast<const void *>(&s.beta_s32) : &s.beta_f32;
    // C is D (beta 0, same layout): cublasLtMatmul's in-place form.
    const cublasStatus_t status = s.api->cublasLtMatmul(
        s.handle, s.matmul, alpha, s.a, s.a_layout, s.b, s.b_layout, beta, s.d, s.d_layout, s.d,
        s.d_layout, &algo, reinterpret_cast<void *>(s.workspace), cublaslt_workspace_bytes,
        static_cast<cudaStream_t>(stream));
    if (status != CUBLAS_STATUS_SUCCESS) {
      throw std::runtime_error("cublasLtMatmul failed (" + describe_status(*s.api, status) +
                               ") for " + s.problem + " with " + description);
    }
  };
  return candidate;
}

// Everything plan_cublaslt does once the problem is known to be asked; throws PlanError.
AnchorPlan build_plan(const CublasLtLibrary &library, const GemmProblem &p, const GemmOperands &ops,
                      int max_candidates) {
  const DtypeMapping t = *dtype_mapping(p.dtype);
  auto state = std::make_shared<PlanState>();
  PlanState &s = *state;
  s.api = library.api;
  s.problem = problem_text(p);
  s.a = reinterpret_cast<const void *>(ops.b);
  s.b = reinterpret_cast<const void *>(ops.a);
  s.d = reinterpret_cast<void *>(ops.d);
  s.bias = reinterpret_cast<const void *>(ops.bias);
  s.integer_scale = t.scale_type == CUDA_R_32I;

  s.driver = cuda::process_cuda_driver();
  if (!s.driver->loaded) {
    throw PlanError("the cuBLASLt workspace needs the CUDA driver: " + s.driver->error);
  }
  const CUresult allocated = s.driver->cuMemAlloc_v2(&s.workspace, cublaslt_workspace_bytes);
  if (allocated != CUDA_SUCCESS) {
    s.workspace = 0;
    throw PlanError("cuMemAlloc_v2 failed (" + cuda::describe_cuda_result(*s.driver, allocated) +
                    ") allocating cuBLASLt's " + std::to_string(cublaslt_workspace_bytes >> 20) +
                    " MiB workspace for " + s.problem +
                    " (plan on the thread whose CUDA context holds the operands)");
  }
  s.check(s.api->cublasLtCreate(&s.handle), "cublasLtCreate", "creating the cuBLASLt handle");
  describe_problem(s, p, t);

  std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<size_t>(max_candidates));
  int returned = 0;
  const cublasStatus_t asked = s.api->cublasLtMatmulAlgoGetHeuristic(
      s.handle, s.matmul, s.a_layout, s.b_layout, s.d_layout, s.d_layout, s.preference,
      max_candidates, results.data(), &returned);
  if (asked == CUBLAS_STATUS_NOT_SUPPORTED) {
    throw PlanError("cuBLASLt's heuristic offers no algorithm for " + s.problem + " (" +
                    describe_status(*s.api, asked) + ")");
  }
  s.check(asked, "cublasLtMatmulAlgoGetHeuristic", "asking for algorithms");

  AnchorPlan plan;
  plan.anchor = "cuBLASLt";
  plan.variant = "heuristic";
  returned = std::clamp(returned, 0, max_candidates);
  for (int i = 0; i < returned; ++i) {
    const cublasLtMatmulHeuristicResult_t &result = results[static_cast<size_t>(i)];
    if (result.state == CUBLAS_STATUS_SUCCESS && result.workspaceSize <= cublaslt_workspace_bytes) {
      plan.candidates.push_back(
          make_candidate(state, static_cast<int>(plan.candidates.size()), result));
    }
  }
  if (plan.candidates.empty()) {
    throw PlanError("cuBLASLt's heuristic returned no usable algorithm for " + s.problem + " (" +
                    std::to_string(returned) + " returned)");
  }
  plan.ok = true;
  plan.state = state;
  return plan;
}

} // namespace

CublasLtLibrary load_cublaslt(const std::vector<std::string> &candidates) {
  CublasLtLibrary library;
  const support::OpenedLibrary opened = support::open_first_library(candidates);
  if (!opened.handle) {
    library.error = "cuBLASLt (libcublasLt) could not be opened; tried:" + opened.error +
                    "\nInstall cuBLAS (the CUDA toolkit's, or the nvidia-cublas wheel) and put the "
                    "directory holding libcublasLt.so.13 on LD_LIBRARY_PATH.";
    return library;
  }
  library.path = opened.path;
  auto api = std::make_shared<CublasLtApi>();
  std::string missing;
#define TCJIT_CUBLASLT_RESOLVE(name)                                                               \
  api->name =                                                                                      \
      reinterpret_cast<decltype(&::name)>(support::find_library_symbol(opened.handle, #name));     \
  if (!api->name) {                                                                                \
    missing += std::string(missing.empty() ? "" : ", ") + #name;                                   \
  }
  TCJIT_CUBLASLT_REQUIRED_SYMBOLS(TCJIT_CUBLASLT_RESOLVE)
#undef TCJIT_CUBLASLT_RESOLVE
#define TCJIT_CUBLASLT_RESOLVE_OPTIONAL(name)                                                      \
  api->name =                                                                                      \
      reinterpret_cast<decltype(&::name)>(support::find_library_symbol(opened.handle, #name));
  TCJIT_CUBLASLT_OPTIONAL_SYMBOLS(TCJIT_CUBLASLT_RESOLVE_OPTIONAL)
#undef TCJIT_CUBLASLT_RESOLVE_OPTIONAL
  if (!missing.empty()) {
    library.error =
        opened.path + " is not a cuBLASLt the anchor can use: it does not export " + missing + ".";
    return library;
  }
  library.version = api->cublasLtGetVersion();
  library.api = std::move(api);
  library.loaded = true;
  return library;
}

AnchorPlan plan_cublaslt(const CublasLtLibrary &library, const GemmProblem &problem,
                         const GemmOperands &operands, int max_candidates) {
  AnchorPlan refused;
  refused.anchor = "cuBLASLt";
  refused.variant = "heuristic";
  if (!library.loaded || !library.api) {
    refused.why_not = library.error.empty() ? "cuBLASLt is not loaded" : library.error;
    return refused;
  }
  if (std::string reason = unsupported_reason(problem, operands, max_candidates); !reason.empty()) {
    refused.why_not = reason;
    return refused;
  }
  try {
    return build_plan(library, problem, operands, max_candidates);
  } catch (const PlanError &error) {
    refused.why_not = error.what();
  } catch (const std::exception &error) {
    refused.why_not = std::string("planning cuBLASLt failed: ") + error.what();
  }
  return refused;
}

} // namespace tcjit::bench
