// The epilogue D = act(alpha * acc + beta * C + bias), in f64, and its application to a whole
// output.
#pragma once

#include "compiler/reference/output_layout.h"
#include "compiler/reference/reference_result.h"
#include "tcjit/op_spec.h"

#include <vector>

namespace tcjit {

struct EpilogueValue {
  double value;     // act(alpha * acc + beta * c + bias)
  double magnitude; // |alpha| * acc_abs_sum + |beta * c| + |bias|
};

// `c` is ignored when beta is 0 (C is then not read at all, as in cuBLAS); pass 0 for no bias.
EpilogueValue apply_epilogue(const Epilogue &epilogue, double acc, double acc_abs_sum, double c,
                             double bias);

// Finishes a reference computation: for every output element (in `layout` order) applies the
// spec's epilogue to accumulators[e] (sum a*b) and abs_sums[e] (sum |a||b|), reading C from
// `output` when beta != 0 and the bias (of the output dtype) from `bias`, then writes D, rounded
// to the output dtype, into `output`. Throws std::invalid_argument when a bias is required and
// `bias` is null.
ReferenceResult finish_reference(const OpSpec &spec, const OutputLayout &layout,
                                 ReferenceValues accumulators, ReferenceValues abs_sums,
                                 void *output, const void *bias);

} // namespace tcjit
