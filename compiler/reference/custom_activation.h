// The reference of a user-defined activation (`act=custom:FILE`): the CPU cannot run the user's
// CUDA C++, so the reference computes everything before the activation (act none) and applies
// the function through a callback that evaluates it on a device (engine/custom_activation.h).
//
// The tolerance then cannot use a Lipschitz bound of act (it is unknown): per element, with x the
// pre-activation value and d its tolerance (pre_activation_tolerance, plus 2 units in the last
// place of the epilogue type), the spread max |act(x +- d) - act(x)| * 1.25 replaces L * d. It
// measures the function where the kernel evaluates it: steep or discontinuous regions get a wide
// tolerance exactly where a correct kernel's rounding can move the result.
#pragma once

#include "compiler/reference/reference_result.h"
#include "compiler/reference/tolerance.h"

#include <functional>
#include <span>
#include <vector>

namespace tcjit {

// act at each point, in order (the same count).
using ActivationEvaluator = std::function<std::vector<double>(std::span<const double>)>;

// `reference` holds the pre-activation values (computed with act none); afterwards values are
// act(x) and activation_spreads is set. One call of `evaluate` with 3 points per element. Throws
// std::invalid_argument when `evaluate` returns the wrong count.
void apply_custom_activation(ReferenceResult &reference, const ToleranceModel &model,
                             const ActivationEvaluator &evaluate);

} // namespace tcjit
