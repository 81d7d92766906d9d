#include "bench/gpu_tool/cudnn_anchor.h"

#include "runtime/cuda/cuda_driver.h"
#include "support/shared_library.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <utility>

namespace tcjit::bench {

CudnnLibrary load_cudnn(const std::vector<std::string> &candidates) {
  CudnnLibrary library;
  const support::OpenedLibrary opened = support::open_first_library(candidates);
  if (!opened.handle) {
    library.error = "cuDNN is not available: no candidate library could be opened:" + opened.error +
                    "\n(install cuDNN 9 (the toolkit's lib64, or the nvidia-cudnn-cu* wheel's "
                    "nvidia/cudnn/lib) and put its folder on LD_LIBRARY_PATH)";
    return library;
  }
  library.path = opened.path;
  std::string missing;
#define TCJIT_CUDNN_RESOLVE(name)                                                                  \
  library.name = reinterpret_cast<decltype(library.name)>(                                         \
      support::find_library_symbol(opened.handle, #name));                                         \
  if (!library.name) {                                                                             \
    missing += std::string(missing.empty() ? "" : ", ") + #name;                                   \
  }
  TCJIT_CUDNN_REQUIRED_SYMBOLS(TCJIT_CUDNN_RESOLVE)
#undef TCJIT_CUDNN_RESOLVE
  library.cudnnGetLastErrorString = reinterpret_cast<decltype(library.cudnnGetLastErrorString)>(
      support::find_library_symbol(opened.handle, "cudnnGetLastErrorString"));
  if (!missing.empty()) {
    library.error = opened.path + " is not a usable cuDNN: it lacks " + missing +
                    " (a cuDNN 9 library exports them all)";
    return library;
  }
  library.version = library.cudnnGetVersion();
  if (library.version < 90000) {
    library.error = opened.path + " is cuDNN " +
                    cuda::vendor_version_text(cuda::VendorLibrary::cudnn,
                                              static_cast<long long>(library.version)) +
                    "; the cuDNN anchor needs cuDNN 9 or newer (libcudnn.so.9)";
    return library;
  }
  library.loaded = true;
  return library;
}

namespace {

// What cuDNN says about a failed call: the status's name and, when the library offers it, its
// explanation of the last error.
std::string describe_status(const CudnnLibrary &library, cudnnStatus_t status) {
  std::string text = library.cudnnGetErrorString(status);
  if (library.cudnnGetLastErrorString) {
    std::array<char, 1024> last{};
    library.cudnnGetLastErrorString(last.data(), last.size());
    if (last[0] != '\0') {
      text += ": " + std::string(last.data());
    }
  }
  return text;
}

void check(const CudnnLibrary &library, cudnnStatus_t status, std::string_view call) {
  if (status != CUDNN_STATUS_SUCCESS) {
    throw std::runtime_error("cuDNN " + std::string(call) + " failed (" +
                             describe_status(library, status) + ")");
  }
}

// The handle, every descriptor (destroyed in the reverse order of creation), the workspace and the
// summary of one plan_cudnn call; the candidates hold it through AnchorPlan::state.
struct CudnnPlanState {
  CudnnLibrary library;
  cudnnHandle_t handle = nullptr;
  std::vector<cudnnBackendDescriptor_t> descriptors;
  std::shared_ptr<const cuda::CudaDriver> driver; // set once the workspace is allocated
  CUdeviceptr workspace = 0;
  CudnnPlanSummary summary;

  explicit CudnnPlanState(CudnnLibrary lib) : library(std::move(lib)) {}
  CudnnPlanState(const CudnnPlanState &) = delete;
  CudnnPlanState &operator=(const CudnnPlanState &) = delete;
  ~CudnnPlanState() {
    for (auto it = descriptors.rbegin(); it != descriptors.rend(); ++it) {
      library.cudnnBackendDestroyDescriptor(*it);
    }
    if (workspace) {
      driver->cuMemFree_v2(workspace);
    }
    if (handle) {
      library.cudnnDestroy(handle);
    }
  }

  cudnnBackendDescriptor_t create(cudnnBackendDescriptorType_t type, std::string_view what) {
    cudnnBackendDescriptor_t descriptor = nullptr;
    check(library, library.cudnnBackendCreateDescriptor(type, &descriptor),
          "cudnnBackendCreateDescriptor(" + std::string(what) + ")");
    descriptors.push_back(descriptor);
    return descriptor;
  }
  void set(cudnnBackendDescriptor_t descriptor, cudnnBackendAttributeName_t name,
           cudnnBackendAttributeType_t type, int64_t count, const void *values,
           std::string_view what) {
    check(library, library.cudnnBackendSetAttribute(descriptor, name, type, count, values),
          "cudnnBackendSetAttribute(" + std::string(what) + ")");
  }
  void set_int64s(cudnnBackendDescriptor_t descriptor, cudnnBackendAttributeName_t name,
                  const std::vector<int64_t> &values, std::string_view what) {
    set(descriptor, name, CUDNN_TYPE_INT64, static_cast<int64_t>(values.size()), values.data(),
        what);
  }
  void set_descriptor(cudnnBackendDescriptor_t descriptor, cudnnBackendAttributeName_t name,
                      cudnnBackendDescriptor_t value, std::string_view what) {
    set(descriptor, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &value, what);
  }
  void finalize(cudnnBackendDescriptor_t descriptor, std::string_view what) {
    check(library, library.cudnnBackendFinalize(descriptor),
          "cudnnBackendFinalize(" + std::string(what) + ")");
  }
  int64_t get_int64(cudnnBackendDescriptor_t descriptor, cudnnBackendAttributeName_t name,
                    std::string_view what) {
    int64_t value = 0, count = 0;
    check(library,
          library.cudnnBackendGetAttribute(descriptor, name, CUDNN_TYPE_INT64, 1, &count, &value),
          "cudnnBackendGetAttribute(" + std::string(what) + ")");
    return value;
  }
};

// The largest power of two up to 16 that divides `address` (what CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT
// promises cuDNN about the tensor's data).
int64_t byte_alignment(uint64_t address) {
  int64_t alignment = 16;
  while (alignment > 1 && address % static_cast<uint64_t>(alignment) != 0) {
    alignment /= 2;
  }
  return alignment;
}

constexpr int64_t kUidX = 'x', kUidW = 'w', kUidY = 'y';

// A tensor descriptor for an f16 tensor stored channels-last. cuDNN describes every tensor by its
// dimensions in the order N, C, H, W (K, C, R, S for a filter) and a stride for each, so an NHWC
// tensor of extents n, c, h, w has the strides h*w*c, 1, w*c, c.
cudnnBackendDescriptor_t make_tensor(CudnnPlanState &s, int64_t uid, int64_t n, int64_t c,
                                     int64_t h, int64_t w, uint64_t address, const char *what) {
  cudnnBackendDescriptor_t tensor = s.create(CUDNN_BACKEND_TENSOR_DESCRIPTOR, what);
  const cudnnDataType_t data_type = CUDNN_DATA_HALF;
  s.set(tensor, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &data_type, what);
  s.set_int64s(tensor, CUDNN_ATTR_TENSOR_DIMENSIONS, {n, c, h, w}, what);
  s.set_int64s(tensor, CUDNN_ATTR_TENSOR_STRIDES, {h * w * c, 1, w * c, c}, what);
  s.set_int64s(tensor, CUDNN_ATTR_TENSOR_UNIQUE_ID, {uid}, what);
  s.set_int64s(tensor, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, {byte_alignment(address)}, what);
  s.finalize(tensor, what);
  return tensor;
}

cudnnBackendDescriptor_t make_convolution(CudnnPlanState &s, const ConvProblem &p) {
  const char *what = "convolution";
  cudnnBackendDescriptor_t conv = s.create(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR, what);
  const cudnnDataType_t compute_type = CUDNN_DATA_FLOAT;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  s.set(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &compute_type, what);
  s.set(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode, what);
  s.set_int64s(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, {2}, what);
  s.set_int64s(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, {p.pad_h, p.pad_w}, what);
  s.set_int64s(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, {p.pad_h, p.pad_w}, what);
  s.set_int64s(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, {p.stride_h, p.stride_w}, what);
  s.set_int64s(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, {p.dilation_h, p.dilation_w}, what);
  s.finalize(conv, what);
  return conv;
}

// The operation of the problem's pass on tensors x, w, y (dgrad: dx in x, dy in y; wgrad: dw in
// w, dy in y), y = 1 * op + 0 * y.
cudnnBackendDescriptor_t make_operation(CudnnPlanState &s, const std::string &pass,
                                        cudnnBackendDescriptor_t conv, cudnnBackendDescriptor_t x,
                                        cudnnBackendDescriptor_t w, cudnnBackendDescriptor_t y) {
  struct Names {
    cudnnBackendDescriptorType_t type;
    cudnnBackendAttributeName_t alpha, beta, conv, x, w, y;
  };
  Names n{};
  if (pass == "fprop") {
    n = {CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
         CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
         CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA,
         CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
         CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
         CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
         CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y};
  } else if (pass == "dgrad") {
    n = {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY};
  } else {
    n = {CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
         CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY};
  }
  const std::string what = "convolution " + pass + " operation";
  cudnnBackendDescriptor_t op = s.create(n.type, what);
  const float alpha = 1.0f, beta = 0.0f;
  s.set(op, n.alpha, CUDNN_TYPE_FLOAT, 1, &alpha, what);
  s.set(op, n.beta, CUDNN_TYPE_FLOAT, 1, &beta, what);
  s.set_descriptor(op, n.conv, conv, what);
  s.set_descriptor(op, n.x, x, what);
  s.set_descriptor(op, n.w, w, what);
  s.set_descriptor(op, n.y, y, what);
  s.finalize(op, what);
  return op;
}

// The engine configs of the heuristic, in its order, the first `max_count` of them.
std::vector<cudnnBackendDescriptor_t> heuristic_configs(CudnnPlanState &s,
                                                        cudnnBackendDescriptor_t graph,
                                                        HeuristicMode mode, int max_count) {
  const char *what =
      mode == HeuristicMode::A ? "engine heuristics, mode A" : "engine heuristics, mode B";
  cudnnBackendDescriptor_t heuristics = s.create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR, what);
  s.set_descriptor(heuristics, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph, what);
  const cudnnBackendHeurMode_t heur_mode =
      mode == HeuristicMode::A ? CUDNN_HEUR_MODE_A : CUDNN_HEUR_MODE_B;
  s.set(heuristics, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &heur_mode, what);
  s.finalize(heuristics, what);

  int64_t available = 0;
  check(s.library,
        s.library.cudnnBackendGetAttribute(heuristics, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                           CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &available, nullptr),
        "cudnnBackendGetAttribute(engine heuristics results, count)");
  s.summary.heuristic_configs = static_cast<int>(available);
  const int64_t wanted = std::min<int64_t>(available, max_count);
  std::vector<cudnnBackendDescriptor_t> configs;
  for (int64_t i = 0; i < wanted; ++i) {
    configs.push_back(s.create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, "engine config"));
  }
  int64_t returned = 0;
  if (wanted > 0) {
    check(s.library,
          s.library.cudnnBackendGetAttribute(heuristics, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                             CUDNN_TYPE_BACKEND_DESCRIPTOR, wanted, &returned,
                                             configs.data()),
          "cudnnBackendGetAttribute(engine heuristics results)");
  }
  configs.resize(static_cast<size_t>(std::clamp<int64_t>(returned, 0, wanted)));
  return configs;
}

// A knob's name in descriptions ("tile_size"), or its cudnnBackendKnobType_t number.
std::string knob_name(cudnnBackendKnobType_t type) {
  switch (type) {
  case CUDNN_KNOB_TYPE_SWIZZLE: return "swizzle";
  case CUDNN_KNOB_TYPE_TILE_SIZE: return "tile_size";
  case CUDNN_KNOB_TYPE_EDGE: return "edge";
  case CUDNN_KNOB_TYPE_MULTIPLY: return "multiply";
  case CUDNN_KNOB_TYPE_SPLIT_K_BUF: return "split_k_buf";
  case CUDNN_KNOB_TYPE_TILEK: return "tile_k";
  case CUDNN_KNOB_TYPE_STAGES: return "stages";
  case CUDNN_KNOB_TYPE_REDUCTION_MODE: return "reduction_mode";
  case CUDNN_KNOB_TYPE_SPLIT_K_SLC: return "split_k_slc";
  case CUDNN_KNOB_TYPE_KERNEL_CFG: return "kernel_cfg";
  case CUDNN_KNOB_TYPE_WORKSPACE: return "workspace";
  case CUDNN_KNOB_TYPE_BLOCK_SIZE: return "block_size";
  case CUDNN_KNOB_TYPE_OCCUPANCY: return "occupancy";
  default: return "knob" + std::to_string(static_cast<int>(type));
  }
}

// "engine 12 (tile_size=3 stages=2)": the config's engine (CUDNN_ATTR_ENGINE_GLOBAL_INDEX) and its
// knob choices; what cuDNN said when it cannot tell.
std::string describe_config(CudnnPlanState &s, cudnnBackendDescriptor_t config) {
  try {
    cudnnBackendDescriptor_t engine = s.create(CUDNN_BACKEND_ENGINE_DESCRIPTOR, "engine");
    int64_t count = 0;
    check(s.library,
          s.library.cudnnBackendGetAttribute(config, CUDNN_ATTR_ENGINECFG_ENGINE,
                                             CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count, &engine),
          "cudnnBackendGetAttribute(engine config's engine)");
    std::string text =
        "engine " + std::to_string(s.get_int64(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, "engine"));
    std::vector<cudnnBackendDescriptor_t> knobs;
    for (int i = 0; i < CUDNN_KNOB_TYPE_COUNTS; ++i) {
      knobs.push_back(s.create(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, "knob choice"));
    }
    int64_t knob_count = 0;
    check(s.library,
          s.library.cudnnBackendGetAttribute(config, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                                             CUDNN_TYPE_BACKEND_DESCRIPTOR, CUDNN_KNOB_TYPE_COUNTS,
                                             &knob_count, knobs.data()),
          "cudnnBackendGetAttribute(engine config's knob choices)");
    std::string choices;
    for (int64_t i = 0; i < std::min<int64_t>(knob_count, CUDNN_KNOB_TYPE_COUNTS); ++i) {
      cudnnBackendKnobType_t type{};
      int64_t n = 0;
      check(s.library,
            s.library.cudnnBackendGetAttribute(knobs[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
                                               CUDNN_TYPE_KNOB_TYPE, 1, &n, &type),
            "cudnnBackendGetAttribute(knob type)");
      const int64_t value = s.get_int64(knobs[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, "knob value");
      choices += (choices.empty() ? "" : " ") + knob_name(type) + "=" + std::to_string(value);
    }
    return choices.empty() ? text : text + " (" + choices + ")";
  } catch (const std::exception &e) {
    return std::string("engine config (not described: ") + e.what() + ")";
  }
}

std::string problem_error(const ConvProblem &p, const ConvOperands &o) {
  if (p.pass != "fprop" && p.pass != "dgrad" && p.pass != "wgrad") {
    return "pass \"" + p.pass + "\" is not one of fprop, dgrad, wgrad";
  }
  if (p.n <= 0 || p.h <= 0 || p.w <= 0 || p.c <= 0 || p.k <= 0 || p.r <= 0 || p.s <= 0 ||
      p.stride_h <= 0 || p.stride_w <= 0 || p.dilation_h <= 0 || p.dilation_w <= 0 || p.pad_h < 0 ||
      p.pad_w < 0 || p.groups <= 0) {
    return "a size, stride or dilation is not positive (or a padding is negative)";
  }
  if (p.c % p.groups != 0 || p.k % p.groups != 0) {
    return "groups=" + std::to_string(p.groups) + " does not divide c and k";
  }
  if (p.p() <= 0 || p.q() <= 0) {
    return "the filter does not fit the padded input";
  }
  if (o.x == 0 || o.w == 0 || o.y == 0) {
    return "an operand's device address is null";
  }
  return {};
}

// Builds the graph, takes the heuristic's configs and makes the plans and candidates.
void build_plan(AnchorPlan &plan, const std::shared_ptr<CudnnPlanState> &state,
                const ConvProblem &p, const ConvOperands &o, HeuristicMode mode,
                int max_candidates) {
  CudnnPlanState &s = *state;
  const cudnnBackendDescriptor_t x = make_tensor(s, kUidX, p.n, p.c, p.h, p.w, o.x, "tensor x");
  const cudnnBackendDescriptor_t w =
      make_tensor(s, kUidW, p.k, p.c / p.groups, p.r, p.s, o.w, "tensor w");
  const cudnnBackendDescriptor_t y = make_tensor(s, kUidY, p.n, p.k, p.p(), p.q(), o.y, "tensor y");
  const cudnnBackendDescriptor_t op = make_operation(s, p.pass, make_convolution(s, p), x, w, y);

  // The descriptors so far are checked on the host; the graph needs a handle (and a GPU).
  check(s.library, s.library.cudnnCreate(&s.handle), "cudnnCreate");
  const char *what = "operation graph";
  cudnnBackendDescriptor_t graph = s.create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, what);
  s.set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op, what);
  s.set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &s.handle, what);
  s.finalize(graph, what);

  struct Usable {
    cudnnBackendDescriptor_t plan;
    int heuristic_rank;
    int64_t workspace;
    std::string description;
  };
  std::vector<Usable> usable;
  const std::vector<cudnnBackendDescriptor_t> configs =
      heuristic_configs(s, graph, mode, std::max(max_candidates, 0));
  s.summary.tried = static_cast<int>(configs.size());
  for (size_t i = 0; i < configs.size(); ++i) {
    cudnnBackendDescriptor_t execution_plan =
        s.create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, "execution plan");
    s.set(execution_plan, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &s.handle,
          "execution plan");
    s.set_descriptor(execution_plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, configs[i],
                     "execution plan");
    const cudnnStatus_t status = s.library.cudnnBackendFinalize(execution_plan);
    if (status != CUDNN_STATUS_SUCCESS) { // this engine config cannot run the problem: skip it
      if (s.summary.refused++ == 0) {
        s.summary.first_refusal =
            "engine config " + std::to_string(i) + ": " + describe_status(s.library, status);
      }
      continue;
    }
    const int64_t workspace =
        s.get_int64(execution_plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, "plan workspace");
    usable.push_back(
        {execution_plan, static_cast<int>(i), workspace, describe_config(s, configs[i])});
  }
  if (usable.empty()) {
    plan.why_not = "cuDNN's heuristic (" + plan.variant + ") offered " +
                   std::to_string(s.summary.heuristic_configs) + " engine configs; none of the " +
                   std::to_string(s.summary.tried) + " tried made an execution plan" +
                   (s.summary.first_refusal.empty() ? "" : " (" + s.summary.first_refusal + ")");
    return;
  }

  int64_t workspace_bytes = 0;
  for (const Usable &u : usable) {
    workspace_bytes = std::max(workspace_bytes, u.workspace);
  }
  if (workspace_bytes > 0) {
    s.driver = cuda::process_cuda_driver();
    cuda::require_loaded(*s.driver);
    cuda::check_cuda(*s.driver, s.driver->cuMemAlloc_v2(&s.workspace, workspace_bytes),
                     "cuMemAlloc_v2",
                     "the cuDNN workspace of " + std::to_string(workspace_bytes) +
                         " bytes (in the calling thread's current context)");
    s.summary.workspace_bytes = static_cast<size_t>(workspace_bytes);
  }

  what = "variant pack";
  cudnnBackendDescriptor_t pack = s.create(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, what);
  const std::array<int64_t, 3> uids{kUidX, kUidW, kUidY};
  std::array<void *, 3> pointers{reinterpret_cast<void *>(o.x), reinterpret_cast<void *>(o.w),
                                 reinterpret_cast<void *>(o.y)};
  void *workspace = reinterpret_cast<void *>(s.workspace);
  s.set(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3, uids.data(), what);
  s.set(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3, pointers.data(), what);
  s.set(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace, what);
  s.finalize(pack, what);

  for (const Usable &u : usable) {
    AnchorCandidate candidate;
    candidate.rank = static_cast<int>(plan.candidates.size());
    candidate.description = u.description + ", heuristic rank " + std::to_string(u.heuristic_rank) +
                            ", workspace " + std::to_string(u.workspace) + " B";
    const cudnnBackendDescriptor_t execution_plan = u.plan;
    candidate.enqueue = [state, execution_plan, pack](void *stream) {
      const CudnnLibrary &lib = state->library;
      check(lib, lib.cudnnSetStream(state->handle, static_cast<cudaStream_t>(stream)),
            "cudnnSetStream");
      check(lib, lib.cudnnBackendExecute(state->handle, execution_plan, pack),
            "cudnnBackendExecute");
    };
    plan.candidates.push_back(std::move(candidate));
  }
  plan.ok = true;
}

} // namespace

AnchorPlan plan_cudnn(const CudnnLibrary &library, const ConvProblem &problem,
                      const ConvOperands &operands, HeuristicMode mode, int max_candidates) {
  AnchorPlan plan;
  plan.anchor = "cuDNN";
  plan.variant = mode == HeuristicMode::A ? "mode A" : "mode B";
  if (!library.loaded) {
    plan.why_not = library.error.empty() ? "cuDNN is not loaded" : library.error;
    return plan;
  }
  if (const std::string error = problem_error(problem, operands); !error.empty()) {
    plan.why_not = "cuDNN anchor: problem " + problem.name + " " + problem.pass + ": " + error;
    return plan;
  }
  auto state = std::make_shared<CudnnPlanState>(library);
  plan.state = state;
  try {
    build_plan(plan, state, problem, operands, mode, max_candidates);
  } catch (const std::exception &e) {
    plan.ok = false;
    plan.candidates.clear();
    plan.state.reset(); // the handle, descriptors and workspace made so far
    plan.why_not = "cuDNN anchor, problem " + problem.name + " " + problem.pass + ": " + e.what();
  }
  return plan;
}

CudnnPlanSummary cudnn_plan_summary(const AnchorPlan &plan) {
  if (plan.anchor != "cuDNN" || !plan.state) {
    return {};
  }
  return std::static_pointer_cast<CudnnPlanState>(plan.state)->summary;
}

} // namespace tcjit::bench
