#include "compiler/codegen/llvm/conv_gather.h"

#include <stdexcept>

namespace tcjit::codegen {

using llvm::Value;

namespace {

// value / d and value % d for an unsigned i32 and a constant d (a no-op for d == 1).
std::pair<Value *, Value *> divmod(EmitContext &e, Value *value, int64_t d) {
  if (d == 1)
    return {value, e.c32(0)};
  return {e.b.CreateUDiv(value, e.c32(d)), e.b.CreateURem(value, e.c32(d))};
}

// (n, depth, height, width) of a pixel index of an n x D x H x W grid: n last (it is the run-time
// dimension and may be anything).
struct Pixel {
  Value *n, *z, *y, *x;
};
Pixel split_pixel(EmitContext &e, Value *index, int64_t depth, int64_t height, int64_t width) {
  auto [rest1, x] = divmod(e, index, width);
  auto [rest2, y] = divmod(e, rest1, height);
  auto [n, z] = divmod(e, rest2, depth);
  return {n, z, y, x};
}

// (t, r, s) of a tap index.
struct Tap {
  Value *t, *r, *s;
};
Tap split_tap(EmitContext &e, Value *tap, const ConvConstants &k) {
  auto [rest, s] = divmod(e, tap, k.s);
  auto [t, r] = divmod(e, rest, k.r);
  return {t, r, s};
}

// Unsigned `v < extent`: false for negative coordinates too.
Value *below(EmitContext &e, Value *v, int64_t extent) {
  return e.b.CreateICmpULT(v, e.c32(extent));
}

// ((((n * D + z) * H + y) * W + x) * C + c) in i64.
Value *tensor_offset(EmitContext &e, const Pixel &at, int64_t depth, int64_t height, int64_t width,
                     int64_t channels, Value *channel) {
  auto &b = e.b;
  Value *v = b.CreateZExt(at.n, e.i64());
  v = b.CreateAdd(b.CreateMul(v, e.c64(depth)), b.CreateZExt(at.z, e.i64()));
  v = b.CreateAdd(b.CreateMul(v, e.c64(height)), b.CreateZExt(at.y, e.i64()));
  v = b.CreateAdd(b.CreateMul(v, e.c64(width)), b.CreateZExt(at.x, e.i64()));
  return b.CreateAdd(b.CreateMul(v, e.c64(channels)), b.CreateZExt(channel, e.i64()));
}

} // namespace

GatheredElement emit_gathered_element(EmitContext &e, const OperandPlan &op, const GlobalOperand &g,
                                      Value *outer, Value *contig) {
  if (!e.plan.conv)
    throw std::logic_error("emit_gathered_element: a gathered operand without conv constants");
  const ConvConstants &k = *e.plan.conv;
  auto &b = e.b;
  Value *in =
      b.CreateAnd(b.CreateICmpSLT(outer, g.outer_extent), b.CreateICmpSLT(contig, g.contig_extent));
  switch (op.gather) {
  case Gather::im2col: {
    // outer: output pixel (n, o, p, q); contig: tap * Cg + c
    const Pixel out = split_pixel(e, outer, k.o, k.p, k.q);
    auto [tap, c] = divmod(e, contig, k.cg);
    const Tap f = split_tap(e, tap, k);
    auto coordinate = [&](Value *o, Value *t, int dim) {
      Value *v = b.CreateMul(o, e.c32(k.stride[dim]));
      v = b.CreateAdd(v, b.CreateMul(t, e.c32(k.dilation[dim])));
      return b.CreateSub(v, e.c32(k.pad[dim]));
    };
    const Pixel at{out.n, coordinate(out.z, f.t, 0), coordinate(out.y, f.r, 1),
                   coordinate(out.x, f.s, 2)};
    if (k.three_d)
      in = b.CreateAnd(in, below(e, at.z, k.d));
    in = b.CreateAnd(in, b.CreateAnd(below(e, at.y, k.h), below(e, at.x, k.w)));
    return {in, tensor_offset(e, at, k.d, k.h, k.w, k.c, c)};
  }
  case Gather::strided: {
    // outer: input pixel (n, d, h, w); contig: tap * Kg + k. The output coordinate that reads
    // input coordinate i through tap f: (i + pad - f * dilation) / stride, when exact.
    const Pixel in_px = split_pixel(e, outer, k.d, k.h, k.w);
    auto [tap, ch] = divmod(e, contig, k.kg);
    const Tap f = split_tap(e, tap, k);
    Value *ok = in;
    auto coordinate = [&](Value *i, Value *t, int dim, int64_t extent) {
      Value *v =
          b.CreateSub(b.CreateAdd(i, e.c32(k.pad[dim])), b.CreateMul(t, e.c32(k.dilation[dim])));
      // v < 0 wraps to a huge unsigned value: out of range whatever the stride
      Value *bound = e.c32(extent * k.stride[dim]);
      ok = b.CreateAnd(ok, b.CreateICmpULT(v, bound));
      if (k.stride[dim] == 1)
        return v;
      ok = b.CreateAnd(ok, b.CreateICmpEQ(b.CreateURem(v, e.c32(k.stride[dim])), e.c32(0)));
      return b.CreateUDiv(v, e.c32(k.stride[dim]));
    };
    Pixel at{in_px.n, e.c32(0), nullptr, nullptr};
    if (k.three_d)
      at.z = coordinate(in_px.z, f.t, 0, k.o);
    at.y = coordinate(in_px.y, f.r, 1, k.p);
    at.x = coordinate(in_px.x, f.s, 2, k.q);
    return {ok, tensor_offset(e, at, k.o, k.p, k.q, k.k, ch)};
  }
  case Gather::tap_rows: {
    // outer: tap * Kg + k; contig: c. filter[k][tap][c] of the group's Kg x taps x Cg block.
    auto [tap, kk] = divmod(e, outer, k.kg);
    Value *row = b.CreateAdd(b.CreateMul(b.CreateZExt(kk, e.i64()), e.c64(k.taps())),
                             b.CreateZExt(tap, e.i64()));
    return {in, b.CreateAdd(b.CreateMul(row, e.c64(k.cg)), b.CreateZExt(contig, e.i64()))};
  }
  case Gather::linear: break;
  }
  throw std::logic_error("emit_gathered_element: a linear operand");
}

} // namespace tcjit::codegen
