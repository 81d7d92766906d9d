#include "compiler/codegen/plan/epilogue_loop.h"

namespace tcjit::codegen {

bool activation_is_heavy(Activation act) {
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

void plan_epilogue_loop(KernelPlan &p) {
  // Each backend loops over its passes where it has more than one (a loop of one is no loop).
  p.epilogue_loop = !p.integer_identity && activation_is_heavy(p.epilogue.act);
}

} // namespace tcjit::codegen
