// A convolution as an implicit GEMM: the GEMM the kernel computes (its "view"), how each view
// operand's tile is gathered from the convolution's tensors, and the geometry the kernel bakes in.
//
// Per group g (the view's batch index; grid z = groups), channels-last tensors (NHWC/NDHWC, KRSC/
// KTRSC), taps = T*R*S, Cg = C/groups, Kg = K/groups:
//
//   pass   view M        view N       view K        A (m x k)             B (k x n)
//   fprop  N*O*P*Q       Kg           taps*Cg       x, im2col gather      filter, col-major
//   dgrad  N*D*H*W       Cg           taps*Kg       dy, strided gather    filter, tap-row gather
//   wgrad  Kg            taps*Cg      N*O*P*Q       dy^T, col-major       x, im2col gather
//
// and C/D is y (fprop, ld = K), dx (dgrad, ld = C) or dw (wgrad, ld = taps*Cg), row-major. The
// reduction index orders are those of reference_conv: fprop (t, r, s, c), dgrad (t, r, s, k),
// wgrad (n, o, p, q). An operand tile is gathered in its own (outer, contiguous) coordinates
// (kernel_plan.h: rows x cols, cols contiguous):
//   im2col    outer = output pixel (n, o, p, q), contiguous = tap * Cg + c:
//             x[n][o*sd - pd + t*dd][p*sh - ph + r*dh][q*sw - pw + s*dw][c], zero in the padding.
//   strided   outer = input pixel (n, d, h, w), contiguous = tap * Kg + k: dy[n][o][p][q][k] with
//             o = (d + pd - t*dd) / sd when that divides exactly and is in range, else zero.
//   tap_rows  outer = tap * Kg + k, contiguous = c: filter[k][tap][c].
// A vector of the gather never straddles a tap: its width divides the channels per group.
// Group g starts at channel g*Cg (x), g*Kg (y), filter row g*Kg: the view's batch strides.
//
// Depthwise convolutions (groups = c = k, fprop and dgrad) take another path: as an implicit GEMM
// each group has N = 1, and an m16n8 mma would compute 1 of its 8 columns. Their kernel
// (depthwise.h) computes each output directly, one thread per output element in turn, f32 (f64,
// s32) multiply-adds over the taps: the view is then M = output pixels, N = channels, K = taps,
// batch 1, and A (x, or dy for dgrad) is read per element, consecutive threads on consecutive
// channels. wgrad of a depthwise convolution (a reduction over n*o*p*q per filter element) stays
// the grouped implicit GEMM.
//
// Only the batch size n is a run-time value (it scales M, or K for wgrad); every other size is a
// constant of the kernel (part of its identity), so one kernel serves a layer at any batch size.
#pragma once

#include "compiler/reference/gemm_geometry.h"
#include "tcjit/op_spec.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>

namespace tcjit::codegen {

enum class Gather {
  linear,   // a matrix: outer * ld + contiguous
  im2col,   // x through the filter taps
  strided,  // dy through the filter taps, backwards (dgrad)
  tap_rows, // the filter with rows (tap, k) (dgrad)
  // Strided dgrad by phases (dgrad_phases.h): the two gathers of one phase's dense implicit GEMM
  strided_phases,  // dy through the phase's taps (dgrad A)
  tap_rows_phases, // the filter rows of the phase's taps (dgrad B)
};
std::string_view to_string(Gather);

// The sizes the generated conv kernel holds as constants (everything but the batch n).
struct ConvConstants {
  ConvPass pass = ConvPass::fprop;
  bool three_d = false;
  int64_t d = 1, h = 1, w = 1, c = 1; // x
  int64_t k = 1, t = 1, r = 1, s = 1; // filter
  int64_t o = 1, p = 1, q = 1;        // y
  std::array<int64_t, 3> pad{0, 0, 0}, stride{1, 1, 1}, dilation{1, 1, 1};
  int64_t groups = 1, cg = 1, kg = 1;
  int64_t taps() const { return t * r * s; }
  bool operator==(const ConvConstants &) const = default;
};

// "conv2d fprop h56 w56 c64 k64 r3 s3 pad 1,1 stride 1,1 dil 1,1 groups 1": what the kernel bakes
// in, for its identity and name.
std::string describe(const ConvConstants &);

struct ConvLowering {
  OpSpec view;               // kind gemm: dtypes, layouts, M/N/K (per group), batch = groups
  ConvConstants conv;        // the constants of the kernel
  Gather a = Gather::linear; // how the view's A tile is gathered
  Gather b = Gather::linear; // ... and B's
  bool depthwise = false;    // the direct depthwise kernel (view: pixels x channels x taps)
  int max_vec_a = 1;         // widest legal vector of each view operand, in elements
  int max_vec_b = 1;
  int max_vec_c = 1;
};

// Why a convolution's tensors cannot be read by the implicit-GEMM kernels: a channels-first
// layout, with the conversion to make ("" when every tensor is channels-last).
std::string channels_first_problem(const OpSpec &conv);

// Why the kernels' 32-bit coordinate arithmetic cannot hold a convolution ("" when it can): per
// spatial dimension, input + pad + output * stride + filter * dilation must stay below 2^31.
std::string coordinate_range_problem(const OpSpec &conv);

// The implicit GEMM of a convolution spec (valid, channels-last; n may be symbolic). Throws
// std::invalid_argument for a GEMM spec or a channels-first layout (channels_first_problem).
ConvLowering lower_conv(const OpSpec &conv);

// Channel padding (TileConfig::pad_c): a convolution fprop with one group whose c does not fill a
// 16-byte vector of its dtype (c = 3 for f16) may be computed on copies of x and the filter with c
// zero-padded to the next multiple of that vector (the zeros add nothing to y). The padded channel
// count, or nullopt when padding does not apply.
std::optional<int64_t> channel_padding_target(const OpSpec &spec);
// `spec` with c = `channels` (x and the filter as the padded copies).
OpSpec padded_conv(const OpSpec &spec, int64_t channels);

// True when `spec` takes the depthwise kernel (see above).
bool is_depthwise_path(const OpSpec &spec);

// The view for any spec: a GEMM spec as it is, a convolution's lower_conv(spec).view.
OpSpec gemm_view(const OpSpec &spec);

// The widest legal global vector of the view's a, b, c in elements (analyze_alignment for a GEMM,
// the gathers' channel runs for a convolution).
struct ViewVectorLimits {
  int a = 1, b = 1, c = 1;
};
ViewVectorLimits view_vector_limits(const OpSpec &spec);

// The launch geometry of a concrete spec's view: M/N/K, batch (= groups), and per operand the ld
// and batch stride the kernel receives (kernel_abi.h). For a GEMM this is gemm_geometry(spec).
// For a gathered conv operand, ld is its channel stride (informational: the gather uses the
// constants). A strided dgrad by phases (dgrad_phases.h) launches M = n * the phase grid's pixels
// per image, K = the most taps of a phase * Kg (each CTA takes its phase's own), batch = groups *
// phases. Throws std::invalid_argument when M, N or K exceed 2^31 - 1.
GemmGeometry launch_geometry(const OpSpec &spec);

// The roles of a convolution's tensors in the view: which of x, filter, y is A, B and C/D.
enum class ConvTensor { x, filter, y };
struct ConvRoles {
  ConvTensor a, b, c;
};
ConvRoles conv_roles(ConvPass);

} // namespace tcjit::codegen
