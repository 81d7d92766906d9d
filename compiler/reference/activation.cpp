#include "compiler/reference/activation.h"

#include <cmath>
#include <numbers>
#include <stdexcept>

namespace tcjit {

namespace {

double sigmoid(double x) {
  if (x >= 0)
    return 1.0 / (1.0 + std::exp(-x));
  const double e = std::exp(x);
  return e / (1.0 + e);
}

} // namespace

double apply_activation(Activation act, double x) {
  switch (act) {
  case Activation::none: return x;
  case Activation::relu: return x > 0 ? x : (std::isnan(x) ? x : 0.0);
  case Activation::tanh: return std::tanh(x);
  case Activation::sigmoid: return sigmoid(x);
  case Activation::elu: return x > 0 ? x : std::expm1(x);
  // 0.5x(1 + erf(x/sqrt2)) == 0.5x erfc(-x/sqrt2), which does not cancel for negative x.
  case Activation::gelu: return 0.5 * x * std::erfc(-x / std::sqrt(2.0));
  case Activation::gelu_tanh: {
    // 0.5(1 + tanh(u)) == sigmoid(2u), which does not cancel for negative x.
    const double u = std::sqrt(2.0 / std::numbers::pi) * (x + 0.044715 * x * x * x);
    return x * sigmoid(2.0 * u);
  }
  case Activation::softplus: return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
  case Activation::swish: return x * sigmoid(x);
  case Activation::custom:
    throw std::invalid_argument("tcjit reference: act=custom is the user's CUDA C++ function; the "
                                "reference evaluates it on the device (apply_custom_activation)");
  }
  return x;
}

double activation_lipschitz_bound(Activation act) {
  switch (act) {
  case Activation::none:
  case Activation::relu:
  case Activation::tanh:
  case Activation::elu:
  case Activation::softplus: return 1.0;
  case Activation::sigmoid: return 0.25;
  case Activation::gelu:      // max gelu' = 1.1289 at x = sqrt(2)
  case Activation::gelu_tanh: // max = 1.1297
    return 1.13;
  case Activation::swish: return 1.1; // max swish' = 1.0998 at x = 2.3994
  case Activation::custom: return 0;  // unknown: the reference measures it per element
  }
  return 1.13;
}

bool activation_is_transcendental(Activation act) {
  switch (act) {
  case Activation::none:
  case Activation::relu: return false;
  case Activation::tanh:
  case Activation::sigmoid:
  case Activation::elu:
  case Activation::gelu:
  case Activation::gelu_tanh:
  case Activation::softplus:
  case Activation::swish:
  case Activation::custom: return true;
  }
  return true;
}

} // namespace tcjit
