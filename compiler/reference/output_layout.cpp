#include "compiler/reference/output_layout.h"

#include "compiler/reference/conv_geometry.h"
#include "compiler/reference/gemm_geometry.h"

#include <utility>
#include <vector>

namespace tcjit {

namespace {

struct Axis {
  std::string_view name;
  int64_t extent;
};

// Fills a dense layout from axes listed slowest first.
void set_dense_axes(OutputLayout &layout, const std::vector<Axis> &axes) {
  layout.rank = static_cast<int>(axes.size());
  int64_t stride = 1;
  for (int i = layout.rank - 1; i >= 0; --i) {
    layout.axis_names[i] = axes[i].name;
    layout.extents[i] = axes[i].extent;
    layout.strides[i] = stride;
    stride *= axes[i].extent;
  }
  layout.count = stride;
}

int axis_named(const OutputLayout &layout, std::string_view name) {
  for (int i = 0; i < layout.rank; ++i)
    if (layout.axis_names[i] == name)
      return i;
  return -1;
}

OutputLayout gemm_output_layout(const OpSpec &spec) {
  const GemmGeometry g = gemm_geometry(spec);
  OutputLayout layout;
  layout.dtype = g.c.dtype;
  layout.rank = 3;
  if (g.c.row_major) {
    layout.axis_names = {"batch", "row", "col"};
    layout.extents = {g.batch, g.m, g.n};
    layout.strides = {g.c.batch_stride, g.c.row_stride, 1};
  } else {
    layout.axis_names = {"batch", "col", "row"};
    layout.extents = {g.batch, g.n, g.m};
    layout.strides = {g.c.batch_stride, g.c.col_stride, 1};
  }
  layout.count = g.batch * g.m * g.n;
  switch (spec.epilogue.bias) {
  case BiasKind::none: break;
  case BiasKind::row: layout.bias_axis = axis_named(layout, "row"); break;
  case BiasKind::col: layout.bias_axis = axis_named(layout, "col"); break;
  }
  return layout;
}

OutputLayout conv_output_layout(const OpSpec &spec) {
  const ConvGeometry g = conv_geometry(spec);
  std::vector<Axis> axes;
  std::string_view channel;
  OutputLayout layout;
  switch (g.pass) {
  case ConvPass::fprop:
    layout.dtype = g.y_dtype;
    channel = "k";
    axes = {{"n", g.n}, {"o", g.o}, {"p", g.p}, {"q", g.q}};
    axes.insert(g.y_channels_last ? axes.end() : axes.begin() + 1, Axis{"k", g.k});
    break;
  case ConvPass::dgrad:
    layout.dtype = g.x_dtype;
    channel = "c";
    axes = {{"n", g.n}, {"d", g.d}, {"h", g.h}, {"w", g.w}};
    axes.insert(g.x_channels_last ? axes.end() : axes.begin() + 1, Axis{"c", g.c});
    break;
  case ConvPass::wgrad:
    layout.dtype = g.filter_dtype;
    channel = "k";
    axes = {{"k", g.k}, {"t", g.t}, {"r", g.r}, {"s", g.s}};
    axes.insert(g.filter_channels_last ? axes.end() : axes.begin() + 1, Axis{"c", g.c_per_group});
    break;
  }
  if (!g.three_d) {
    // The depth axes (o, d, t) have extent 1: leave them out of coordinates.
    std::erase_if(axes,
                  [](const Axis &a) { return a.name == "o" || a.name == "d" || a.name == "t"; });
  }
  set_dense_axes(layout, axes);
  if (spec.epilogue.bias != BiasKind::none)
    layout.bias_axis = axis_named(layout, channel);
  return layout;
}

} // namespace

OutputLayout output_layout(const OpSpec &spec) {
  if (spec.kind == OpKind::gemm)
    return gemm_output_layout(spec);
  return conv_output_layout(spec);
}

DType output_dtype(const OpSpec &spec) {
  if (spec.kind == OpKind::gemm)
    return spec.gemm.c.dtype;
  switch (spec.conv.pass) {
  case ConvPass::fprop: return spec.conv.y.dtype;
  case ConvPass::dgrad: return spec.conv.x.dtype;
  case ConvPass::wgrad: return spec.conv.filter.dtype;
  }
  return spec.conv.y.dtype;
}

int64_t output_buffer_offset(const OutputLayout &layout, int64_t element) {
  int64_t offset = 0;
  for (int i = layout.rank - 1; i >= 0; --i) {
    offset += element % layout.extents[i] * layout.strides[i];
    element /= layout.extents[i];
  }
  return offset;
}

void output_buffer_offsets(const OutputLayout &layout, int64_t first, int64_t count,
                           int64_t *offsets) {
  if (count <= 0)
    return;
  std::array<int64_t, 5> coordinate{};
  int64_t element = first, offset = 0;
  for (int i = layout.rank - 1; i >= 0; --i) {
    coordinate[i] = element % layout.extents[i];
    offset += coordinate[i] * layout.strides[i];
    element /= layout.extents[i];
  }
  const int last = layout.rank - 1;
  for (int64_t n = 0; n < count; ++n) {
    offsets[n] = offset;
    // the next element: the fastest axis steps; an axis at its end wraps and carries
    int i = last;
    for (; i >= 0 && ++coordinate[i] == layout.extents[i]; --i) {
      offset -= (layout.extents[i] - 1) * layout.strides[i];
      coordinate[i] = 0;
    }
    if (i >= 0)
      offset += layout.strides[i];
  }
}

int64_t output_bias_index(const OutputLayout &layout, int64_t element) {
  if (layout.bias_axis < 0)
    return -1;
  for (int i = layout.rank - 1; i > layout.bias_axis; --i)
    element /= layout.extents[i];
  return element % layout.extents[layout.bias_axis];
}

std::string output_coordinates(const OutputLayout &layout, int64_t element) {
  std::array<int64_t, 5> coordinate{};
  for (int i = layout.rank - 1; i >= 0; --i) {
    coordinate[i] = element % layout.extents[i];
    element /= layout.extents[i];
  }
  std::string text;
  for (int i = 0; i < layout.rank; ++i) {
    if (i > 0)
      text += ", ";
    text += std::string(layout.axis_names[i]) + " " + std::to_string(coordinate[i]);
  }
  return text;
}

} // namespace tcjit
