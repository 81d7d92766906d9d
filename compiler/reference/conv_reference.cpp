#include "compiler/reference/conv_reference.h"

#include "compiler/reference/conv_geometry.h"
#include "compiler/reference/epilogue.h"
#include "compiler/reference/output_layout.h"
#include "support/parallel_for.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

namespace tcjit {

namespace {

// Chunks of at least this many multiply-adds are worth a thread.
constexpr int64_t min_work_per_chunk = 1 << 15;

int64_t min_chunk_for(int64_t work_per_item) {
  return std::max<int64_t>(1, min_work_per_chunk / std::max<int64_t>(work_per_item, 1));
}

// acc[i] += sum_j x[j] * rows[i][j] and abs_acc[i] += sum_j |x[j]| |rows[i][j]| for `count`
// consecutive rows of length `length` (row i at rows + i * row_stride), adding the terms one by
// one in increasing j. Four rows at a time share each x[j].
void accumulate_dot_products(const double *x, const double *rows, int64_t row_stride, int64_t count,
                             int64_t length, double *acc, double *abs_acc) {
  int64_t i = 0;
  for (; i + 4 <= count; i += 4) {
    const double *r0 = rows + i * row_stride, *r1 = r0 + row_stride, *r2 = r1 + row_stride,
                 *r3 = r2 + row_stride;
    double a0 = acc[i], a1 = acc[i + 1], a2 = acc[i + 2], a3 = acc[i + 3];
    double m0 = abs_acc[i], m1 = abs_acc[i + 1], m2 = abs_acc[i + 2], m3 = abs_acc[i + 3];
    for (int64_t j = 0; j < length; ++j) {
      const double v = x[j], v_abs = std::fabs(v);
      a0 += v * r0[j];
      a1 += v * r1[j];
      a2 += v * r2[j];
      a3 += v * r3[j];
      m0 += v_abs * std::fabs(r0[j]);
      m1 += v_abs * std::fabs(r1[j]);
      m2 += v_abs * std::fabs(r2[j]);
      m3 += v_abs * std::fabs(r3[j]);
    }
    acc[i] = a0, acc[i + 1] = a1, acc[i + 2] = a2, acc[i + 3] = a3;
    abs_acc[i] = m0, abs_acc[i + 1] = m1, abs_acc[i + 2] = m2, abs_acc[i + 3] = m3;
  }
  for (; i < count; ++i) {
    const double *row = rows + i * row_stride;
    double a = acc[i], m = abs_acc[i];
    for (int64_t j = 0; j < length; ++j) {
      a += x[j] * row[j];
      m += std::fabs(x[j]) * std::fabs(row[j]);
    }
    acc[i] = a;
    abs_acc[i] = m;
  }
}

// Whether an input coordinate lies inside a tensor dimension of `size`.
bool inside(int64_t coordinate, int64_t size) {
  return coordinate >= 0 && coordinate < size;
}

// The output coordinate that reads input coordinate `in` through tap `tap` (the inverse of
// input_coordinate), or -1 when no output does (stride does not divide, or out of range).
int64_t output_coordinate(const ConvGeometry &g, int dim, int64_t in, int64_t tap,
                          int64_t out_size) {
  const int64_t scaled = in + g.pad[dim] - tap * g.dilation[dim];
  if (scaled < 0 || scaled % g.stride[dim] != 0)
    return -1;
  const int64_t out = scaled / g.stride[dim];
  return out < out_size ? out : -1;
}

struct Sums {
  ReferenceValues acc, abs;
  explicit Sums(int64_t count)
      : acc(static_cast<size_t>(count), 0.0), abs(static_cast<size_t>(count), 0.0) {}
};

// Sums of fprop output pixel (n, o, p, q) for every k, in (t, r, s, c) order. x is channels-last
// [n][d][h][w][c], filter [k][t][r][s][c / groups].
void fprop_pixel(const ConvGeometry &g, const std::vector<double> &x,
                 const std::vector<double> &filter, int64_t n, int64_t o, int64_t p, int64_t q,
                 double *acc, double *abs_acc) {
  const int64_t k_stride = g.t * g.r * g.s * g.c_per_group;
  for (int64_t t = 0; t < g.t; ++t) {
    const int64_t d = input_coordinate(g, 0, o, t);
    if (!inside(d, g.d))
      continue;
    for (int64_t r = 0; r < g.r; ++r) {
      const int64_t h = input_coordinate(g, 1, p, r);
      if (!inside(h, g.h))
        continue;
      for (int64_t s = 0; s < g.s; ++s) {
        const int64_t w = input_coordinate(g, 2, q, s);
        if (!inside(w, g.w))
          continue;
        const double *x_pixel = x.data() + (((n * g.d + d) * g.h + h) * g.w + w) * g.c;
        const double *filter_tap = filter.data() + ((t * g.r + r) * g.s + s) * g.c_per_group;
        for (int64_t group = 0; group < g.groups; ++group) {
          const int64_t k0 = group * g.k_per_group;
          accumulate_dot_products(x_pixel + group * g.c_per_group, filter_tap + k0 * k_stride,
                                  k_stride, g.k_per_group, g.c_per_group, acc + k0, abs_acc + k0);
        }
      }
    }
  }
}

// Sums of dgrad output pixel (n, d, h, w) for every c, in (t, r, s, k) order. dy is channels-last
// [n][o][p][q][k], filter_t [group][t][r][s][c / groups][k / groups].
void dgrad_pixel(const ConvGeometry &g, const std::vector<double> &dy,
                 const std::vector<double> &filter_t, int64_t n, int64_t d, int64_t h, int64_t w,
                 double *acc, double *abs_acc) {
  const int64_t taps = g.t * g.r * g.s;
  for (int64_t t = 0; t < g.t; ++t) {
    const int64_t o = output_coordinate(g, 0, d, t, g.o);
    if (o < 0)
      continue;
    for (int64_t r = 0; r < g.r; ++r) {
      const int64_t p = output_coordinate(g, 1, h, r, g.p);
      if (p < 0)
        continue;
      for (int64_t s = 0; s < g.s; ++s) {
        const int64_t q = output_coordinate(g, 2, w, s, g.q);
        if (q < 0)
          continue;
        const double *dy_pixel = dy.data() + (((n * g.o + o) * g.p + p) * g.q + q) * g.k;
        const int64_t tap = (t * g.r + r) * g.s + s;
        for (int64_t group = 0; group < g.groups; ++group) {
          const int64_t c0 = group * g.c_per_group;
          const double *rows =
              filter_t.data() + (group * taps + tap) * g.c_per_group * g.k_per_group;
          accumulate_dot_products(dy_pixel + group * g.k_per_group, rows, g.k_per_group,
                                  g.c_per_group, g.k_per_group, acc + c0, abs_acc + c0);
        }
      }
    }
  }
}

// Sums of dw[k][t][r][s][c] for every c of k's group, in (n, o, p, q) order.
void wgrad_filter_row(const ConvGeometry &g, const std::vector<double> &x,
                      const std::vector<double> &dy, int64_t k, int64_t t, int64_t r, int64_t s,
                      double *acc, double *abs_acc) {
  const int64_t c0 = k / g.k_per_group * g.c_per_group;
  int64_t position = 0; // (n, o, p, q) flattened: the index into dy's pixels
  for (int64_t n = 0; n < g.n; ++n)
    for (int64_t o = 0; o < g.o; ++o)
      for (int64_t p = 0; p < g.p; ++p)
        for (int64_t q = 0; q < g.q; ++q, ++position) {
          const int64_t d = input_coordinate(g, 0, o, t), h = input_coordinate(g, 1, p, r),
                        w = input_coordinate(g, 2, q, s);
          if (!inside(d, g.d) || !inside(h, g.h) || !inside(w, g.w))
            continue;
          const double dy_value = dy[static_cast<size_t>(position * g.k + k)];
          const double dy_abs = std::fabs(dy_value);
          const double *x_row = x.data() + (((n * g.d + d) * g.h + h) * g.w + w) * g.c + c0;
          for (int64_t c = 0; c < g.c_per_group; ++c) {
            acc[c] += dy_value * x_row[c];
            abs_acc[c] += dy_abs * std::fabs(x_row[c]);
          }
        }
}

Sums fprop_sums(const ConvGeometry &g, MathMode resolved, const ConvBuffers &buffers) {
  const std::vector<double> x = load_x_channels_last(g, resolved, buffers.x);
  const std::vector<double> filter = load_filter_channels_last(g, resolved, buffers.filter);
  Sums sums(y_element_count(g));
  const int64_t work_per_pixel = g.k * g.t * g.r * g.s * g.c_per_group;
  parallel_for(g.n * g.o * g.p * g.q, min_chunk_for(work_per_pixel),
               [&](int64_t begin, int64_t end) {
                 std::vector<double> acc(static_cast<size_t>(g.k)), abs_acc(acc.size());
                 for (int64_t pixel = begin; pixel < end; ++pixel) {
                   const int64_t q = pixel % g.q, p = pixel / g.q % g.p,
                                 o = pixel / (g.q * g.p) % g.o, n = pixel / (g.q * g.p * g.o);
                   std::fill(acc.begin(), acc.end(), 0.0);
                   std::fill(abs_acc.begin(), abs_acc.end(), 0.0);
                   fprop_pixel(g, x, filter, n, o, p, q, acc.data(), abs_acc.data());
                   for (int64_t k = 0; k < g.k; ++k) {
                     const auto e = static_cast<size_t>(y_offset(g, n, o, p, q, k));
                     sums.acc[e] = acc[static_cast<size_t>(k)];
                     sums.abs[e] = abs_acc[static_cast<size_t>(k)];
                   }
                 }
               });
  return sums;
}

Sums dgrad_sums(const ConvGeometry &g, MathMode resolved, const ConvBuffers &buffers) {
  const std::vector<double> dy = load_y_channels_last(g, resolved, buffers.y);
  const std::vector<double> filter = load_filter_channels_last(g, resolved, buffers.filter);
  // The filter as [group][t][r][s][c][k within group], so that the k terms are contiguous.
  const int64_t taps = g.t * g.r * g.s;
  std::vector<double> filter_t(filter.size());
  for (int64_t k = 0; k < g.k; ++k)
    for (int64_t tap = 0; tap < taps; ++tap)
      for (int64_t c = 0; c < g.c_per_group; ++c) {
        const int64_t group = k / g.k_per_group, kk = k % g.k_per_group;
        filter_t[static_cast<size_t>(((group * taps + tap) * g.c_per_group + c) * g.k_per_group +
                                     kk)] =
            filter[static_cast<size_t>((k * taps + tap) * g.c_per_group + c)];
      }
  Sums sums(x_element_count(g));
  parallel_for(g.n * g.d * g.h * g.w, min_chunk_for(g.c * taps * g.k_per_group),
               [&](int64_t begin, int64_t end) {
                 std::vector<double> acc(static_cast<size_t>(g.c)), abs_acc(acc.size());
                 for (int64_t pixel = begin; pixel < end; ++pixel) {
                   const int64_t w = pixel % g.w, h = pixel / g.w % g.h,
                                 d = pixel / (g.w * g.h) % g.d, n = pixel / (g.w * g.h * g.d);
                   std::fill(acc.begin(), acc.end(), 0.0);
                   std::fill(abs_acc.begin(), abs_acc.end(), 0.0);
                   dgrad_pixel(g, dy, filter_t, n, d, h, w, acc.data(), abs_acc.data());
                   for (int64_t c = 0; c < g.c; ++c) {
                     const auto e = static_cast<size_t>(x_offset(g, n, d, h, w, c));
                     sums.acc[e] = acc[static_cast<size_t>(c)];
                     sums.abs[e] = abs_acc[static_cast<size_t>(c)];
                   }
                 }
               });
  return sums;
}

Sums wgrad_sums(const ConvGeometry &g, MathMode resolved, const ConvBuffers &buffers) {
  const std::vector<double> x = load_x_channels_last(g, resolved, buffers.x);
  const std::vector<double> dy = load_y_channels_last(g, resolved, buffers.y);
  Sums sums(filter_element_count(g));
  const int64_t taps = g.t * g.r * g.s;
  const int64_t positions = g.n * g.o * g.p * g.q;
  parallel_for(g.k * taps, min_chunk_for(positions * g.c_per_group),
               [&](int64_t begin, int64_t end) {
                 std::vector<double> acc(static_cast<size_t>(g.c_per_group)), abs_acc(acc.size());
                 for (int64_t row = begin; row < end; ++row) {
                   const int64_t k = row / taps, tap = row % taps;
                   const int64_t s = tap % g.s, r = tap / g.s % g.r, t = tap / (g.s * g.r);
                   std::fill(acc.begin(), acc.end(), 0.0);
                   std::fill(abs_acc.begin(), abs_acc.end(), 0.0);
                   wgrad_filter_row(g, x, dy, k, t, r, s, acc.data(), abs_acc.data());
                   for (int64_t c = 0; c < g.c_per_group; ++c) {
                     const auto e = static_cast<size_t>(filter_offset(g, k, t, r, s, c));
                     sums.acc[e] = acc[static_cast<size_t>(c)];
                     sums.abs[e] = abs_acc[static_cast<size_t>(c)];
                   }
                 }
               });
  return sums;
}

} // namespace

ReferenceResult reference_conv(const OpSpec &spec, const ConvBuffers &buffers, MathMode resolved) {
  const ConvGeometry g = conv_geometry(spec);
  if (resolved == MathMode::automatic)
    throw std::invalid_argument(
        "tcjit reference conv: pass the resolved math mode (tf32 or f32), not auto");
  if (buffers.x == nullptr || buffers.filter == nullptr || buffers.y == nullptr)
    throw std::invalid_argument("tcjit reference conv: buffers x, filter and y are required");
  const OutputLayout layout = output_layout(spec);
  switch (g.pass) {
  case ConvPass::fprop: {
    Sums sums = fprop_sums(g, resolved, buffers);
    return finish_reference(spec, layout, std::move(sums.acc), std::move(sums.abs), buffers.y,
                            buffers.bias);
  }
  case ConvPass::dgrad: {
    Sums sums = dgrad_sums(g, resolved, buffers);
    return finish_reference(spec, layout, std::move(sums.acc), std::move(sums.abs), buffers.x,
                            buffers.bias);
  }
  case ConvPass::wgrad: {
    Sums sums = wgrad_sums(g, resolved, buffers);
    return finish_reference(spec, layout, std::move(sums.acc), std::move(sums.abs), buffers.filter,
                            buffers.bias);
  }
  }
  throw std::invalid_argument("tcjit reference conv: unknown pass");
}

} // namespace tcjit
