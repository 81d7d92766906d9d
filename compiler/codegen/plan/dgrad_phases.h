// Strided dgrad by phases: a convolution's data gradient with stride > 1 computed without the
// zeros between the strides (CUTLASS's strided-dgrad decomposition, in tcjit's own terms).
//
// dx[n][d][h][w][c] = sum over taps (t, r, s) and k of dy[n][o][p][q][k] * filter[k][t][r][s][c]
// with p = (h + pad - r * dil) / stride only when that divides exactly: for stride 2, three of
// every four (h, w, r, s) combinations of a 2-D layer read nothing. Along one dimension (stride S,
// dilation L, pad P, filter R), input coordinate h lies in phase ph = h % S, and tap r contributes
// to it exactly when (ph + P - r * L) % S == 0, which does not depend on h / S. With g = gcd(S, L),
// step = S / g and dstep = L / g, the contributing taps of phase ph are r0, r0 + step, ... < R,
// where a = (ph + P) % S must be a multiple of g (else the phase has no tap), and
//   r0    = ((a / g) * inverse(dstep mod step)) % step,
//   count = r0 < R ? (R - 1 - r0) / step + 1 : 0   (always floor(R / step) or ceil(R / step)),
//   base  = (ph + P - r0 * L) / S                  (exact; may be negative),
// and input h = ph + i * S reads through the phase's j-th tap r = r0 + j * step the output
// coordinate p = i + base - j * dstep (in range when 0 <= p < P_out): no division, no remainder.
//
// Each phase (ph_d, ph_h, ph_w) is a dense implicit GEMM of its own: M = n * rows_d * rows_h *
// rows_w (rows = ceil(extent / S): the phase grid; a pixel ph + i * S beyond the extent is a hole,
// read as zeros and never written), N = Cg, K = count_t * count_r * count_s * Kg, reduction order
// (t, r, s, k) as the reference's, only the zero terms left out. One launch runs them all: grid z =
// phases * groups (z % groups the group, z / groups the phase), grid x over the phase grid's M.
// The kernel takes its K from its phase (a phase without taps runs its single zero-filled
// iteration: alpha * 0 + beta * C, bias, activation, as every pixel must be written), the A gather
// (Gather::strided_phases) and the B gather (Gather::tap_rows_phases) map phase-local (pixel, tap)
// to dy and the filter, and the epilogue maps the row to dx's pixel (dgrad_output_row).
//
// Split-K is not offered for a phased dgrad (its phases have different K): validate_tile_config
// refuses it. Stride 1 in every dimension keeps the plain strided gather (one phase).
#pragma once

#include "compiler/codegen/plan/conv_lowering.h"
#include "compiler/codegen/plan/expr.h"

#include <array>
#include <cstdint>

namespace tcjit::codegen {

// One dimension of the decomposition (d, h or w), from the kernel's constants.
struct PhaseAxis {
  int64_t stride = 1, dilation = 1, pad = 0, filter = 1;
  int64_t extent = 1;     // the input's (dx's) size along it
  int64_t out_extent = 1; // dy's
  int64_t step = 1, dstep = 1, gcd = 1;
  int64_t inverse = 0;              // of dstep modulo step (0 when step == 1)
  int64_t rows = 1;                 // ceil(extent / stride): the phase grid
  int64_t taps_lo = 1, taps_hi = 1; // floor and ceil of filter / step: every non-empty count
};
std::array<PhaseAxis, 3> phase_axes(const ConvConstants &);

// True when a convolution takes the decomposition: dgrad, stride > 1 in some dimension (the
// depthwise kernel excepted: conv_lowering.h decides that before).
bool takes_dgrad_phases(const ConvConstants &);
// stride_d * stride_h * stride_w (1 for conv2d's depth).
int64_t dgrad_phase_count(const ConvConstants &);
// The same for a spec (false for a GEMM and for the depthwise kernel).
bool takes_dgrad_phases(const OpSpec &);

// One phase along one axis, on the host.
struct AxisPhase {
  int64_t first_tap = 0, taps = 0, base = 0;
};
AxisPhase axis_phase(const PhaseAxis &, int64_t phase);

// Host totals: the phase grid's M per image (rows_d * rows_h * rows_w), the most taps of a phase,
// the sum over the phases of their taps (= t*r*s: every tap reaches one phase per dimension), and
// the phases without a tap.
struct PhaseTotals {
  int64_t rows_per_image = 1, max_taps = 0, sum_taps = 0, phases = 1, empty_phases = 0;
};
PhaseTotals phase_totals(const ConvConstants &);

// --- formulas (expr.h), printed by both backends ---

// Phase `phase` (i32, the CTA's: z / groups) along each axis: the first tap, the tap count, the
// base, and the phase coordinate itself (i32).
struct PhaseExprs {
  std::array<Expr, 3> ph, first_tap, taps, base;
};
PhaseExprs phase_exprs(const ConvConstants &, Expr phase);

// The phase's K: taps_t * taps_r * taps_s * Kg (i32).
Expr dgrad_phase_k(const ConvConstants &, Expr phase);

// Gather::strided_phases (dgrad A): outer = phase-grid pixel (n, i_d, i_h, i_w), contig = j * Kg +
// k with j the phase's tap index; `in` is and-ed with the tensor bounds (dy in range, the pixel not
// a hole). Returns {in, element offset in dy from the group's base}.
struct PhaseElement {
  Expr in, elem;
};
PhaseElement strided_phase_element(const ConvConstants &, Expr phase, Expr in, Expr outer,
                                   Expr contig);
// Gather::tap_rows_phases (dgrad B): outer = j * Kg + k, contig = c: filter[k][tap(j)][c].
PhaseElement tap_rows_phase_element(const ConvConstants &, Expr phase, Expr in, Expr outer,
                                    Expr contig);

// The epilogue's row (i32, < the phase grid's M = `m`): `in` when row < m and the pixel is no
// hole, `elem` (i64) its dx pixel index (n, ph_d + i_d * S_d, ...): D's element is elem * ldc +
// col.
PhaseElement dgrad_output_row(const ConvConstants &, Expr phase, Expr row, Expr m);

} // namespace tcjit::codegen
