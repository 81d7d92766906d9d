// Test helpers for the cuDNN anchor's tests: f16 inputs and tcjit's CPU reference
// (compiler/reference/conv_reference.h) for a race convolution (bench/gpu_tool/problems.h).
#pragma once

#include "bench/gpu_tool/problems.h"
#include "compiler/reference/conv_reference.h"
#include "compiler/reference/numeric_convert.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace tcjit::bench::testing {

// Multiples of 1/8 in [-1, 1]: exact in f16, and their products and sums exact in f32, so the
// only error of a correct convolution with f32 accumulation is the rounding of each output.
inline std::vector<uint16_t> random_eighths_f16(int64_t count, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_int_distribution<int> eighths(-8, 8);
  std::vector<uint16_t> values;
  for (int64_t i = 0; i < count; ++i) {
    values.push_back(f32_to_f16_bits(static_cast<float>(eighths(generator)) / 8.0f));
  }
  return values;
}

// The element counts of x (n*h*w*c), w (k*r*s*c/groups) and y (n*p*q*k).
inline int64_t x_count(const ConvProblem &p) {
  return p.n * p.h * p.w * p.c;
}
inline int64_t w_count(const ConvProblem &p) {
  return p.k * p.r * p.s * (p.c / p.groups);
}
inline int64_t y_count(const ConvProblem &p) {
  return p.n * p.p() * p.q() * p.k;
}

// tcjit's reference for the problem's pass on f16 tensors x, w, y (NHWC, KRSC): the written
// tensor's values (and magnitudes) in its memory order.
inline ReferenceResult reference_output(const ConvProblem &p, std::vector<uint16_t> x,
                                        std::vector<uint16_t> w, std::vector<uint16_t> y) {
  OpSpec spec;
  spec.kind = OpKind::conv2d;
  ConvSpec &c = spec.conv;
  c.n = Dim::fixed_size(p.n);
  c.h = p.h;
  c.w = p.w;
  c.c = p.c;
  c.k = p.k;
  c.r = p.r;
  c.s = p.s;
  c.pad = {0, p.pad_h, p.pad_w};
  c.stride = {1, p.stride_h, p.stride_w};
  c.dilation = {1, p.dilation_h, p.dilation_w};
  c.groups = p.groups;
  c.pass = p.pass == "fprop"   ? ConvPass::fprop
           : p.pass == "dgrad" ? ConvPass::dgrad
                               : ConvPass::wgrad;
  c.x = TensorOperand{DType::f16, TensorLayout::nhwc};
  c.y = TensorOperand{DType::f16, TensorLayout::nhwc};
  c.filter = TensorOperand{DType::f16, TensorLayout::krsc};
  spec.acc = DType::f32;
  spec.math = MathMode::f32;
  return reference_conv(spec, {x.data(), w.data(), y.data(), nullptr}, MathMode::f32);
}

} // namespace tcjit::bench::testing
