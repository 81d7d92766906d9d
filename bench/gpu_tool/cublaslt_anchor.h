// The cuBLASLt anchor of the GPU race: libcublasLt opened with dlopen (never linked, so the bench
// tool starts on a machine without it), and for one GemmProblem the candidates of cuBLASLt's own
// heuristic (cublasLtMatmulAlgoGetHeuristic), each enqueuing one cublasLtMatmul on a stream.
// bench/README.md ("bench/gpu: the anchors") says what is asked of cuBLASLt and how the layouts of
// problems.h map onto its column-major ones.
#pragma once

#include "bench/gpu_tool/anchor.h"
#include "bench/gpu_tool/problems.h"

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

namespace tcjit::bench {

// The cuBLASLt entry points the anchor uses, resolved from the opened library (cublaslt_anchor.cpp
// defines it: its members are typed by the toolkit's cublasLt.h, which this header keeps to
// itself).
struct CublasLtApi;

// libcublasLt, opened once; check `loaded`.
struct CublasLtLibrary {
  bool loaded = false;
  std::string path;   // the candidate that opened
  std::string error;  // when !loaded: every candidate tried and why, and how to go on
  size_t version = 0; // cublasLtGetVersion(): 10000 * major + 100 * minor + patch
  std::shared_ptr<const CublasLtApi> api;
};

// Opens the first of `candidates` that loads (a bare soname goes through the loader's search path,
// a path is opened as is) and resolves every entry point the anchor uses. Never throws.
CublasLtLibrary load_cublaslt(const std::vector<std::string> &candidates);

// The workspace every plan allocates and offers the heuristic (32 MiB, as NVIDIA's samples and
// the frameworks use on Hopper).
inline constexpr size_t cublaslt_workspace_bytes = size_t{32} << 20;

// cuBLASLt's candidates for `problem` on `operands` (device addresses of the current CUDA context):
// variant "heuristic", at most `max_candidates` algorithms in the heuristic's order. Never throws:
// when the library is missing, the combination is one cuBLASLt does not offer (e.g. s8 with a
// bias+GELU epilogue), or a cuBLASLt or driver call fails, `ok` is false and `why_not` says which
// and why (with the status's name).
//
// The workspace is allocated with the process's CUDA driver (runtime/cuda/cuda_driver.h,
// cuMemAlloc_v2) in the context current on the calling thread, and freed (cuMemFree_v2) with the
// plan's state: plan on the thread that opened the CUDA device (tcjit's CUDA device makes its
// primary context current), and let the plan go before the device. Each candidate's enqueue calls
// cublasLtMatmul on the given stream and throws std::runtime_error when cuBLASLt refuses.
AnchorPlan plan_cublaslt(const CublasLtLibrary &library, const GemmProblem &problem,
                         const GemmOperands &operands, int max_candidates = 8);

} // namespace tcjit::bench
