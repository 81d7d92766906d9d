#include "compiler/spec/printer.h"

#include "compiler/spec/validate.h"

#include <array>
#include <charconv>

namespace tcjit {

namespace {

std::string number(int64_t v) {
  return std::to_string(v);
}

// Shortest text that reads back as the same double: 1, 0.5, 1e-07. -0 prints as 0.
std::string number(double v) {
  if (v == 0.0)
    return "0";
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, v);
  return std::string(buffer, result.ptr);
}

std::string dim(const Dim &d) {
  switch (d.kind) {
  case Dim::Kind::fixed: return number(d.value);
  case Dim::Kind::any: return "?";
  case Dim::Kind::range: return number(d.lo) + ".." + number(d.hi);
  }
  return "?";
}

// One number when the used entries are equal, else one per spatial dimension (h,w or d,h,w).
std::string per_dim(const std::array<int64_t, 3> &values, OpKind kind) {
  const size_t first = kind == OpKind::conv3d ? 0 : 1;
  bool all_equal = true;
  for (size_t i = first; i < 3; ++i)
    all_equal = all_equal && values[i] == values[first];
  if (all_equal)
    return number(values[first]);
  std::string text;
  for (size_t i = first; i < 3; ++i)
    text += (i == first ? "" : ",") + number(values[i]);
  return text;
}

std::string operand(const MatrixOperand &op) {
  return std::string(to_string(op.dtype)) + ":" + std::string(to_string(op.layout));
}

std::string operand(const TensorOperand &op) {
  return std::string(to_string(op.dtype)) + ":" + std::string(to_string(op.layout));
}

void add(std::string &out, std::string_view key, const std::string &value) {
  out += " ";
  out += key;
  out += "=";
  out += value;
}

void add_tail(std::string &out, const OpSpec &spec) {
  add(out, "acc", std::string(to_string(spec.acc)));
  const DType input = input_dtype(spec);
  if (input == DType::f32 || input == DType::tf32)
    add(out, "math", std::string(to_string(spec.math)));
  // Printed only where they apply, so that the text (and the cache key) of every other spec is
  // what it was before these keys existed.
  if (spec.sparsity != Sparsity::dense)
    add(out, "sparse", std::string(to_string(spec.sparsity)));
  if (input == DType::b1)
    add(out, "bop", std::string(to_string(spec.bop)));
  add(out, "alpha", number(spec.epilogue.alpha));
  add(out, "beta", number(spec.epilogue.beta));
  add(out, "bias", std::string(to_string(spec.epilogue.bias)));
  if (spec.epilogue.act == Activation::custom)
    add(out, "act", "custom:" + spec.epilogue.custom.path);
  else
    add(out, "act", std::string(to_string(spec.epilogue.act)));
}

std::string print_gemm(const OpSpec &spec) {
  const GemmSpec &g = spec.gemm;
  std::string out = "gemm";
  add(out, "m", dim(g.m));
  add(out, "n", dim(g.n));
  add(out, "k", dim(g.k));
  add(out, "batch", dim(g.batch));
  add(out, "a", operand(g.a));
  add(out, "b", operand(g.b));
  add(out, "c", operand(g.c));
  if (g.a.ld)
    add(out, "lda", number(*g.a.ld));
  if (g.b.ld)
    add(out, "ldb", number(*g.b.ld));
  if (g.c.ld)
    add(out, "ldc", number(*g.c.ld));
  add_tail(out, spec);
  return out;
}

std::string print_conv(const OpSpec &spec) {
  const ConvSpec &c = spec.conv;
  const bool is_3d = spec.kind == OpKind::conv3d;
  std::string out(to_string(spec.kind));
  add(out, "n", dim(c.n));
  if (is_3d)
    add(out, "d", number(c.d));
  add(out, "h", number(c.h));
  add(out, "w", number(c.w));
  add(out, "c", number(c.c));
  add(out, "k", number(c.k));
  if (is_3d)
    add(out, "t", number(c.t));
  add(out, "r", number(c.r));
  add(out, "s", number(c.s));
  add(out, "pad", per_dim(c.pad, spec.kind));
  add(out, "stride", per_dim(c.stride, spec.kind));
  add(out, "dilation", per_dim(c.dilation, spec.kind));
  add(out, "groups", number(c.groups));
  add(out, "pass", std::string(to_string(c.pass)));
  add(out, "x", operand(c.x));
  add(out, "filter", operand(c.filter));
  add(out, "y", operand(c.y));
  add_tail(out, spec);
  return out;
}

} // namespace

std::string print_spec(const OpSpec &spec) {
  switch (spec.kind) {
  case OpKind::gemm: return print_gemm(spec);
  case OpKind::conv2d:
  case OpKind::conv3d: return print_conv(spec);
  }
  return print_gemm(spec);
}

std::string print_entry(const WorkloadEntry &entry) {
  std::string out;
  if (!entry.name.empty())
    out = entry.name + ": ";
  out += print_spec(entry.spec);
  if (entry.weight != 1)
    add(out, "weight", number(entry.weight));
  return out;
}

} // namespace tcjit
