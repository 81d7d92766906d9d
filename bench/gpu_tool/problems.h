// The problems bench/gpu races tcjit against cuBLASLt and cuDNN on, and the device operands an
// anchor (cublaslt_anchor.h, cudnn_anchor.h) runs on. Plain data shared by the race driver
// (race.cpp) and the anchors; bench/README.md ("bench/gpu") lists the problems.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tcjit::bench {

// A GEMM D = epilogue(A x B), A row-major m x k, B column-major (k x n stored as n columns of k),
// D row-major m x n; `batch` independent GEMMs packed one after another (strides m*k, k*n, m*n).
// dtype: "f16" and "bf16" (f16/bf16 in and out, f32 accumulate), "tf32" (f32 in and out, TF32
// math), "s8" (s8 in, s32 out). bias_gelu: D = gelu(A x B + bias[n]) (bias of D's type; for s8 an
// f32 bias is not offered by the anchors, and they say so).
struct GemmProblem {
  std::string name; // "4096^3", "bert_qkv", ...
  int64_t m = 0, n = 0, k = 0, batch = 1;
  std::string dtype;
  bool bias_gelu = false;
};

// A 2-D convolution, f16 NHWC tensors (x: n*h*w*c, w: k*r*s*(c/groups) KRSC, y: n*p*q*k), f32
// accumulate, cross-correlation as cuDNN's CUDNN_CROSS_CORRELATION and tcjit's conv2d.
// pass: "fprop" (y from x, w), "dgrad" (dx from dy, w), "wgrad" (dw from x, dy).
struct ConvProblem {
  std::string name; // the README workload's layer name, e.g. "res2_3x3"
  std::string pass;
  int64_t n = 0, h = 0, w = 0, c = 0, k = 0, r = 1, s = 1;
  int64_t pad_h = 0, pad_w = 0, stride_h = 1, stride_w = 1, dilation_h = 1, dilation_w = 1;
  int64_t groups = 1;
  int64_t p() const { return (h + 2 * pad_h - dilation_h * (r - 1) - 1) / stride_h + 1; }
  int64_t q() const { return (w + 2 * pad_w - dilation_w * (s - 1) - 1) / stride_w + 1; }
};

// Device addresses (CUdeviceptr values) of a GEMM's operands, all of the problem's dtype except
// d (s32 for s8) and bias (n elements; 0 when the problem has no bias).
struct GemmOperands {
  uint64_t a = 0, b = 0, bias = 0, d = 0;
};

// Device addresses of a convolution's tensors, f16 NHWC / KRSC. For fprop x and w are read and y
// written; dgrad reads dy (in y) and w and writes dx (in x); wgrad reads x and dy (in y) and
// writes dw (in w).
struct ConvOperands {
  uint64_t x = 0, w = 0, y = 0;
};

// The problems of a full run and of --quick (a subset of each list).
std::vector<GemmProblem> race_gemm_problems(bool quick);
std::vector<ConvProblem> race_conv_problems(bool quick);

} // namespace tcjit::bench
