#include "compiler/spec/shape.h"

namespace tcjit {

namespace {

int64_t conv_out(int64_t in, int64_t pad, int64_t dil, int64_t filt, int64_t stride) {
  if (stride <= 0)
    return 0;
  const int64_t span = in + 2 * pad - dil * (filt - 1) - 1;
  if (span < 0)
    return 0;
  return span / stride + 1;
}

Dim scale(const Dim &d, int64_t f) {
  switch (d.kind) {
  case Dim::Kind::fixed: return Dim::fixed_size(d.value * f);
  case Dim::Kind::any: return d;
  case Dim::Kind::range: return Dim::range_of(d.lo * f, d.hi * f);
  }
  return d;
}

int64_t bytes_of(DType t, int64_t elements) {
  return (elements * dtype_bits(t) + 7) / 8;
}

} // namespace

ConvOutputDims conv_output_dims(const ConvSpec &c) {
  ConvOutputDims o;
  o.o = conv_out(c.d, c.pad[0], c.dilation[0], c.t, c.stride[0]);
  o.p = conv_out(c.h, c.pad[1], c.dilation[1], c.r, c.stride[1]);
  o.q = conv_out(c.w, c.pad[2], c.dilation[2], c.s, c.stride[2]);
  return o;
}

ImplicitGemm implicit_gemm(const OpSpec &s) {
  ImplicitGemm g;
  if (s.kind == OpKind::gemm) {
    g.m = s.gemm.m;
    g.n = s.gemm.n;
    g.k = s.gemm.k;
    g.batch = s.gemm.batch;
    g.groups = 1;
    return g;
  }
  const ConvSpec &c = s.conv;
  const ConvOutputDims out = conv_output_dims(c);
  const int64_t groups = c.groups > 0 ? c.groups : 1;
  const int64_t trs = c.t * c.r * c.s;
  g.batch = Dim::fixed_size(1);
  g.groups = groups;
  switch (c.pass) {
  case ConvPass::fprop:
    g.m = scale(c.n, out.o * out.p * out.q);
    g.n = Dim::fixed_size(c.k / groups);
    g.k = Dim::fixed_size(trs * c.c / groups);
    break;
  case ConvPass::dgrad:
    g.m = scale(c.n, c.d * c.h * c.w);
    g.n = Dim::fixed_size(c.c / groups);
    g.k = Dim::fixed_size(trs * c.k / groups);
    break;
  case ConvPass::wgrad:
    g.m = Dim::fixed_size(c.k / groups);
    g.n = Dim::fixed_size(trs * c.c / groups);
    g.k = scale(c.n, out.o * out.p * out.q);
    break;
  }
  return g;
}

bool is_depthwise(const OpSpec &s) {
  if (s.kind == OpKind::gemm)
    return false;
  const ConvSpec &c = s.conv;
  return c.groups > 1 && c.groups == c.c && c.groups == c.k;
}

bool takes_depthwise_kernel(const OpSpec &s) {
  return is_depthwise(s) && s.conv.pass != ConvPass::wgrad;
}

bool is_concrete(const OpSpec &s) {
  if (s.kind == OpKind::gemm)
    return s.gemm.m.is_fixed() && s.gemm.n.is_fixed() && s.gemm.k.is_fixed() &&
           s.gemm.batch.is_fixed();
  return s.conv.n.is_fixed();
}

OperandSizes operand_sizes(const OpSpec &s) {
  OperandSizes z;
  if (!is_concrete(s))
    return z;
  if (s.kind == OpKind::gemm) {
    const GemmSpec &g = s.gemm;
    const int64_t m = g.m.value, n = g.n.value, k = g.k.value, b = g.batch.value;
    auto extent = [&](const MatrixOperand &op, int64_t rows, int64_t cols) {
      const bool row = op.layout == MatrixLayout::row;
      const int64_t inner = row ? cols : rows;
      const int64_t outer = row ? rows : cols;
      const int64_t ld = op.ld ? *op.ld : inner;
      return b * outer * ld;
    };
    z.a = extent(g.a, m, k);
    z.b = extent(g.b, k, n);
    z.c = extent(g.c, m, n);
    z.bias = s.epilogue.bias == BiasKind::row ? m : s.epilogue.bias == BiasKind::col ? n : 0;
    return z;
  }
  const ConvSpec &c = s.conv;
  const ConvOutputDims out = conv_output_dims(c);
  const int64_t groups = c.groups > 0 ? c.groups : 1;
  z.x = c.n.value * c.d * c.h * c.w * c.c;
  z.filter = c.k * c.t * c.r * c.s * (c.c / groups);
  z.y = c.n.value * out.o * out.p * out.q * c.k;
  if (s.epilogue.bias != BiasKind::none)
    z.bias = c.pass == ConvPass::dgrad ? c.c : c.k;
  return z;
}

std::optional<double> flop_count(const OpSpec &s) {
  if (!is_concrete(s))
    return std::nullopt;
  if (s.kind != OpKind::gemm) {
    // Every pass counts the forward convolution's multiply-adds, as cuDNN and papers do: a strided
    // dgrad's implicit GEMM (M = n*d*h*w) also multiplies the zeros between the strides.
    const ConvSpec &c = s.conv;
    const ConvOutputDims out = conv_output_dims(c);
    const double three_d = s.kind == OpKind::conv3d;
    const double outputs =
        double(c.n.value) * double(three_d ? out.o : 1) * double(out.p) * double(out.q);
    return 2.0 * outputs * double(c.k) * double(c.c / c.groups) * double(three_d ? c.t : 1) *
           double(c.r) * double(c.s);
  }
  const ImplicitGemm g = implicit_gemm(s);
  return 2.0 * double(g.m.value) * double(g.n.value) * double(g.k.value) * double(g.batch.value) *
         double(g.groups);
}

std::optional<double> min_bytes(const OpSpec &s) {
  if (!is_concrete(s))
    return std::nullopt;
  const OperandSizes z = operand_sizes(s);
  const bool reads_c = s.epilogue.beta != 0.0;
  if (s.kind == OpKind::gemm) {
    const GemmSpec &g = s.gemm;
    const int64_t m = g.m.value, n = g.n.value, k = g.k.value, b = g.batch.value;
    // A 2:4-sparse A: its k/2 kept values per row and 4 bits of metadata per 4 values (s4/u4:
    // per 4 pairs of values).
    const double group_values = dtype_bits(g.a.dtype) == 4 ? 8.0 : 4.0;
    const double a_bytes =
        s.sparsity == Sparsity::dense
            ? double(bytes_of(g.a.dtype, b * m * k))
            : double(bytes_of(g.a.dtype, b * m * k / 2)) + double(b * m * k) / group_values / 2;
    double bytes = a_bytes + double(bytes_of(g.b.dtype, b * k * n));
    bytes += double(bytes_of(g.c.dtype, b * m * n)) * (reads_c ? 2.0 : 1.0);
    bytes += double(bytes_of(g.c.dtype, z.bias));
    return bytes;
  }
  const ConvSpec &c = s.conv;
  double in_bytes = 0, out_bytes = 0;
  switch (c.pass) {
  case ConvPass::fprop:
    in_bytes = double(bytes_of(c.x.dtype, z.x) + bytes_of(c.filter.dtype, z.filter));
    out_bytes = double(bytes_of(c.y.dtype, z.y));
    break;
  case ConvPass::dgrad:
    in_bytes = double(bytes_of(c.y.dtype, z.y) + bytes_of(c.filter.dtype, z.filter));
    out_bytes = double(bytes_of(c.x.dtype, z.x));
    break;
  case ConvPass::wgrad:
    in_bytes = double(bytes_of(c.x.dtype, z.x) + bytes_of(c.y.dtype, z.y));
    out_bytes = double(bytes_of(c.filter.dtype, z.filter));
    break;
  }
  return in_bytes + out_bytes * (reads_c ? 2.0 : 1.0);
}

} // namespace tcjit
