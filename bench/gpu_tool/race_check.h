// The race's operands on the host (random, as tcjit's own verification fills them) and the check
// of an output copied back from the device against the CPU reference of the same inputs under
// tcjit's tolerance model (compiler/reference/tolerance.h). The reference is computed once per
// problem, on the first check, and reused for every output checked; for a problem whose reference
// would take more than a budget of multiply-adds, a part of the output is checked (a GEMM's first
// and last rows of every batch, a convolution's first image) and the check says which.
#pragma once

#include "bench/gpu_tool/race.h"
#include "compiler/reference/reference_result.h"
#include "tcjit/op_spec.h"

#include <cstddef>
#include <optional>
#include <vector>

namespace tcjit::bench {

// A concrete GEMM or convolution spec's inputs: GEMM a, b, bias; convolution x, filter, y (the
// tensors the pass reads; the written one is filled too and not read, beta being 0).
struct ProblemInputs {
  OpSpec spec;
  std::vector<std::byte> a, b, bias;   // GEMM
  std::vector<std::byte> x, filter, y; // convolution
};

ProblemInputs random_inputs(const OpSpec &spec, uint64_t seed);

// Bytes of the spec's output (D, or the tensor the pass writes).
size_t output_bytes(const OpSpec &spec);
// Multiply-adds of the spec's implicit GEMM (2 * this = its FLOP).
double multiply_adds(const OpSpec &spec);

class OutputChecker {
public:
  // `inputs` must outlive the checker.
  OutputChecker(const ProblemInputs &inputs, double max_macs);
  // `output`: output_bytes(spec) bytes copied back from the device. Throws std::invalid_argument
  // when it has another size, and what the reference throws for a spec it does not compute.
  Verification check(const std::vector<std::byte> &output);

private:
  void prepare_reference();
  const ProblemInputs &inputs_;
  double max_macs_;
  bool prepared_ = false;
  std::string why_unchecked_; // the output is not checked at all
  OpSpec checked_spec_;       // the spec of the part checked
  std::string part_;
  int64_t rows_half_ = 0;    // GEMM: rows checked at the start and at the end of each batch
  bool first_image_ = false; // convolution: image 0 only
  std::optional<ReferenceResult> reference_;
};

} // namespace tcjit::bench
