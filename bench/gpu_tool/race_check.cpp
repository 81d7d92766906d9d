#include "bench/gpu_tool/race_check.h"

#include "compiler/reference/conv_geometry.h"
#include "compiler/reference/conv_reference.h"
#include "compiler/reference/gemm_reference.h"
#include "compiler/reference/random_fill.h"
#include "compiler/reference/tolerance.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace tcjit::bench {

namespace {

size_t bytes_of(DType dtype, int64_t count) {
  return static_cast<size_t>((count * dtype_bits(dtype) + 7) / 8);
}

std::vector<std::byte> random_bytes(DType dtype, int64_t count, uint64_t seed) {
  std::vector<std::byte> v(bytes_of(dtype, count));
  fill_random(dtype, v.data(), count, seed);
  return v;
}

struct GemmDims {
  int64_t m, n, k, batch;
};
GemmDims gemm_dims(const OpSpec &spec) {
  return {spec.gemm.m.value, spec.gemm.n.value, spec.gemm.k.value, spec.gemm.batch.value};
}

// The output tensor of a convolution's pass, and its dtype.
DType conv_output_dtype(const OpSpec &spec) {
  switch (spec.conv.pass) {
  case ConvPass::fprop: return spec.conv.y.dtype;
  case ConvPass::dgrad: return spec.conv.x.dtype;
  case ConvPass::wgrad: return spec.conv.filter.dtype;
  }
  return spec.conv.y.dtype;
}
int64_t conv_output_count(const ConvGeometry &g) {
  switch (g.pass) {
  case ConvPass::fprop: return y_element_count(g);
  case ConvPass::dgrad: return x_element_count(g);
  case ConvPass::wgrad: return filter_element_count(g);
  }
  return 0;
}

// Rows [0, half) and [m - half, m) of every batch of a row-major m x cols matrix.
std::vector<std::byte> gather_rows(const std::vector<std::byte> &matrix, size_t element_bytes,
                                   int64_t m, int64_t cols, int64_t batch, int64_t half) {
  const size_t row_bytes = element_bytes * static_cast<size_t>(cols);
  std::vector<std::byte> out(row_bytes * static_cast<size_t>(2 * half * batch));
  std::byte *to = out.data();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t first : {int64_t{0}, m - half}) {
      const size_t from = row_bytes * static_cast<size_t>(b * m + first);
      std::memcpy(to, matrix.data() + from, row_bytes * static_cast<size_t>(half));
      to += row_bytes * static_cast<size_t>(half);
    }
  return out;
}

std::string count_text(int64_t n) {
  return std::to_string(n);
}

} // namespace

ProblemInputs random_inputs(const OpSpec &spec, uint64_t seed) {
  ProblemInputs in;
  in.spec = spec;
  if (spec.kind == OpKind::gemm) {
    const GemmDims d = gemm_dims(spec);
    in.a = random_bytes(spec.gemm.a.dtype, d.m * d.k * d.batch, seed);
    in.b = random_bytes(spec.gemm.b.dtype, d.k * d.n * d.batch, seed + 1);
    if (spec.epilogue.bias != BiasKind::none)
      in.bias = random_bytes(spec.gemm.c.dtype, spec.epilogue.bias == BiasKind::col ? d.n : d.m,
                             seed + 3);
    return in;
  }
  const ConvGeometry g = conv_geometry(spec);
  in.x = random_bytes(g.x_dtype, x_element_count(g), seed);
  in.filter = random_bytes(g.filter_dtype, filter_element_count(g), seed + 1);
  in.y = random_bytes(g.y_dtype, y_element_count(g), seed + 2);
  return in;
}

size_t output_bytes(const OpSpec &spec) {
  if (spec.kind == OpKind::gemm) {
    const GemmDims d = gemm_dims(spec);
    return bytes_of(spec.gemm.c.dtype, d.m * d.n * d.batch);
  }
  return bytes_of(conv_output_dtype(spec), conv_output_count(conv_geometry(spec)));
}

double multiply_adds(const OpSpec &spec) {
  if (spec.kind == OpKind::gemm) {
    const GemmDims d = gemm_dims(spec);
    return static_cast<double>(d.m) * d.n * d.k * d.batch;
  }
  const ConvGeometry g = conv_geometry(spec);
  const ConvSpec &c = spec.conv;
  const int64_t n = c.n.value;
  const int64_t p = static_cast<int64_t>(y_element_count(g) / (n * c.k)); // p * q (* o)
  return static_cast<double>(n) * p * c.k * (c.c / c.groups) * c.t * c.r * c.s;
}

OutputChecker::OutputChecker(const ProblemInputs &inputs, double max_macs)
    : inputs_(inputs), max_macs_(max_macs) {}

void OutputChecker::prepare_reference() {
  prepared_ = true;
  const OpSpec &spec = inputs_.spec;
  const MathMode resolved = resolve_math(spec.math, tf32_disabled_by_environment());
  const double macs = multiply_adds(spec);
  checked_spec_ = spec;
  if (spec.kind == OpKind::gemm) {
    const GemmDims d = gemm_dims(spec);
    if (macs <= max_macs_) {
      part_ = "all " + count_text(d.m * d.n * d.batch) + " elements";
      std::vector<std::byte> out(output_bytes(spec));
      GemmBuffers buf{inputs_.a.data(), inputs_.b.data(), out.data(),
                      inputs_.bias.empty() ? nullptr : inputs_.bias.data()};
      reference_ = reference_gemm(spec, buf, resolved);
      return;
    }
    const double per_row = static_cast<double>(d.n) * d.k * d.batch;
    rows_half_ = std::clamp<int64_t>(static_cast<int64_t>(max_macs_ / per_row / 2), 1, 128);
    rows_half_ = std::min(rows_half_, d.m / 2);
    checked_spec_.gemm.m = Dim::fixed_size(2 * rows_half_);
    const size_t a_el = static_cast<size_t>(dtype_bits(spec.gemm.a.dtype) / 8);
    const std::vector<std::byte> a = gather_rows(inputs_.a, a_el, d.m, d.k, d.batch, rows_half_);
    std::vector<std::byte> out(output_bytes(checked_spec_));
    GemmBuffers buf{a.data(), inputs_.b.data(), out.data(),
                    inputs_.bias.empty() ? nullptr : inputs_.bias.data()};
    reference_ = reference_gemm(checked_spec_, buf, resolved);
    part_ = "rows 0.." + count_text(rows_half_ - 1) + " and " + count_text(d.m - rows_half_) +
            ".." + count_text(d.m - 1) + (d.batch > 1 ? " of every batch" : "") + " (" +
            count_text(2 * rows_half_ * d.n * d.batch) + " of " + count_text(d.m * d.n * d.batch) +
            " elements)";
    return;
  }
  const ConvSpec &c = spec.conv;
  const bool full = macs <= max_macs_;
  if (!full && c.pass == ConvPass::wgrad) {
    char text[160];
    std::snprintf(text, sizeof(text),
                  "the CPU reference of this wgrad takes %.3g multiply-adds, over the check's "
                  "budget of %.3g (every image adds to each weight: no part to check alone)",
                  macs, max_macs_);
    why_unchecked_ = text;
    return;
  }
  first_image_ = !full && c.n.value > 1;
  if (first_image_)
    checked_spec_.conv.n = Dim::fixed_size(1);
  const ConvGeometry g = conv_geometry(checked_spec_);
  // The reference writes the pass's output tensor: give it copies (the first image's when only
  // that is checked: it is the start of each NHWC tensor).
  std::vector<std::byte> x(inputs_.x.begin(),
                           inputs_.x.begin() + bytes_of(g.x_dtype, x_element_count(g)));
  std::vector<std::byte> w = inputs_.filter;
  std::vector<std::byte> y(inputs_.y.begin(),
                           inputs_.y.begin() + bytes_of(g.y_dtype, y_element_count(g)));
  ConvBuffers buf{x.data(), w.data(), y.data(), nullptr};
  reference_ = reference_conv(checked_spec_, buf, resolved);
  const int64_t all = conv_output_count(conv_geometry(spec));
  part_ = first_image_ ? "image 0 (" + count_text(conv_output_count(g)) + " of " + count_text(all) +
                             " elements)"
                       : "all " + count_text(all) + " elements";
}

Verification OutputChecker::check(const std::vector<std::byte> &output) {
  const OpSpec &spec = inputs_.spec;
  if (output.size() != output_bytes(spec))
    throw std::invalid_argument("the output to check has " + std::to_string(output.size()) +
                                " bytes; the problem's has " + std::to_string(output_bytes(spec)));
  if (!prepared_)
    prepare_reference();
  Verification v;
  if (!reference_) {
    v.why_unchecked = why_unchecked_;
    return v;
  }
  std::vector<std::byte> part;
  const std::byte *actual = output.data();
  if (rows_half_ > 0) {
    const GemmDims d = gemm_dims(spec);
    part = gather_rows(output, static_cast<size_t>(dtype_bits(spec.gemm.c.dtype) / 8), d.m, d.n,
                       d.batch, rows_half_);
    actual = part.data();
  }
  // first_image_: image 0 is the start of the output tensor (NHWC), read as the n=1 spec's.
  const MathMode resolved = resolve_math(spec.math, tf32_disabled_by_environment());
  const CompareReport report = compare_with_reference(checked_spec_, resolved, actual, *reference_);
  v.checked = true;
  v.ok = report.ok();
  v.part = part_;
  v.elements = report.count;
  v.mismatches = report.mismatches;
  v.max_abs_error = report.max_abs_error;
  v.max_error_over_tolerance = report.max_error_over_tolerance;
  if (!v.ok)
    v.worst = report.summary();
  return v;
}

} // namespace tcjit::bench
