#include "compiler/reference/conv_geometry.h"

#include "compiler/reference/numeric_convert.h"
#include "compiler/spec/shape.h"
#include "compiler/target/dtype_info.h"
#include "support/parallel_for.h"

#include <stdexcept>
#include <string>

namespace tcjit {

namespace {

[[noreturn]] void fail(const std::string &what) {
  throw std::invalid_argument("tcjit reference conv: " + what);
}

void require_positive(int64_t value, const char *name) {
  if (value < 1)
    fail(std::string(name) + " must be positive, got " + std::to_string(value));
}

// Whether an activation layout keeps channels innermost; fails for filter layouts.
bool activation_channels_last(TensorLayout layout, const char *tensor) {
  switch (layout) {
  case TensorLayout::nhwc:
  case TensorLayout::ndhwc: return true;
  case TensorLayout::nchw:
  case TensorLayout::ncdhw: return false;
  case TensorLayout::krsc:
  case TensorLayout::kcrs:
  case TensorLayout::ktrsc:
  case TensorLayout::kctrs: break;
  }
  fail(std::string(tensor) + " has the filter layout " + std::string(to_string(layout)));
}

bool filter_channels_last(TensorLayout layout) {
  switch (layout) {
  case TensorLayout::krsc:
  case TensorLayout::ktrsc: return true;
  case TensorLayout::kcrs:
  case TensorLayout::kctrs: return false;
  case TensorLayout::nhwc:
  case TensorLayout::nchw:
  case TensorLayout::ndhwc:
  case TensorLayout::ncdhw: break;
  }
  fail("filter has the activation layout " + std::string(to_string(layout)));
}

void require_supported(DType dtype, const char *tensor) {
  if (is_reserved_type(dtype))
    fail(std::string(tensor) + " has the reserved dtype " + std::string(to_string(dtype)));
  if (values_per_byte(dtype) > 1)
    fail(std::string(tensor) + " has the packed dtype " + std::string(to_string(dtype)) +
         ": convolutions take no sub-byte types");
}

} // namespace

ConvGeometry conv_geometry(const OpSpec &spec) {
  if (spec.kind == OpKind::gemm)
    fail("the spec is a gemm, not a convolution");
  const ConvSpec &conv = spec.conv;
  if (!conv.n.is_fixed())
    fail("the batch n is symbolic (`?` or a range); bind it first (bind_conv_batch)");
  ConvGeometry g;
  g.pass = conv.pass;
  g.three_d = spec.kind == OpKind::conv3d;
  g.n = conv.n.value;
  g.d = conv.d;
  g.h = conv.h;
  g.w = conv.w;
  g.c = conv.c;
  g.k = conv.k;
  g.t = conv.t;
  g.r = conv.r;
  g.s = conv.s;
  g.groups = conv.groups;
  g.pad = conv.pad;
  g.stride = conv.stride;
  g.dilation = conv.dilation;
  if (!g.three_d) {
    if (g.d != 1 || g.t != 1)
      fail("conv2d needs d = 1 and t = 1, got d = " + std::to_string(g.d) +
           ", t = " + std::to_string(g.t));
    g.pad[0] = 0;
    g.stride[0] = 1;
    g.dilation[0] = 1;
  }
  const char *names[] = {"n", "d", "h", "w", "c", "k", "t", "r", "s", "groups"};
  const int64_t values[] = {g.n, g.d, g.h, g.w, g.c, g.k, g.t, g.r, g.s, g.groups};
  for (size_t i = 0; i < std::size(values); ++i)
    require_positive(values[i], names[i]);
  const char *axes[] = {"depth", "height", "width"};
  for (int dim = 0; dim < 3; ++dim) {
    if (g.pad[dim] < 0)
      fail(std::string(axes[dim]) + " padding must not be negative");
    require_positive(g.stride[dim], (std::string(axes[dim]) + " stride").c_str());
    require_positive(g.dilation[dim], (std::string(axes[dim]) + " dilation").c_str());
  }
  if (g.c % g.groups != 0 || g.k % g.groups != 0)
    fail("groups = " + std::to_string(g.groups) + " must divide c = " + std::to_string(g.c) +
         " and k = " + std::to_string(g.k));
  g.c_per_group = g.c / g.groups;
  g.k_per_group = g.k / g.groups;

  ConvSpec normalized = conv;
  normalized.pad = g.pad;
  normalized.stride = g.stride;
  normalized.dilation = g.dilation;
  const ConvOutputDims out = conv_output_dims(normalized);
  g.o = out.o;
  g.p = out.p;
  g.q = out.q;
  if (g.o < 1 || g.p < 1 || g.q < 1)
    fail("the filter does not fit the padded input (output " + std::to_string(g.o) + " x " +
         std::to_string(g.p) + " x " + std::to_string(g.q) + ")");

  g.x_channels_last = activation_channels_last(conv.x.layout, "x");
  g.y_channels_last = activation_channels_last(conv.y.layout, "y");
  g.filter_channels_last = filter_channels_last(conv.filter.layout);
  require_supported(conv.x.dtype, "x");
  require_supported(conv.y.dtype, "y");
  require_supported(conv.filter.dtype, "filter");
  require_supported(spec.acc, "the accumulator");
  g.x_dtype = conv.x.dtype;
  g.y_dtype = conv.y.dtype;
  g.filter_dtype = conv.filter.dtype;
  return g;
}

int64_t x_element_count(const ConvGeometry &g) {
  return g.n * g.d * g.h * g.w * g.c;
}
int64_t y_element_count(const ConvGeometry &g) {
  return g.n * g.o * g.p * g.q * g.k;
}
int64_t filter_element_count(const ConvGeometry &g) {
  return g.k * g.t * g.r * g.s * g.c_per_group;
}

int64_t x_offset(const ConvGeometry &g, int64_t n, int64_t d, int64_t h, int64_t w, int64_t c) {
  if (g.x_channels_last)
    return (((n * g.d + d) * g.h + h) * g.w + w) * g.c + c;
  return (((n * g.c + c) * g.d + d) * g.h + h) * g.w + w;
}

int64_t y_offset(const ConvGeometry &g, int64_t n, int64_t o, int64_t p, int64_t q, int64_t k) {
  if (g.y_channels_last)
    return (((n * g.o + o) * g.p + p) * g.q + q) * g.k + k;
  return (((n * g.k + k) * g.o + o) * g.p + p) * g.q + q;
}

int64_t filter_offset(const ConvGeometry &g, int64_t k, int64_t t, int64_t r, int64_t s,
                      int64_t c) {
  if (g.filter_channels_last)
    return (((k * g.t + t) * g.r + r) * g.s + s) * g.c_per_group + c;
  return (((k * g.c_per_group + c) * g.t + t) * g.r + r) * g.s + s;
}

std::vector<double> load_x_channels_last(const ConvGeometry &g, MathMode resolved, const void *x) {
  std::vector<double> out(static_cast<size_t>(x_element_count(g)));
  const int64_t pixels = g.n * g.d * g.h * g.w;
  parallel_for(pixels, 256, [&](int64_t begin, int64_t end) {
    for (int64_t pixel = begin; pixel < end; ++pixel) {
      const int64_t w = pixel % g.w, h = pixel / g.w % g.h, d = pixel / (g.w * g.h) % g.d;
      const int64_t n = pixel / (g.w * g.h * g.d);
      for (int64_t c = 0; c < g.c; ++c)
        out[static_cast<size_t>(pixel * g.c + c)] =
            read_input_as_hardware_sees(g.x_dtype, resolved, x, x_offset(g, n, d, h, w, c));
    }
  });
  return out;
}

std::vector<double> load_y_channels_last(const ConvGeometry &g, MathMode resolved, const void *y) {
  std::vector<double> out(static_cast<size_t>(y_element_count(g)));
  const int64_t pixels = g.n * g.o * g.p * g.q;
  parallel_for(pixels, 256, [&](int64_t begin, int64_t end) {
    for (int64_t pixel = begin; pixel < end; ++pixel) {
      const int64_t q = pixel % g.q, p = pixel / g.q % g.p, o = pixel / (g.q * g.p) % g.o;
      const int64_t n = pixel / (g.q * g.p * g.o);
      for (int64_t k = 0; k < g.k; ++k)
        out[static_cast<size_t>(pixel * g.k + k)] =
            read_input_as_hardware_sees(g.y_dtype, resolved, y, y_offset(g, n, o, p, q, k));
    }
  });
  return out;
}

std::vector<double> load_filter_channels_last(const ConvGeometry &g, MathMode resolved,
                                              const void *filter) {
  std::vector<double> out(static_cast<size_t>(filter_element_count(g)));
  const int64_t taps = g.k * g.t * g.r * g.s;
  parallel_for(taps, 256, [&](int64_t begin, int64_t end) {
    for (int64_t tap = begin; tap < end; ++tap) {
      const int64_t s = tap % g.s, r = tap / g.s % g.r, t = tap / (g.s * g.r) % g.t;
      const int64_t k = tap / (g.s * g.r * g.t);
      for (int64_t c = 0; c < g.c_per_group; ++c)
        out[static_cast<size_t>(tap * g.c_per_group + c)] = read_input_as_hardware_sees(
            g.filter_dtype, resolved, filter, filter_offset(g, k, t, r, s, c));
    }
  });
  return out;
}

} // namespace tcjit
