// Sizes, element offsets and loading of a concrete convolution spec's tensors.
#pragma once

#include "tcjit/op_spec.h"

#include <array>
#include <cstdint>
#include <vector>

namespace tcjit {

// A validated convolution. For conv2d d = t = o = 1 and the depth entries of pad/stride/dilation
// are taken as 0/1/1 whatever the spec holds (ConvSpec documents them as unused).
struct ConvGeometry {
  ConvPass pass = ConvPass::fprop;
  bool three_d = false;
  int64_t n = 1, d = 1, h = 1, w = 1, c = 1; // x: activations
  int64_t k = 1, t = 1, r = 1, s = 1;        // filter: k x t x r x s x (c / groups)
  int64_t o = 1, p = 1, q = 1;               // y: n x o x p x q x k
  std::array<int64_t, 3> pad{0, 0, 0}, stride{1, 1, 1}, dilation{1, 1, 1};
  int64_t groups = 1, c_per_group = 1, k_per_group = 1;
  bool x_channels_last = true, y_channels_last = true, filter_channels_last = true;
  DType x_dtype = DType::f16, y_dtype = DType::f16, filter_dtype = DType::f16;
};

// Validates a convolution spec and returns its geometry. Throws std::invalid_argument naming the
// problem: not a convolution, symbolic batch n (bind it first: see bind_dims.h), a non-positive
// size, groups not dividing c and k, a filter that does not fit the padded input, a filter layout
// for an activation tensor (or the reverse), conv2d with d or t != 1, or a reserved dtype.
ConvGeometry conv_geometry(const OpSpec &spec);

int64_t x_element_count(const ConvGeometry &g);
int64_t y_element_count(const ConvGeometry &g);
int64_t filter_element_count(const ConvGeometry &g);

// Offsets in the spec's layouts. `c` of filter_offset is the channel within its group.
int64_t x_offset(const ConvGeometry &g, int64_t n, int64_t d, int64_t h, int64_t w, int64_t c);
int64_t y_offset(const ConvGeometry &g, int64_t n, int64_t o, int64_t p, int64_t q, int64_t k);
int64_t filter_offset(const ConvGeometry &g, int64_t k, int64_t t, int64_t r, int64_t s, int64_t c);

// The input coordinate that output coordinate `out` reads through filter tap `tap` along spatial
// dimension `dim` (0 depth, 1 height, 2 width): out * stride - pad + tap * dilation. It may fall
// in the padding (< 0 or >= the input size).
inline int64_t input_coordinate(const ConvGeometry &g, int dim, int64_t out, int64_t tap) {
  return out * g.stride[dim] - g.pad[dim] + tap * g.dilation[dim];
}

// Tensors converted to double in channels-last order, as the tensor cores see them
// (read_input_as_hardware_sees): x as [n][d][h][w][c], y as [n][o][p][q][k],
// filter as [k][t][r][s][c / groups].
std::vector<double> load_x_channels_last(const ConvGeometry &g, MathMode resolved, const void *x);
std::vector<double> load_y_channels_last(const ConvGeometry &g, MathMode resolved, const void *y);
std::vector<double> load_filter_channels_last(const ConvGeometry &g, MathMode resolved,
                                              const void *filter);

} // namespace tcjit
