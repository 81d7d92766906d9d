#include "compiler/codegen/plan/incremental_gather.h"

#include <stdexcept>

namespace tcjit::codegen {

namespace {

const ConvConstants &constants_of(const KernelPlan &p) {
  if (!p.conv)
    throw std::logic_error("incremental gather: a plan without conv constants");
  return *p.conv;
}

// value / d and value % d, unsigned, for a constant d (no operation for d == 1).
std::pair<Expr, Expr> divmod(Expr value, int64_t d) {
  if (d == 1)
    return {value, constant_like(value, 0)};
  return {value / d, value % d};
}

// b ? value : 0, for a constant value.
Expr bit_if(Expr b, Expr like, int64_t value) {
  return select(b, constant_like(like, value), constant_like(like, 0));
}

// The largest element offset of a K position from its row's (t, r, s up to T, R, S: t = T past
// the last tap), to choose the width of the K-tile offset.
int64_t step_offset_bound(const ConvConstants &k) {
  return ((k.t * k.dilation[0] * k.h + k.r * k.dilation[1]) * k.w + k.s * k.dilation[2]) * k.c +
         k.c;
}

} // namespace

bool incremental_gather_applies(const KernelPlan &p, const OperandPlan &op) {
  if (op.gather != Gather::im2col || !op.k_contiguous || !p.conv || p.k_pack != 1)
    return false;
  const ConvConstants &k = *p.conv;
  const int vecs_per_row = op.cols / op.vec;
  return vecs_per_row > 0 && p.threads % vecs_per_row == 0 && k.t + k.r + k.s <= 31 &&
         op.copies_per_thread <= kMaxIncrementalRows && k.cg % op.vec == 0;
}

IncrementalRow incremental_row(const KernelPlan &p, const OperandPlan &op, Expr outer,
                               Expr outer_extent) {
  const ConvConstants &k = constants_of(p);
  // the output pixel (n, o, p, q), n last (it is the run-time dimension)
  auto [rest1, q] = divmod(outer, k.q);
  auto [rest2, y] = divmod(rest1, k.p);
  auto [n, z] = divmod(rest2, k.o);
  // the input coordinates of tap (0, 0, 0): o * stride - pad, wrapping below zero
  const Expr at[3] = {z * k.stride[0] - k.pad[0], y * k.stride[1] - k.pad[1],
                      q * k.stride[2] - k.pad[2]};
  const int64_t extent[3] = {k.d, k.h, k.w}, taps[3] = {k.t, k.r, k.s};
  Expr mask = constant_like(outer, 0);
  int bit = 0;
  for (int dim = 0; dim < 3; ++dim)
    for (int64_t i = 0; i < taps[dim]; ++i, ++bit)
      mask =
          mask | bit_if(ult(at[dim] + i * k.dilation[dim], extent[dim]), outer, int64_t{1} << bit);
  mask = select(slt(outer, outer_extent), mask, constant_like(outer, 0));
  // (((n * D + z * sd) * H + y * sh) * W + q * sw) * C - ((pd * H + ph) * W + pw) * C: the
  // element offset of (n, z * sd - pd, y * sh - ph, q * sw - pw, 0), with non-negative terms
  // widened and the padding's constant subtracted in i64 (the coordinates may be negative).
  Expr v = zext64(n);
  v = v * k.d + zext64(z * k.stride[0]);
  v = v * k.h + zext64(y * k.stride[1]);
  v = v * k.w + zext64(q * k.stride[2]);
  const int64_t pad_elems = ((k.pad[0] * k.h + k.pad[1]) * k.w + k.pad[2]) * k.c;
  Expr elem = v * k.c - pad_elems;
  return {mask, elem * op.esize};
}

IncrementalPosition incremental_position(const KernelPlan &p, const OperandPlan &, Expr contig) {
  const ConvConstants &k = constants_of(p);
  auto [tap, c] = divmod(contig, k.cg);
  auto [rest, s] = divmod(tap, k.s);
  auto [t, r] = divmod(rest, k.r);
  return {c, s, r, t};
}

IncrementalPosition advance_position(const KernelPlan &p, const OperandPlan &op,
                                     const IncrementalPosition &at) {
  const ConvConstants &k = constants_of(p);
  const int64_t bk = op.cols; // the K-tile's K extent
  // bk = taps_step * Cg + c_step; taps_step = (dt * R + dr) * S + ds
  const int64_t c_step = bk % k.cg, taps_step = bk / k.cg;
  const int64_t ds = taps_step % k.s, dr = taps_step / k.s % k.r, dt = taps_step / (k.s * k.r);
  IncrementalPosition next;
  Expr carry = constant(*at.c.graph, ExprType::b1, 0); // the lower coordinate wrapped
  // value + step (+ carry), which stays below 2 * extent: one subtraction wraps it
  auto wrap = [&](Expr value, int64_t step, int64_t extent) {
    if (extent == 1) // always 0: the carry passes through
      return value;
    Expr v = step != 0 ? value + step : value;
    if (!is_constant(carry))
      v = v + select(carry, constant_like(value, 1), constant_like(value, 0));
    carry = ult(constant_like(value, extent - 1), v);
    return select(carry, v - extent, v);
  };
  next.c = c_step != 0 ? wrap(at.c, c_step, k.cg) : at.c;
  next.s = wrap(at.s, ds, k.s);
  next.r = wrap(at.r, dr, k.r);
  next.t = dt != 0 ? at.t + dt : at.t;
  if (!is_constant(carry))
    next.t = next.t + select(carry, constant_like(at.t, 1), constant_like(at.t, 0));
  return next;
}

IncrementalStep incremental_step(const KernelPlan &p, const OperandPlan &op,
                                 const IncrementalPosition &at) {
  const ConvConstants &k = constants_of(p);
  Expr one = constant_like(at.t, 1);
  // t's bit while t < T; bit 31 (in no row's mask) past the last tap: the K tail
  Expr t_bit = select(ult(at.t, k.t), one << at.t, constant_like(at.t, int64_t{1} << 31));
  Expr bits = (t_bit | (one << (at.r + k.t))) | (one << (at.s + (k.t + k.r)));
  const bool narrow = step_offset_bound(k) * op.esize < (int64_t{1} << 31);
  auto widen = [&](Expr v) { return narrow ? v : zext64(v); };
  // ((t * dd * H + r * dh) * W + s * dw) * C + c elements, in bytes
  Expr rows = widen(at.t) * (k.dilation[0] * k.h) + widen(at.r) * k.dilation[1];
  Expr pixels = rows * k.w + widen(at.s) * k.dilation[2];
  Expr offset = (pixels * k.c + widen(at.c)) * op.esize;
  return {bits, narrow ? zext64(offset) : offset};
}

Expr incremental_in(const IncrementalRow &row, const IncrementalStep &step) {
  return eq(row.mask & step.bits, step.bits);
}

} // namespace tcjit::codegen
