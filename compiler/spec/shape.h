// Derived shapes of an OpSpec: convolution output sizes, the implicit-GEMM view, operand sizes.
#pragma once

#include "tcjit/op_spec.h"

#include <array>
#include <cstdint>
#include <optional>

namespace tcjit {

// Output spatial sizes of a convolution: o (depth), p (height), q (width). For conv2d o == 1.
// out = (in + 2*pad - dilation*(filter-1) - 1) / stride + 1; a value < 1 means the filter does not
// fit the padded input (validate() reports it).
struct ConvOutputDims {
  int64_t o = 1, p = 1, q = 1;
};
ConvOutputDims conv_output_dims(const ConvSpec &);

// The GEMM a convolution is computed as, per group (cuDNN/CUTLASS implicit GEMM):
//   fprop: M = N*O*P*Q, N = K/groups, K = T*R*S*C/groups
//   dgrad: M = N*D*H*W, N = C/groups, K = T*R*S*K/groups
//   wgrad: M = K/groups, N = T*R*S*C/groups, K = N*O*P*Q
// `groups` independent GEMMs are computed (groups == 1 for a plain GEMM, whose `batch` is
// reported separately). M is symbolic (nullopt) when it depends on a symbolic batch size n;
// for wgrad it is K that is symbolic then.
struct ImplicitGemm {
  Dim m, n, k;
  Dim batch; // GEMM batch count (1 for convolutions)
  int64_t groups = 1;
};
ImplicitGemm implicit_gemm(const OpSpec &);

// A depthwise convolution: groups = c = k > 1 (one input and one output channel per group). Its
// fprop and dgrad run on a direct kernel without tensor cores (see choose_mma).
bool is_depthwise(const OpSpec &);
bool takes_depthwise_kernel(const OpSpec &); // is_depthwise and pass fprop or dgrad

// True when every dimension is a fixed size (no `?` and no ranges).
bool is_concrete(const OpSpec &);

// Element counts of each operand of a concrete spec, per the spec's own roles.
// GEMM: a = batch*m*k (respecting lda), b, c likewise; bias = m (row) or n (col).
// Conv: x = n*d*h*w*c, filter = k*t*r*s*(c/groups), y = n*o*p*q*k; bias = channels of the output.
struct OperandSizes {
  int64_t a = 0, b = 0, c = 0, bias = 0; // GEMM
  int64_t x = 0, filter = 0, y = 0;      // convolution
};
OperandSizes operand_sizes(const OpSpec &);

// Floating-point (or integer) operations of one execution for a concrete spec: 2*M*N*K*batch of
// a GEMM; of a convolution, in every pass, the forward one's 2*n*o*p*q*k*(c/groups)*t*r*s (a
// strided dgrad's implicit GEMM is larger: it also multiplies zeros). nullopt when a size is
// symbolic.
std::optional<double> flop_count(const OpSpec &);

// Bytes moved at minimum (each operand read once, output written once; C read when beta != 0).
std::optional<double> min_bytes(const OpSpec &);

} // namespace tcjit
