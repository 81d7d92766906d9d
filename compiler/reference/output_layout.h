// The output elements of an op, in memory order: element e of a ReferenceResult is the e-th
// element of the output buffer (GEMM: D in c; fprop: y; dgrad: x; wgrad: filter), skipping the
// padding of ldc. For dense buffers the element index is the buffer offset.
#pragma once

#include "tcjit/op_spec.h"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace tcjit {

struct OutputLayout {
  DType dtype = DType::f32;
  int rank = 0;
  std::array<int64_t, 5> extents{};             // slowest axis first
  std::array<int64_t, 5> strides{};             // elements between neighbours along each axis
  std::array<std::string_view, 5> axis_names{}; // "batch", "row", "col"; "n", "k", "p", ...
  int bias_axis = -1; // the axis whose coordinate indexes the bias; -1 when there is no bias
  int64_t count = 0;  // number of output elements
};

// Throws std::invalid_argument for specs the references reject (see gemm_geometry.h and
// conv_geometry.h).
//   GEMM: axes (batch, row, col) for a row-major c, (batch, col, row) for a column-major c;
//         bias=row indexes by row, bias=col by column.
//   conv: the computed tensor's axes in its layout, e.g. (n, p, q, k) for fprop with an nhwc y,
//         (k, c, r, s) for wgrad with a kcrs filter (conv3d adds o / d / t); any bias indexes the
//         output channel (k for fprop and wgrad, c for dgrad).
OutputLayout output_layout(const OpSpec &spec);

// The output dtype: c for a GEMM, the computed tensor's dtype for a convolution.
DType output_dtype(const OpSpec &spec);

int64_t output_buffer_offset(const OutputLayout &layout, int64_t element);
// The buffer offsets of the `count` elements from `first` on, in order, into `offsets`: the same
// values as output_buffer_offset, by stepping the coordinates instead of dividing per element.
void output_buffer_offsets(const OutputLayout &layout, int64_t first, int64_t count,
                           int64_t *offsets);
// The bias element added to `element`; -1 when the layout has no bias.
int64_t output_bias_index(const OutputLayout &layout, int64_t element);
// "batch 0, row 2, col 1", "n 0, p 3, q 1, k 7", ...
std::string output_coordinates(const OutputLayout &layout, int64_t element);

} // namespace tcjit
