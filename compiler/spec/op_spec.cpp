#include "tcjit/op_spec.h"

#include "compiler/target/dtype_info.h"

#include <cstdlib>
#include <cstring>

namespace tcjit {

std::string_view to_string(DType t) {
  return dtype_info(t).name;
}

std::string_view to_string(OpKind k) {
  switch (k) {
  case OpKind::gemm: return "gemm";
  case OpKind::conv2d: return "conv2d";
  case OpKind::conv3d: return "conv3d";
  }
  return "?";
}

std::string_view to_string(MatrixLayout l) {
  switch (l) {
  case MatrixLayout::row: return "row";
  case MatrixLayout::col: return "col";
  }
  return "?";
}

std::string_view to_string(TensorLayout l) {
  switch (l) {
  case TensorLayout::nhwc: return "nhwc";
  case TensorLayout::nchw: return "nchw";
  case TensorLayout::ndhwc: return "ndhwc";
  case TensorLayout::ncdhw: return "ncdhw";
  case TensorLayout::krsc: return "krsc";
  case TensorLayout::kcrs: return "kcrs";
  case TensorLayout::ktrsc: return "ktrsc";
  case TensorLayout::kctrs: return "kctrs";
  }
  return "?";
}

std::string_view to_string(MathMode m) {
  switch (m) {
  case MathMode::automatic: return "auto";
  case MathMode::tf32: return "tf32";
  case MathMode::f32: return "f32";
  }
  return "?";
}

std::string_view to_string(BiasKind b) {
  switch (b) {
  case BiasKind::none: return "none";
  case BiasKind::row: return "row";
  case BiasKind::col: return "col";
  }
  return "?";
}

std::string_view to_string(Activation a) {
  switch (a) {
  case Activation::none: return "none";
  case Activation::relu: return "relu";
  case Activation::tanh: return "tanh";
  case Activation::sigmoid: return "sigmoid";
  case Activation::elu: return "elu";
  case Activation::gelu: return "gelu";
  case Activation::gelu_tanh: return "gelu_tanh";
  case Activation::softplus: return "softplus";
  case Activation::swish: return "swish";
  case Activation::custom: return "custom";
  }
  return "?";
}

std::string_view to_string(ConvPass p) {
  switch (p) {
  case ConvPass::fprop: return "fprop";
  case ConvPass::dgrad: return "dgrad";
  case ConvPass::wgrad: return "wgrad";
  }
  return "?";
}

std::string_view to_string(Sparsity s) {
  switch (s) {
  case Sparsity::dense: return "dense";
  case Sparsity::two_four: return "2:4";
  }
  return "?";
}

std::string_view to_string(BitOp o) {
  switch (o) {
  case BitOp::and_popc: return "and";
  case BitOp::xor_popc: return "xor";
  }
  return "?";
}

int dtype_bits(DType t) {
  return dtype_info(t).bits;
}

bool is_float_type(DType t) {
  return dtype_info(t).is_float;
}

bool is_integer_type(DType t) {
  return !dtype_info(t).is_float;
}

bool is_reserved_type(DType t) {
  return dtype_info(t).reserved;
}

MathMode resolve_math(MathMode m, bool tf32_override_off) {
  if (m != MathMode::automatic)
    return m;
  return tf32_override_off ? MathMode::f32 : MathMode::tf32;
}

bool tf32_disabled_by_environment() {
  const char *v = std::getenv("NVIDIA_TF32_OVERRIDE");
  return v != nullptr && std::strcmp(v, "0") == 0;
}

} // namespace tcjit
