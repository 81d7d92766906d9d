// The cuDNN anchor of the GPU race: a convolution (fprop, dgrad or wgrad; f16 NHWC tensors, KRSC
// filter, f32 compute) described through cuDNN's backend (graph) API, the engine configs of its
// heuristic (mode A or B) in its order, one execution plan each. libcudnn is opened with dlopen,
// never linked: its types come from the toolkit's cudnn_graph.h, the calls from NVIDIA's backend
// API documentation. bench/README.md ("bench/gpu: the anchors") describes it.
#pragma once

#include "bench/gpu_tool/anchor.h"
#include "bench/gpu_tool/problems.h"
#include "runtime/cuda/vendor_libraries.h"

#include <cudnn_graph.h>

#include <cstddef>
#include <string>
#include <vector>

namespace tcjit::bench {

// X(name): the cuDNN entry points the anchor calls, typed from cudnn_graph.h by decltype.
#define TCJIT_CUDNN_REQUIRED_SYMBOLS(X)                                                            \
  X(cudnnGetVersion)                                                                               \
  X(cudnnGetErrorString)                                                                           \
  X(cudnnCreate)                                                                                   \
  X(cudnnDestroy)                                                                                  \
  X(cudnnSetStream)                                                                                \
  X(cudnnBackendCreateDescriptor)                                                                  \
  X(cudnnBackendDestroyDescriptor)                                                                 \
  X(cudnnBackendSetAttribute)                                                                      \
  X(cudnnBackendGetAttribute)                                                                      \
  X(cudnnBackendFinalize)                                                                          \
  X(cudnnBackendExecute)

// X(name): used when present (messages then carry cuDNN's own explanation of the last error).
#define TCJIT_CUDNN_OPTIONAL_SYMBOLS(X) X(cudnnGetLastErrorString)

// An opened libcudnn (never closed: plans hold its functions). Plain data, cheap to copy.
struct CudnnLibrary {
  bool loaded = false; // opened, every required symbol found, and a cuDNN 9 or newer
  std::string path;    // the candidate that opened
  std::string error;   // when !loaded: every candidate tried and why each failed, how to go on
  size_t version = 0;  // cudnnGetVersion(): 10000 * major + 100 * minor + patch (cuDNN 9)
#define TCJIT_CUDNN_MEMBER(name) decltype(&::name) name = nullptr;
  TCJIT_CUDNN_REQUIRED_SYMBOLS(TCJIT_CUDNN_MEMBER)
  TCJIT_CUDNN_OPTIONAL_SYMBOLS(TCJIT_CUDNN_MEMBER)
#undef TCJIT_CUDNN_MEMBER
};

// Opens the first candidate (cuda::default_cudnn_candidates(): LD_LIBRARY_PATH, the toolkit,
// Python's NVIDIA wheels, the loader; a bare soname goes through the loader, a path is opened as
// is) that loads and resolves the symbols. Never throws; the result says what failed (a library
// older than cuDNN 9 is refused: the backend attributes used are 9's).
CudnnLibrary
load_cudnn(const std::vector<std::string> &candidates = cuda::default_cudnn_candidates());

// The heuristic whose engine configs are taken (CUDNN_HEUR_MODE_A: fast, CUDNN_HEUR_MODE_B: more
// accurate, slower to query).
enum class HeuristicMode { A, B };

// The candidates cuDNN offers for `problem` on `operands` (device addresses, see problems.h):
// its heuristic's engine configs in order, the first `max_candidates` of them, each made an
// execution plan; the configs whose plan does not finalize are skipped (cudnn_plan_summary says
// how many). Each candidate's enqueue sets the handle's stream and runs cudnnBackendExecute with
// the operands and one shared workspace, the largest any plan needs, allocated with the CUDA
// driver (cuMemAlloc_v2, in the context current on the calling thread: call this where the
// operands were allocated, e.g. after the CUDA device made its primary context current) and
// freed with the plan's state, as are the handle and every descriptor.
// Never throws: a library that is not loaded, a problem it cannot describe, or a cuDNN call that
// fails leave ok false and why_not saying which call failed with cuDNN's message.
AnchorPlan plan_cudnn(const CudnnLibrary &library, const ConvProblem &problem,
                      const ConvOperands &operands, HeuristicMode mode, int max_candidates = 8);

// How a cuDNN plan was made: how many engine configs the heuristic offered, how many of them were
// tried (at most max_candidates), how many execution plans did not finalize and the first
// refusal's message, and the workspace allocated. All zero for a plan not made by plan_cudnn or
// one that failed before its execution plans.
struct CudnnPlanSummary {
  int heuristic_configs = 0;
  int tried = 0;
  int refused = 0;
  std::string first_refusal;
  size_t workspace_bytes = 0;
};
CudnnPlanSummary cudnn_plan_summary(const AnchorPlan &plan);

} // namespace tcjit::bench
