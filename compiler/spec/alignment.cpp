#include "compiler/spec/alignment.h"

#include "compiler/target/dtype_info.h"

#include <cstdint>

namespace tcjit {

namespace {

// Largest power of two <= limit that divides every value.
int widest_dividing(int limit, std::initializer_list<int64_t> values) {
  int v = limit;
  while (v > 1) {
    bool divides = true;
    for (int64_t x : values)
      divides = divides && x % v == 0;
    if (divides)
      return v;
    v /= 2;
  }
  return 1;
}

OperandAlignment make(std::string name, DType t) {
  OperandAlignment a;
  a.operand = std::move(name);
  a.dtype = t;
  a.max_elements = max_vector_elements(t);
  a.elements = a.max_elements;
  return a;
}

// A GEMM operand with `rows` x `cols` logical extent.
OperandAlignment gemm_operand(std::string name, const MatrixOperand &op, const Dim &rows,
                              const Dim &cols, const char *row_name, const char *col_name) {
  OperandAlignment a = make(std::move(name), op.dtype);
  const bool row_major = op.layout == MatrixLayout::row;
  const Dim &inner = row_major ? cols : rows;
  const char *inner_name = row_major ? col_name : row_name;
  // Packed sub-byte inputs lie K-contiguous with K a multiple of 16 bytes (validate_spec, also
  // at launch): a symbolic K with the dense stride allows full 16-byte vectors.
  if (!inner.is_fixed() && !op.ld && values_per_byte(op.dtype) > 1)
    return a;
  if (!inner.is_fixed() && !op.ld) {
    a.elements = 1;
    a.limited_by = std::string("the contiguous dimension ") + inner_name + " is symbolic; give ld" +
                   a.operand + "= to promise an aligned stride";
    return a;
  }
  const int64_t ld = op.ld ? *op.ld : inner.value;
  if (inner.is_fixed()) {
    a.elements = widest_dividing(a.max_elements, {inner.value, ld});
    if (a.elements < a.max_elements)
      a.limited_by = std::string(inner_name) + "=" + std::to_string(inner.value) +
                     (op.ld ? " / ld" + a.operand + "=" + std::to_string(ld) : "") +
                     " is not a multiple of " + std::to_string(a.max_elements);
    return a;
  }
  // Symbolic inner extent with an explicit ld: the stride bounds the vector, and the size bound at
  // run time must keep that alignment (the runtime checks it before a launch).
  a.elements = widest_dividing(a.max_elements, {ld});
  if (a.elements < a.max_elements)
    a.limited_by = "ld" + a.operand + "=" + std::to_string(ld) + " is not a multiple of " +
                   std::to_string(a.max_elements);
  return a;
}

bool channels_last(TensorLayout l) {
  return l == TensorLayout::nhwc || l == TensorLayout::ndhwc || l == TensorLayout::krsc ||
         l == TensorLayout::ktrsc;
}

// A convolution tensor whose implicit-GEMM gather vectorises along channels (`channels` per group
// for the contiguous run). Channels-first layouts gather one element at a time.
OperandAlignment conv_operand(std::string name, const TensorOperand &op, int64_t channels_per_group,
                              int64_t channels_total, const char *channel_name) {
  OperandAlignment a = make(std::move(name), op.dtype);
  if (!channels_last(op.layout)) {
    a.elements = 1;
    a.limited_by = std::string("layout ") + std::string(to_string(op.layout)) +
                   " keeps channels strided, so the implicit-GEMM gather is scalar";
    return a;
  }
  a.elements = widest_dividing(a.max_elements, {channels_per_group, channels_total});
  if (a.elements < a.max_elements)
    a.limited_by = std::string(channel_name) +
                   " per group = " + std::to_string(channels_per_group) + " is not a multiple of " +
                   std::to_string(a.max_elements);
  return a;
}

} // namespace

int max_vector_elements(DType t) {
  const int bits = dtype_bits(t);
  return bits > 0 ? 128 / bits : 1;
}

std::vector<OperandAlignment> analyze_alignment(const OpSpec &s) {
  if (s.kind == OpKind::gemm) {
    const GemmSpec &g = s.gemm;
    return {gemm_operand("a", g.a, g.m, g.k, "m", "k"), gemm_operand("b", g.b, g.k, g.n, "k", "n"),
            gemm_operand("c", g.c, g.m, g.n, "m", "n")};
  }
  const ConvSpec &c = s.conv;
  const int64_t groups = c.groups > 0 ? c.groups : 1;
  const int64_t cg = c.c / groups, kg = c.k / groups;
  return {conv_operand("x", c.x, cg, c.c, "c"), conv_operand("filter", c.filter, cg, c.c, "c"),
          conv_operand("y", c.y, kg, c.k, "k")};
}

std::string alignment_signature(const std::vector<OperandAlignment> &alignments) {
  std::string out;
  for (const OperandAlignment &a : alignments) {
    if (!out.empty())
      out += ',';
    out += a.operand + std::to_string(a.elements);
  }
  return out;
}

} // namespace tcjit
