// The epilogue's activation functions, in double, and the facts the tolerance model needs.
#pragma once

#include "tcjit/op_spec.h"

namespace tcjit {

// act(x), evaluated stably in double:
//   relu max(x, 0); tanh; sigmoid 1/(1+e^-x); elu (alpha 1) x > 0 ? x : expm1(x);
//   gelu 0.5x(1+erf(x/sqrt2)); gelu_tanh 0.5x(1+tanh(sqrt(2/pi)(x+0.044715x^3)));
//   softplus log1p(e^x); swish x*sigmoid(x).
double apply_activation(Activation act, double x);

// An upper bound of |act'(x)| over all x: how much an error before the activation can grow.
double activation_lipschitz_bound(Activation act);

// True when the device evaluates the activation with transcendental functions (exp, tanh, erf),
// whose own rounding errors the tolerance model must allow for.
bool activation_is_transcendental(Activation act);

} // namespace tcjit
