#include "compiler/codegen/plan/formulas.h"

#include "compiler/codegen/plan/dgrad_phases.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

namespace tcjit::codegen {

Expr swizzled_offset(const OperandPlan &op, Expr row, Expr col) {
  Expr o = row * op.row_bytes + col * op.esize;
  // R >> swizzle_shift as one shift of the row: rows of < 128 bytes (a power of two) make 128-byte
  // lines of 128 / row_bytes rows, and o >> 7 == row / (128 / row_bytes).
  int shift = op.swizzle_shift;
  for (int rows_per_line = 128 / std::min(op.row_bytes, 128); rows_per_line > 1; rows_per_line /= 2)
    ++shift;
  Expr r = row;
  if (shift > 0)
    r = r >> shift;
  if (op.swizzle_spread > 0)
    r = r << op.swizzle_spread;
  return o ^ ((r & 7) << 4);
}

Expr staging_offset(const KernelPlan &p, Expr line, Expr pos) {
  const int line_bytes = p.stage_line_len * 4;
  Expr o = line * line_bytes + (pos << 2);
  // seg (o >> 7) from line and pos where lines are whole 128-byte segments (pos * 4 < line_bytes):
  // the same value in shorter expressions, which instruction selection analyses much faster
  // (measured).
  Expr seg = line_bytes >= 256 ? pos >> 5 : line_bytes == 128 ? line + (pos >> 5) : o >> 7;
  Expr r = line_bytes >= 128 ? line >> (p.out_layout == MatrixLayout::row ? 0 : 1) : seg;
  Expr x = ((r & 3) << 5) | ((seg & 1) << 4);
  return o ^ x;
}

LdmatrixLane ldmatrix_lane(Expr lane) {
  return {lane >> 3, lane & 7};
}

TileElement ldmatrix_element(const KernelPlan &p, const OperandPlan &op, const LdmatrixLane &lane,
                             Expr warp0, Expr tile, Expr ks) {
  if (op.load != FragmentLoad::ldmatrix && op.load != FragmentLoad::ldmatrix_trans)
    throw std::logic_error("ldmatrix_element: the operand is not loaded by ldmatrix");
  const bool is_a = op.name == 'a';
  const int chunk = 16 / op.esize;
  // the matrix's offset along m/n (A: j & 1, B: j >> 1) and along k (the other)
  auto mn_half = [&] { return is_a ? lane.j & 1 : lane.j >> 1; };
  auto k_half = [&] { return is_a ? lane.j >> 1 : lane.j & 1; };
  if (op.load == FragmentLoad::ldmatrix) {
    Expr row = (warp0 + tile * 16) + (mn_half() * 8 + lane.r);
    Expr col = ks * p.mma.k + k_half() * chunk;
    return {row, col};
  }
  Expr row = ks * 16 + (k_half() * 8 + lane.r);
  Expr col = (warp0 + tile * 16) + mn_half() * 8;
  return {row, col};
}

TileElement sparse_b_ldmatrix_element(const KernelPlan &p, const LdmatrixLane &lane, Expr warp0,
                                      Expr tile, Expr ks) {
  const OperandPlan &op = p.b;
  if (!p.mma.sparse ||
      (op.load != FragmentLoad::ldmatrix && op.load != FragmentLoad::ldmatrix_trans))
    throw std::logic_error("sparse_b_ldmatrix_element: not a sparse form's ldmatrix B");
  if (op.load == FragmentLoad::ldmatrix)
    return {(warp0 + tile * 8) + lane.r, ks * p.mma.k + lane.j * (16 / op.esize)};
  return {ks * p.mma.k + (lane.j * 8 + lane.r), warp0 + tile * 8};
}

TileElement fragment_element(const KernelPlan &p, const OperandPlan &op, Expr warp0, Expr g, Expr q,
                             Expr tile, Expr ks, Expr mn_offset, Expr k_offset) {
  const int step = op.name == 'a' ? p.mma.m : p.mma.n;
  Expr mn = (warp0 + (tile * step + mn_offset)) + g;
  Expr k = q * a_q_multiplier(p.mma) + (ks * p.mma.k + k_offset);
  if (op.k_contiguous)
    return {mn, k};
  return {k, mn};
}

EpilogueSum epilogue_sum(const KernelPlan &p, Expr alpha, Expr acc, Expr beta, Expr c, Expr bias) {
  EpilogueSum s;
  s.scaled = alpha * acc;
  s.with_c = p.epilogue.beta != 0.0 ? s.scaled + beta * c : s.scaled;
  s.sum = p.epilogue.bias != BiasKind::none ? s.with_c + bias : s.with_c;
  return s;
}

namespace {

Expr exp_approx(Expr x) { // 2^(x log2 e): __expf's error, 2 + |x| ulps
  return ex2_approx(x * M_LOG2E);
}

Expr log1p_approx(Expr t) { // for t in [0, 1]: lg2(1 + t) ln 2
  return lg2_approx(1.0 + t) * M_LN2;
}

Expr tanh_approx(Expr x) { // 1 - 2 / (e^(2x) + 1): +-1 at the extremes, NaN kept
  Expr ex = exp_approx(x * 2.0);
  return 1.0 - div_approx(2.0, ex + 1.0);
}

} // namespace

Expr erfc_approx(Expr z) {
  Expr az = fabs(z);
  Expr t = div_approx(1.0, 1.0 + 0.3275911 * az);
  const double a[] = {1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592};
  Expr poly = constant_like(z, a[0]);
  for (int i = 1; i < 5; ++i)
    poly = poly * t + a[i];
  poly = poly * t;
  Expr r = poly * exp_approx(-(az * az));
  return select(olt(z, 0.0), 2.0 - r, r);
}

Expr activation(Activation act, Expr x) {
  const bool f32 = x.type() == ExprType::f32;
  Expr zero = constant_like(x, 0.0), one = constant_like(x, 1.0), half = constant_like(x, 0.5);
  auto exp = [&](Expr v) { return f32 ? exp_approx(v) : math(MathFunction::exp, v); };
  auto tanh = [&](Expr v) { return f32 ? tanh_approx(v) : math(MathFunction::tanh, v); };
  auto div = [&](Expr n, Expr d) { return f32 ? div_approx(n, d) : n / d; };
  switch (act) {
  case Activation::none: return x;
  case Activation::relu: return select(ugt(x, zero), x, zero); // NaN stays
  case Activation::tanh: return tanh(x);
  case Activation::sigmoid: return div(one, one + exp(-x));
  case Activation::elu:
    return select(ogt(x, zero), x, f32 ? exp_approx(x) - one : math(MathFunction::expm1, x));
  case Activation::gelu: { // 0.5 x erfc(-x / sqrt 2)
    Expr z = x * -M_SQRT1_2;
    return (half * x) * (f32 ? erfc_approx(z) : math(MathFunction::erfc, z));
  }
  case Activation::gelu_tanh: {
    Expr x3 = (x * x) * x;
    Expr inner = std::sqrt(2.0 / M_PI) * (x + 0.044715 * x3);
    return (half * x) * (one + tanh(inner));
  }
  case Activation::softplus: { // x > 0 ? x + log1p(exp(-x)) : log1p(exp(x))
    Expr pos = ogt(x, zero);
    Expr ax = select(pos, -x, x);
    Expr l =
        f32 ? log1p_approx(exp_approx(ax)) : math(MathFunction::log1p, math(MathFunction::exp, ax));
    return select(pos, x + l, l);
  }
  case Activation::swish: return div(x, one + exp(-x));
  case Activation::custom: // the user's CUDA C++ (custom_activation.h), no formula
    throw std::logic_error("activation formula of act=custom");
  }
  return x;
}

namespace {

// value / d and value % d, unsigned, for a constant d (no operation for d == 1).
std::pair<Expr, Expr> divmod(Expr value, int64_t d) {
  if (d == 1)
    return {value, constant_like(value, 0)};
  return {value / d, value % d};
}

// (n, depth, height, width) of a pixel index of an n x D x H x W grid: n last (it is the run-time
// dimension and may be anything).
struct Pixel {
  Expr n, z, y, x;
};
Pixel split_pixel(Expr index, int64_t depth, int64_t height, int64_t width) {
  auto [rest1, x] = divmod(index, width);
  auto [rest2, y] = divmod(rest1, height);
  auto [n, z] = divmod(rest2, depth);
  return {n, z, y, x};
}

// (t, r, s) of a tap index.
struct Tap {
  Expr t, r, s;
};
Tap split_tap(Expr tap, const ConvConstants &k) {
  auto [rest, s] = divmod(tap, k.s);
  auto [t, r] = divmod(rest, k.r);
  return {t, r, s};
}

// An i32 coordinate widened to i64 (an i64 one as it is).
Expr widen(Expr v) {
  return v.type() == ExprType::i64 ? v : zext64(v);
}

// ((((n * D + z) * H + y) * W + x) * C + c) in i64.
Expr tensor_offset(const Pixel &at, int64_t depth, int64_t height, int64_t width, int64_t channels,
                   Expr channel) {
  Expr v = widen(at.n);
  v = v * depth + widen(at.z);
  v = v * height + widen(at.y);
  v = v * width + widen(at.x);
  return v * channels + widen(channel);
}

// The input coordinate that output coordinate o reads through tap t in dimension `dim`:
// o * stride + t * dilation - pad; below zero it wraps to a huge unsigned value, which an unsigned
// `< extent` rejects.
Expr input_coordinate(Expr o, Expr t, const ConvConstants &k, int dim) {
  Expr v = o * k.stride[dim];
  v = v + t * k.dilation[dim];
  return v - k.pad[dim];
}

// The output coordinate that reads input coordinate i through tap t in dimension `dim`:
// (i + pad - t * dilation) / stride when that divides exactly and lies in [0, extent); `ok` is
// and-ed with that condition.
Expr output_coordinate(Expr i, Expr t, const ConvConstants &k, int dim, int64_t extent, Expr &ok) {
  Expr v = (i + k.pad[dim]) - t * k.dilation[dim];
  // v < 0 wraps to a huge unsigned value: out of range whatever the stride
  ok = ok & ult(v, extent * k.stride[dim]);
  if (k.stride[dim] == 1)
    return v;
  ok = ok & eq(v % k.stride[dim], 0);
  return v / k.stride[dim];
}

} // namespace

LinearCopy linear_copy(const OperandPlan &op, Expr row, Expr col, Expr mn0, Expr outer_extent,
                       Expr contig_extent, Expr ld) {
  if (op.k_contiguous) {
    Expr outer = mn0 + row;
    return {zext64(outer) * ld + zext64(col), constant_like(ld, op.cols), col,
            select(slt(outer, outer_extent), contig_extent, 0)};
  }
  Expr contig = mn0 + col;
  return {zext64(row) * ld + zext64(contig), ld * op.rows, row,
          select(slt(contig, contig_extent), outer_extent, 0)};
}

Expr linear_copy_in(const OperandPlan &op, const LinearCopy &c, Expr kt) {
  return slt(kt * (op.k_contiguous ? op.cols : op.rows) + c.k, c.k_limit);
}

// Not with split-K: ptxas (CUDA 13) spills 4 B of a split-K kernel's cursors at 64x64x32
// w32x32 (72 registers, 8 B stack), where the K-tile's own addresses need none (80 registers).
bool incremental_copies(const KernelPlan &p, const OperandPlan &op) {
  return op.gather == Gather::linear && op.copy_bytes >= 4 && op.copies % p.threads == 0 &&
         op.copies_per_thread <= 4 && !p.depthwise && !bytewise_fragments(p) &&
         p.config.split_k == 1;
}

GlobalElement global_element(const KernelPlan &p, const OperandPlan &op, Expr outer, Expr contig,
                             Expr outer_extent, Expr contig_extent, Expr ld) {
  Expr in = slt(outer, outer_extent) & slt(contig, contig_extent);
  if (op.gather == Gather::linear)
    return {in, zext64(outer) * ld + zext64(contig)};
  if (!p.conv)
    throw std::logic_error("global_element: a gathered operand without conv constants");
  const ConvConstants &k = *p.conv;
  switch (op.gather) {
  case Gather::im2col: {
    // outer: output pixel (n, o, p, q); contig: tap * Cg + c
    const Pixel out = split_pixel(outer, k.o, k.p, k.q);
    auto [tap, c] = divmod(contig, k.cg);
    const Tap f = split_tap(tap, k);
    const Pixel at{out.n, input_coordinate(out.z, f.t, k, 0), input_coordinate(out.y, f.r, k, 1),
                   input_coordinate(out.x, f.s, k, 2)};
    if (k.three_d)
      in = in & ult(at.z, k.d);
    in = in & (ult(at.y, k.h) & ult(at.x, k.w));
    return {in, tensor_offset(at, k.d, k.h, k.w, k.c, c)};
  }
  case Gather::strided: {
    // outer: input pixel (n, d, h, w); contig: tap * Kg + k
    const Pixel in_px = split_pixel(outer, k.d, k.h, k.w);
    auto [tap, ch] = divmod(contig, k.kg);
    const Tap f = split_tap(tap, k);
    Expr ok = in;
    Pixel at{in_px.n, constant_like(outer, 0), Expr{}, Expr{}};
    if (k.three_d)
      at.z = output_coordinate(in_px.z, f.t, k, 0, k.o, ok);
    at.y = output_coordinate(in_px.y, f.r, k, 1, k.p, ok);
    at.x = output_coordinate(in_px.x, f.s, k, 2, k.q, ok);
    return {ok, tensor_offset(at, k.o, k.p, k.q, k.k, ch)};
  }
  case Gather::tap_rows: {
    // outer: tap * Kg + k; contig: c. filter[k][tap][c] of the group's Kg x taps x Cg block.
    auto [tap, kk] = divmod(outer, k.kg);
    Expr row = zext64(kk) * k.taps() + zext64(tap);
    return {in, row * k.cg + zext64(contig)};
  }
  case Gather::strided_phases: // dgrad_phases.h; the CTA's phase is the input "phase"
  case Gather::tap_rows_phases: {
    Expr phase = input(*outer.graph, ExprType::i32, "phase");
    const PhaseElement e = op.gather == Gather::strided_phases
                               ? strided_phase_element(k, phase, in, outer, contig)
                               : tap_rows_phase_element(k, phase, in, outer, contig);
    return {e.in, e.elem};
  }
  case Gather::linear: break;
  }
  throw std::logic_error("global_element: unknown gather");
}

DepthwisePoint depthwise_point(const ConvConstants &k, Expr row, Expr col) {
  const bool fprop = k.pass == ConvPass::fprop;
  const Pixel at = fprop ? split_pixel(row, k.o, k.p, k.q) : split_pixel(row, k.d, k.h, k.w);
  Expr n64 = zext64(at.n);
  return {n64, at.z, at.y, at.x, zext64(col)};
}

DepthwiseTap depthwise_tap(const ConvConstants &k, const DepthwisePoint &at, Expr t, Expr r,
                           Expr s) {
  const bool fprop = k.pass == ConvPass::fprop;
  // the source tensor (x for fprop, dy for dgrad): its extents and channels
  const int64_t extent[3] = {fprop ? k.d : k.o, fprop ? k.h : k.p, fprop ? k.w : k.q};
  const int64_t channels = fprop ? k.k : k.c;
  const Expr coordinate[3] = {at.z, at.y, at.x}, tap[3] = {t, r, s};
  Expr ok = constant(*t.graph, ExprType::b1, 1);
  Expr source[3];
  for (int dim = 0; dim < 3; ++dim) {
    if (fprop) {
      source[dim] = input_coordinate(coordinate[dim], tap[dim], k, dim);
      ok = ok & ult(source[dim], extent[dim]);
    } else {
      source[dim] = output_coordinate(coordinate[dim], tap[dim], k, dim, extent[dim], ok);
    }
  }
  Expr elem = tensor_offset(Pixel{at.n64, source[0], source[1], source[2]}, extent[0], extent[1],
                            extent[2], channels, at.channel64);
  Expr filter_elem = at.channel64 * k.taps() + zext64((t * k.r + r) * k.s + s);
  return {ok, elem, filter_elem};
}

} // namespace tcjit::codegen
