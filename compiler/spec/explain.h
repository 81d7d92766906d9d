// `tcjit explain`: everything tcjit knows about one spec before compiling it.
#pragma once

#include "compiler/spec/alignment.h"
#include "compiler/spec/problem_key.h"
#include "compiler/spec/shape.h"
#include "compiler/spec/tensor_core_rules.h"
#include "tcjit/op_spec.h"

#include <optional>
#include <string>
#include <vector>

namespace tcjit {

struct Explanation {
  std::string canonical; // print_spec
  ProblemKey key;
  std::string arch;
  ImplicitGemm gemm; // the (implicit) GEMM shape
  std::optional<ConvOutputDims> conv_output;
  std::optional<double> flops;
  std::optional<double> bytes;
  std::optional<double> arithmetic_intensity; // flops / bytes
  bool integer_ops = false;                   // s8/u8 inputs: OP/s rather than FLOP/s
  // The roofline of the arch's GPU (compiler/target/arch.h: the figures the tuner's model takes).
  std::string roofline_gpu;
  double peak_ops = 0;                // for the input type and math; 0 when it does not compile
  double bandwidth = 0;               // bytes/s
  std::optional<double> roofline_ops; // min(peak, intensity * bandwidth)
  std::vector<OperandAlignment> alignment;
  MmaChoice mma;
  std::vector<RuleFinding> findings;
};

// The spec must be valid (validate_spec) and the arch known (find_arch).
Explanation explain_spec(const OpSpec &, std::string_view arch, bool tf32_override_off);

// The human-readable report printed by `tcjit explain`.
std::string render_explanation(const Explanation &);

} // namespace tcjit
