#include "compiler/codegen/plan/dgrad_phases.h"

#include <algorithm>
#include <numeric>
#include <utility>

namespace tcjit::codegen {

namespace {

int64_t modular_inverse(int64_t value, int64_t modulus) {
  for (int64_t x = 1; x < modulus; ++x)
    if (value * x % modulus == 1)
      return x;
  return 0; // modulus 1
}

PhaseAxis make_axis(int64_t stride, int64_t dilation, int64_t pad, int64_t filter, int64_t extent,
                    int64_t out_extent) {
  PhaseAxis a;
  a.stride = stride;
  a.dilation = dilation;
  a.pad = pad;
  a.filter = filter;
  a.extent = extent;
  a.out_extent = out_extent;
  a.gcd = std::gcd(stride, dilation);
  a.step = stride / a.gcd;
  a.dstep = dilation / a.gcd;
  a.inverse = modular_inverse(a.dstep % a.step, a.step);
  a.rows = (extent + stride - 1) / stride;
  a.taps_lo = filter / a.step;
  a.taps_hi = (filter + a.step - 1) / a.step;
  return a;
}

// value / d and value % d for a constant d (no operation for d == 1).
std::pair<Expr, Expr> divmod(Expr value, int64_t d) {
  if (d == 1)
    return {value, constant_like(value, 0)};
  return {value / d, value % d};
}

// value / taps and value % taps for a phase's tap count `taps` along `axis`: one of the two
// constants taps_lo, taps_hi (a count of 0 has no tap to split), so two divisions by constants and
// a select instead of a division by a run-time value.
std::pair<Expr, Expr> divmod_taps(Expr value, const PhaseAxis &axis, Expr taps) {
  const int64_t hi = axis.taps_hi, lo = axis.taps_lo > 0 ? axis.taps_lo : hi;
  if (lo == hi)
    return divmod(value, hi);
  Expr q = select(eq(taps, hi), value / hi, value / lo);
  return {q, value - q * taps};
}

// The phase-grid pixel (n, i_d, i_h, i_w) of a row, n last (the run-time dimension).
struct GridPixel {
  Expr n;
  std::array<Expr, 3> i;
};
GridPixel split_grid(Expr row, const std::array<PhaseAxis, 3> &axes) {
  auto [rest1, iw] = divmod(row, axes[2].rows);
  auto [rest2, ih] = divmod(rest1, axes[1].rows);
  auto [n, id] = divmod(rest2, axes[0].rows);
  return {n, {id, ih, iw}};
}

// ((n * e0 + v0) * e1 + v1) * e2 + v2 in i64 (v: i32).
Expr pixel_index(Expr n, const std::array<Expr, 3> &v, const std::array<int64_t, 3> &extent) {
  Expr x = zext64(n);
  for (int dim = 0; dim < 3; ++dim)
    x = x * extent[static_cast<size_t>(dim)] + zext64(v[static_cast<size_t>(dim)]);
  return x;
}

// `in` and-ed with "the pixel ph + i * S is inside the extent" where the phase grid has holes.
Expr not_a_hole(Expr in, const PhaseAxis &axis, Expr ph, Expr i) {
  if (axis.extent % axis.stride == 0)
    return in;
  return in & ult(ph + i * axis.stride, axis.extent);
}

// The phase's tap index j split into (j_t, j_r, j_s).
std::array<Expr, 3> split_taps(Expr j, const std::array<PhaseAxis, 3> &axes, const PhaseExprs &ph) {
  auto [rest, js] = divmod_taps(j, axes[2], ph.taps[2]);
  auto [jt, jr] = divmod_taps(rest, axes[1], ph.taps[1]);
  return {jt, jr, js};
}

} // namespace

std::array<PhaseAxis, 3> phase_axes(const ConvConstants &k) {
  return {make_axis(k.stride[0], k.dilation[0], k.pad[0], k.t, k.d, k.o),
          make_axis(k.stride[1], k.dilation[1], k.pad[1], k.r, k.h, k.p),
          make_axis(k.stride[2], k.dilation[2], k.pad[2], k.s, k.w, k.q)};
}

bool takes_dgrad_phases(const ConvConstants &k) {
  return k.pass == ConvPass::dgrad && dgrad_phase_count(k) > 1;
}

bool takes_dgrad_phases(const OpSpec &spec) {
  if (spec.kind == OpKind::gemm || spec.conv.pass != ConvPass::dgrad || is_depthwise_path(spec))
    return false;
  const auto &st = spec.conv.stride;
  return (spec.kind == OpKind::conv3d ? st[0] : 1) * st[1] * st[2] > 1;
}

int64_t dgrad_phase_count(const ConvConstants &k) {
  return (k.three_d ? k.stride[0] : 1) * k.stride[1] * k.stride[2];
}

AxisPhase axis_phase(const PhaseAxis &axis, int64_t phase) {
  AxisPhase out;
  const int64_t a = (phase + axis.pad) % axis.stride;
  if (a % axis.gcd != 0)
    return out;
  out.first_tap = axis.step == 1 ? 0 : (a / axis.gcd) * axis.inverse % axis.step;
  if (out.first_tap >= axis.filter)
    return out;
  out.taps = (axis.filter - 1 - out.first_tap) / axis.step + 1;
  const int64_t num = phase + axis.pad - out.first_tap * axis.dilation;
  out.base = num >= 0 ? num / axis.stride : -((-num) / axis.stride); // exact
  return out;
}

PhaseTotals phase_totals(const ConvConstants &k) {
  const std::array<PhaseAxis, 3> axes = phase_axes(k);
  PhaseTotals t;
  t.phases = dgrad_phase_count(k);
  for (const PhaseAxis &a : axes)
    t.rows_per_image *= a.rows;
  for (int64_t pd = 0; pd < axes[0].stride; ++pd)
    for (int64_t ph = 0; ph < axes[1].stride; ++ph)
      for (int64_t pw = 0; pw < axes[2].stride; ++pw) {
        const int64_t taps = axis_phase(axes[0], pd).taps * axis_phase(axes[1], ph).taps *
                             axis_phase(axes[2], pw).taps;
        t.max_taps = std::max(t.max_taps, taps);
        t.sum_taps += taps;
        t.empty_phases += taps == 0 ? 1 : 0;
      }
  return t;
}

PhaseExprs phase_exprs(const ConvConstants &k, Expr phase) {
  const std::array<PhaseAxis, 3> axes = phase_axes(k);
  PhaseExprs e;
  auto [rest, pw] = divmod(phase, axes[2].stride);
  auto [pd, ph] = divmod(rest, axes[1].stride);
  e.ph = {pd, ph, pw};
  for (size_t dim = 0; dim < 3; ++dim) {
    const PhaseAxis &a = axes[dim];
    Expr p = e.ph[dim];
    if (a.stride == 1) { // one phase: every tap, base = pad
      e.first_tap[dim] = constant_like(phase, 0);
      e.taps[dim] = constant_like(phase, a.filter);
      e.base[dim] = p + a.pad;
      continue;
    }
    Expr rem = (p + a.pad) % a.stride;
    Expr first = a.step == 1 ? constant_like(phase, 0) : ((rem / a.gcd) * a.inverse) % a.step;
    Expr ok = ult(first, a.filter);
    if (a.gcd > 1)
      ok = ok & eq(rem % a.gcd, 0);
    e.first_tap[dim] = first;
    e.taps[dim] = select(ok, ((a.filter - 1) - first) / a.step + 1, 0);
    // (ph + pad - first * L) / S, made non-negative first: first * L < S * L
    e.base[dim] = ((p + (a.pad + a.stride * a.dilation)) - first * a.dilation) / a.stride -
                  constant_like(phase, a.dilation);
  }
  return e;
}

Expr dgrad_phase_k(const ConvConstants &k, Expr phase) {
  const PhaseExprs e = phase_exprs(k, phase);
  return ((e.taps[0] * e.taps[1]) * e.taps[2]) * k.kg;
}

PhaseElement strided_phase_element(const ConvConstants &k, Expr phase, Expr in, Expr outer,
                                   Expr contig) {
  const std::array<PhaseAxis, 3> axes = phase_axes(k);
  const PhaseExprs ph = phase_exprs(k, phase);
  const GridPixel px = split_grid(outer, axes);
  auto [j, ch] = divmod(contig, k.kg);
  const std::array<Expr, 3> jj = split_taps(j, axes, ph);
  std::array<Expr, 3> at;
  for (size_t dim = 0; dim < 3; ++dim) {
    if (dim == 0 && !k.three_d) {
      at[dim] = constant_like(outer, 0);
      continue;
    }
    const PhaseAxis &a = axes[dim];
    // p = i + base - j * dstep; below zero it wraps to a huge unsigned value
    at[dim] = (px.i[dim] + ph.base[dim]) - jj[dim] * a.dstep;
    in = not_a_hole(in & ult(at[dim], a.out_extent), a, ph.ph[dim], px.i[dim]);
  }
  Expr elem = pixel_index(px.n, at, {k.o, k.p, k.q}) * k.k + zext64(ch);
  return {in, elem};
}

PhaseElement tap_rows_phase_element(const ConvConstants &k, Expr phase, Expr in, Expr outer,
                                    Expr contig) {
  const std::array<PhaseAxis, 3> axes = phase_axes(k);
  const PhaseExprs ph = phase_exprs(k, phase);
  auto [j, kk] = divmod(outer, k.kg);
  const std::array<Expr, 3> jj = split_taps(j, axes, ph);
  std::array<Expr, 3> tap;
  for (size_t dim = 0; dim < 3; ++dim)
    tap[dim] = (dim == 0 && !k.three_d) ? constant_like(outer, 0)
                                        : ph.first_tap[dim] + jj[dim] * axes[dim].step;
  Expr flat = (tap[0] * k.r + tap[1]) * k.s + tap[2];
  Expr row = zext64(kk) * k.taps() + zext64(flat);
  return {in, row * k.cg + zext64(contig)};
}

PhaseElement dgrad_output_row(const ConvConstants &k, Expr phase, Expr row, Expr m) {
  const std::array<PhaseAxis, 3> axes = phase_axes(k);
  const PhaseExprs ph = phase_exprs(k, phase);
  const GridPixel px = split_grid(row, axes);
  Expr in = slt(row, m);
  std::array<Expr, 3> at;
  for (size_t dim = 0; dim < 3; ++dim) {
    if (dim == 0 && !k.three_d) {
      at[dim] = constant_like(row, 0);
      continue;
    }
    in = not_a_hole(in, axes[dim], ph.ph[dim], px.i[dim]);
    at[dim] = ph.ph[dim] + px.i[dim] * axes[dim].stride;
  }
  return {in, pixel_index(px.n, at, {k.d, k.h, k.w})};
}

} // namespace tcjit::codegen
