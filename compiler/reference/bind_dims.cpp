#include "compiler/reference/bind_dims.h"

#include <stdexcept>
#include <string>

namespace tcjit {

namespace {

Dim bind(const Dim &dim, int64_t value, const char *name) {
  auto fail = [&](const std::string &why) {
    throw std::invalid_argument("tcjit bind: " + std::string(name) + " = " + std::to_string(value) +
                                " " + why);
  };
  if (value < 1)
    fail("is not positive");
  switch (dim.kind) {
  case Dim::Kind::fixed:
    if (dim.value != value)
      fail("contradicts the fixed size " + std::to_string(dim.value));
    break;
  case Dim::Kind::any: break;
  case Dim::Kind::range:
    if (value < dim.lo || value > dim.hi)
      fail("is outside the range " + std::to_string(dim.lo) + ".." + std::to_string(dim.hi));
    break;
  }
  return Dim::fixed_size(value);
}

} // namespace

OpSpec bind_gemm_sizes(const OpSpec &spec, const GemmSizes &sizes) {
  if (spec.kind != OpKind::gemm)
    throw std::invalid_argument("tcjit bind: bind_gemm_sizes needs a gemm spec");
  OpSpec bound = spec;
  bound.gemm.m = bind(spec.gemm.m, sizes.m, "m");
  bound.gemm.n = bind(spec.gemm.n, sizes.n, "n");
  bound.gemm.k = bind(spec.gemm.k, sizes.k, "k");
  bound.gemm.batch = bind(spec.gemm.batch, sizes.batch, "batch");
  return bound;
}

OpSpec bind_conv_batch(const OpSpec &spec, int64_t n) {
  if (spec.kind == OpKind::gemm)
    throw std::invalid_argument("tcjit bind: bind_conv_batch needs a convolution spec");
  OpSpec bound = spec;
  bound.conv.n = bind(spec.conv.n, n, "n");
  return bound;
}

} // namespace tcjit
