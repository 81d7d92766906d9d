// What an anchor library (cuBLASLt, cuDNN) offers for one problem: its candidates in the order of
// its own heuristic, each a function that enqueues the work once on a stream. The race driver
// (race.cpp) times them all the same way (timing.h) and reports the heuristic's first and the
// best of the first eight measured.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace tcjit::bench {

struct AnchorCandidate {
  int rank = 0;            // 0: the heuristic's first choice
  std::string description; // what it is, e.g. "algo 6 tile 128x256 stages 3 split-k 1"
  // Enqueues the operation once on `stream` (a CUstream of the device's primary context, null
  // for the legacy default stream); throws std::runtime_error with the library's message when
  // the library refuses it.
  std::function<void(void *stream)> enqueue;
};

// The candidates of one problem (`variant` names the heuristic, e.g. "heuristic", "mode A"), or
// why there are none: the library is not there, it does not support the problem ("cuBLASLt has
// no int8 GEMM with a bias+GELU epilogue"), its heuristic returned nothing.
struct AnchorPlan {
  std::string anchor;  // "cuBLASLt", "cuDNN"
  std::string variant; // "heuristic", "mode A", "mode B"
  bool ok = false;
  std::string why_not;
  std::string note; // where the library came from and what the plan skipped, for the report
  std::vector<AnchorCandidate> candidates;
  std::shared_ptr<void> state; // handles, descriptors and workspace the candidates use
};

} // namespace tcjit::bench
