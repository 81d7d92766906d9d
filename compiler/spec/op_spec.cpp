#include "tcjit/op_spec.h"

#include <cstdlib>
#include <cstring>

namespace tcjit {

std::string_view to_string(DType t) {
  switch (t) {
  case DType::f16: return "f16";
  case DType::bf16: return "bf16";
  case DType::tf32: return "tf32";
  case DType::f32: return "f32";
  case DType::f64: return "f64";
  case DType::s8: return "s8";
  case DType::u8: return "u8";
  case DType::s32: return "s32";
  case DType::s4: return "s4";
  case DType::u4: return "u4";
  case DType::e4m3: return "e4m3";
  case DType::e5m2: return "e5m2";
  }
  return "?";
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

int dtype_bits(DType t) {
  switch (t) {
  case DType::f16:
  case DType::bf16: return 16;
  case DType::tf32:
  case DType::f32:
  case DType::s32: return 32;
  case DType::f64: return 64;
  case DType::s8:
  case DType::u8:
  case DType::e4m3:
  case DType::e5m2: return 8;
  case DType::s4:
  case DType::u4: return 4;
  }
  return 0;
}

bool is_float_type(DType t) {
  switch (t) {
  case DType::f16:
  case DType::bf16:
  case DType::tf32:
  case DType::f32:
  case DType::f64:
  case DType::e4m3:
  case DType::e5m2: return true;
  case DType::s8:
  case DType::u8:
  case DType::s32:
  case DType::s4:
  case DType::u4: return false;
  }
  return false;
}

bool is_integer_type(DType t) {
  return !is_float_type(t);
}

bool is_reserved_type(DType t) {
  return t == DType::s4 || t == DType::u4 || t == DType::e4m3 || t == DType::e5m2;
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
