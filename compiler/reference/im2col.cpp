#include "compiler/reference/im2col.h"

#include "compiler/reference/conv_geometry.h"
#include "compiler/reference/epilogue.h"
#include "compiler/reference/gemm_reference.h"
#include "compiler/reference/output_layout.h"

#include <stdexcept>
#include <utility>

namespace tcjit {

namespace {

OpSpec f64_gemm_spec(int64_t groups, int64_t m, int64_t n, int64_t k) {
  OpSpec spec;
  spec.kind = OpKind::gemm;
  spec.gemm.batch = Dim::fixed_size(groups);
  spec.gemm.m = Dim::fixed_size(m);
  spec.gemm.n = Dim::fixed_size(n);
  spec.gemm.k = Dim::fixed_size(k);
  for (MatrixOperand *op : {&spec.gemm.a, &spec.gemm.b, &spec.gemm.c}) {
    op->dtype = DType::f64;
    op->layout = MatrixLayout::row;
  }
  spec.acc = DType::f64;
  spec.math = MathMode::f32;
  return spec;
}

struct Position {
  int64_t n, o, p, q;
};
Position y_position(const ConvGeometry &g, int64_t index) {
  return {index / (g.q * g.p * g.o), index / (g.q * g.p) % g.o, index / g.q % g.p, index % g.q};
}

// The x index (channels-last, channel 0) that output position `y` reads through tap (t, r, s), or
// -1 when the tap falls in the padding.
int64_t x_pixel_base(const ConvGeometry &g, const Position &y, int64_t t, int64_t r, int64_t s) {
  const int64_t d = input_coordinate(g, 0, y.o, t), h = input_coordinate(g, 1, y.p, r),
                w = input_coordinate(g, 2, y.q, s);
  if (d < 0 || d >= g.d || h < 0 || h >= g.h || w < 0 || w >= g.w)
    return -1;
  return (((y.n * g.d + d) * g.h + h) * g.w + w) * g.c;
}

Im2colGemm lower_fprop(const ConvGeometry &g, const std::vector<double> &x,
                       const std::vector<double> &filter) {
  const int64_t taps = g.t * g.r * g.s, m = g.n * g.o * g.p * g.q, n = g.k_per_group,
                k = taps * g.c_per_group;
  Im2colGemm out{f64_gemm_spec(g.groups, m, n, k), std::vector<double>(g.groups * m * k, 0.0),
                 std::vector<double>(g.groups * k * n, 0.0)};
  for (int64_t group = 0; group < g.groups; ++group)
    for (int64_t row = 0; row < m; ++row) {
      const Position y = y_position(g, row);
      for (int64_t tap = 0; tap < taps; ++tap) {
        const int64_t base = x_pixel_base(g, y, tap / (g.s * g.r), tap / g.s % g.r, tap % g.s);
        if (base < 0)
          continue;
        for (int64_t c = 0; c < g.c_per_group; ++c)
          out.a[((group * m + row) * k) + tap * g.c_per_group + c] =
              x[base + group * g.c_per_group + c];
      }
    }
  for (int64_t group = 0; group < g.groups; ++group)
    for (int64_t col = 0; col < n; ++col)
      for (int64_t kk = 0; kk < k; ++kk)
        out.b[(group * k + kk) * n + col] = filter[(group * g.k_per_group + col) * k + kk];
  return out;
}

Im2colGemm lower_dgrad(const ConvGeometry &g, const std::vector<double> &dy,
                       const std::vector<double> &filter) {
  const int64_t taps = g.t * g.r * g.s, m = g.n * g.d * g.h * g.w, n = g.c_per_group,
                k = taps * g.k_per_group;
  Im2colGemm out{f64_gemm_spec(g.groups, m, n, k), std::vector<double>(g.groups * m * k, 0.0),
                 std::vector<double>(g.groups * k * n, 0.0)};
  for (int64_t row = 0; row < m; ++row) {
    const int64_t w = row % g.w, h = row / g.w % g.h, d = row / (g.w * g.h) % g.d,
                  batch = row / (g.w * g.h * g.d);
    for (int64_t tap = 0; tap < taps; ++tap) {
      const int64_t t = tap / (g.s * g.r), r = tap / g.s % g.r, s = tap % g.s;
      // Output o reads input d through tap t when o * stride - pad + t * dilation == d.
      int64_t out_index[3] = {-1, -1, -1};
      const int64_t in_index[3] = {d, h, w}, tap_index[3] = {t, r, s},
                    out_size[3] = {g.o, g.p, g.q};
      bool valid = true;
      for (int dim = 0; dim < 3 && valid; ++dim) {
        const int64_t scaled = in_index[dim] + g.pad[dim] - tap_index[dim] * g.dilation[dim];
        valid =
            scaled >= 0 && scaled % g.stride[dim] == 0 && scaled / g.stride[dim] < out_size[dim];
        out_index[dim] = valid ? scaled / g.stride[dim] : -1;
      }
      if (!valid)
        continue;
      const int64_t dy_base =
          (((batch * g.o + out_index[0]) * g.p + out_index[1]) * g.q + out_index[2]) * g.k;
      for (int64_t group = 0; group < g.groups; ++group)
        for (int64_t kk = 0; kk < g.k_per_group; ++kk)
          out.a[(group * m + row) * k + tap * g.k_per_group + kk] =
              dy[dy_base + group * g.k_per_group + kk];
    }
  }
  for (int64_t group = 0; group < g.groups; ++group)
    for (int64_t tap = 0; tap < taps; ++tap)
      for (int64_t kk = 0; kk < g.k_per_group; ++kk)
        for (int64_t c = 0; c < n; ++c)
          out.b[(group * k + tap * g.k_per_group + kk) * n + c] =
              filter[((group * g.k_per_group + kk) * taps + tap) * g.c_per_group + c];
  return out;
}

Im2colGemm lower_wgrad(const ConvGeometry &g, const std::vector<double> &x,
                       const std::vector<double> &dy) {
  const int64_t taps = g.t * g.r * g.s, m = g.k_per_group, n = taps * g.c_per_group,
                k = g.n * g.o * g.p * g.q;
  Im2colGemm out{f64_gemm_spec(g.groups, m, n, k), std::vector<double>(g.groups * m * k, 0.0),
                 std::vector<double>(g.groups * k * n, 0.0)};
  for (int64_t group = 0; group < g.groups; ++group)
    for (int64_t row = 0; row < m; ++row)
      for (int64_t position = 0; position < k; ++position)
        out.a[(group * m + row) * k + position] = dy[position * g.k + group * g.k_per_group + row];
  for (int64_t position = 0; position < k; ++position) {
    const Position y = y_position(g, position);
    for (int64_t tap = 0; tap < taps; ++tap) {
      const int64_t base = x_pixel_base(g, y, tap / (g.s * g.r), tap / g.s % g.r, tap % g.s);
      if (base < 0)
        continue;
      for (int64_t group = 0; group < g.groups; ++group)
        for (int64_t c = 0; c < g.c_per_group; ++c)
          out.b[(group * k + position) * n + tap * g.c_per_group + c] =
              x[base + group * g.c_per_group + c];
    }
  }
  return out;
}

// The conv output element that GEMM element (group, row, col) computes.
int64_t conv_element(const ConvGeometry &g, int64_t group, int64_t row, int64_t col) {
  switch (g.pass) {
  case ConvPass::fprop: {
    const Position y = y_position(g, row);
    return y_offset(g, y.n, y.o, y.p, y.q, group * g.k_per_group + col);
  }
  case ConvPass::dgrad: {
    const int64_t w = row % g.w, h = row / g.w % g.h, d = row / (g.w * g.h) % g.d,
                  n = row / (g.w * g.h * g.d);
    return x_offset(g, n, d, h, w, group * g.c_per_group + col);
  }
  case ConvPass::wgrad: {
    const int64_t c = col % g.c_per_group, tap = col / g.c_per_group;
    return filter_offset(g, group * g.k_per_group + row, tap / (g.s * g.r), tap / g.s % g.r,
                         tap % g.s, c);
  }
  }
  return -1;
}

} // namespace

Im2colGemm lower_conv_to_gemm(const OpSpec &conv, const ConvBuffers &buffers, MathMode resolved) {
  const ConvGeometry g = conv_geometry(conv);
  if (buffers.x == nullptr || buffers.filter == nullptr || buffers.y == nullptr)
    throw std::invalid_argument("tcjit im2col: buffers x, filter and y are required");
  switch (g.pass) {
  case ConvPass::fprop:
    return lower_fprop(g, load_x_channels_last(g, resolved, buffers.x),
                       load_filter_channels_last(g, resolved, buffers.filter));
  case ConvPass::dgrad:
    return lower_dgrad(g, load_y_channels_last(g, resolved, buffers.y),
                       load_filter_channels_last(g, resolved, buffers.filter));
  case ConvPass::wgrad:
    return lower_wgrad(g, load_x_channels_last(g, resolved, buffers.x),
                       load_y_channels_last(g, resolved, buffers.y));
  }
  throw std::invalid_argument("tcjit im2col: unknown pass");
}

ReferenceResult reference_conv_via_im2col(const OpSpec &conv, const ConvBuffers &buffers,
                                          MathMode resolved) {
  const ConvGeometry g = conv_geometry(conv);
  const OutputLayout layout = output_layout(conv);
  const Im2colGemm lowered = lower_conv_to_gemm(conv, buffers, resolved);
  const int64_t m = lowered.gemm.gemm.m.value, n = lowered.gemm.gemm.n.value;
  std::vector<double> d(static_cast<size_t>(g.groups * m * n));
  const ReferenceResult sums = reference_gemm(
      lowered.gemm, GemmBuffers{lowered.a.data(), lowered.b.data(), d.data(), nullptr},
      MathMode::f32);
  ReferenceValues accumulators(static_cast<size_t>(layout.count), 0.0);
  ReferenceValues abs_sums(static_cast<size_t>(layout.count), 0.0);
  for (int64_t group = 0; group < g.groups; ++group)
    for (int64_t row = 0; row < m; ++row)
      for (int64_t col = 0; col < n; ++col) {
        const auto from = static_cast<size_t>((group * m + row) * n + col);
        const auto to = static_cast<size_t>(conv_element(g, group, row, col));
        accumulators[to] = sums.accumulators[from];
        abs_sums[to] = sums.magnitudes[from];
      }
  void *output = g.pass == ConvPass::fprop   ? buffers.y
                 : g.pass == ConvPass::dgrad ? buffers.x
                                             : buffers.filter;
  return finish_reference(conv, layout, std::move(accumulators), std::move(abs_sums), output,
                          buffers.bias);
}

} // namespace tcjit
