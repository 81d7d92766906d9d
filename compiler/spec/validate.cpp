#include "compiler/spec/validate.h"

#include "compiler/spec/shape.h"
#include "compiler/target/dtype_info.h"
#include "compiler/target/mma_table.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <string_view>
#include <utility>

namespace tcjit {

namespace {

using Errors = std::vector<SpecError>;

void add(Errors &errors, std::string_view key, std::string message) {
  errors.push_back(SpecError{std::string(key), std::move(message)});
}

std::string str(int64_t v) {
  return std::to_string(v);
}

std::string str(std::string_view s) {
  return std::string(s);
}

std::string str(double v) {
  if (v == 0.0)
    return "0";
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, v);
  return std::string(buffer, result.ptr);
}

std::string dim_text(const Dim &d) {
  switch (d.kind) {
  case Dim::Kind::fixed: return str(d.value);
  case Dim::Kind::any: return "?";
  case Dim::Kind::range: return str(d.lo) + ".." + str(d.hi);
  }
  return "?";
}

// The DSL spelling of a per-dimension list: one number when the used entries are equal.
std::string per_dim_text(const std::array<int64_t, 3> &values, OpKind kind) {
  const size_t first = kind == OpKind::conv3d ? 0 : 1;
  bool all_equal = true;
  for (size_t i = first; i < 3; ++i)
    all_equal = all_equal && values[i] == values[first];
  if (all_equal)
    return str(values[first]);
  std::string text;
  for (size_t i = first; i < 3; ++i)
    text += (i == first ? "" : ",") + str(values[i]);
  return text;
}

const std::string range_rule = "1.." + str(max_size);

// m, n, k, batch (gemm) and n (conv): a fixed size, `?` or a range lo..hi.
bool check_dim(Errors &errors, std::string_view key, const Dim &d) {
  switch (d.kind) {
  case Dim::Kind::fixed:
    if (d.value >= 1 && d.value <= max_size)
      return true;
    add(errors, key, str(key) + "=" + dim_text(d) + " is out of range: sizes are " + range_rule);
    return false;
  case Dim::Kind::any: return true;
  case Dim::Kind::range:
    if (d.lo >= 1 && d.lo <= d.hi && d.hi <= max_size)
      return true;
    add(errors, key,
        str(key) + "=" + dim_text(d) +
            " is not a valid range: a range lo..hi needs 1 <= lo <= hi <= " + str(max_size));
    return false;
  }
  return false;
}

bool check_size(Errors &errors, std::string_view key, int64_t v) {
  if (v >= 1 && v <= max_size)
    return true;
  add(errors, key, str(key) + "=" + str(v) + " is out of range: sizes are " + range_rule);
  return false;
}

// The largest value a dimension takes, for overflow checks: the value, the range's upper end, or
// 1 for `?` (checked at run time).
int64_t upper_bound(const Dim &d) {
  switch (d.kind) {
  case Dim::Kind::fixed: return d.value;
  case Dim::Kind::any: return 1;
  case Dim::Kind::range: return d.hi;
  }
  return 1;
}

// True when the product of `factors` times the dtype's bits fits in int64.
bool size_fits(std::initializer_list<int64_t> factors, DType dtype) {
  int64_t product = dtype_bits(dtype);
  for (const int64_t f : factors)
    if (__builtin_mul_overflow(product, f, &product))
      return false;
  return true;
}

void check_operand_size(Errors &errors, std::string_view key,
                        std::initializer_list<int64_t> factors, DType dtype) {
  if (size_fits(factors, dtype))
    return;
  std::string product;
  for (const int64_t f : factors)
    product += (product.empty() ? "" : " x ") + str(f);
  add(errors, key,
      str(key) + " is too large: " + product + " elements of " + str(int64_t{dtype_bits(dtype)}) +
          " bits do not fit 64-bit size arithmetic; make the problem smaller");
}

// "f32 or f16": the dtypes of a list, for messages ("nothing" for none).
std::string or_list(std::span<const DType> dtypes) {
  std::string text;
  for (size_t i = 0; i < dtypes.size(); ++i)
    text += (i == 0 ? "" : i + 1 == dtypes.size() ? " or " : ", ") + str(to_string(dtypes[i]));
  return text.empty() ? "nothing" : text;
}

std::string allowed_acc_text(DType input) {
  return or_list(dtype_info(input).accumulators);
}

std::string allowed_output_text(DType input) {
  return or_list(dtype_info(input).outputs);
}

// "f16, bf16, tf32, f32, f64, s8 or u8": the dtypes that may be multiplied (with the packed s4,
// u4 and b1 for a GEMM).
std::string multiplicand_list(bool packed) {
  std::vector<DType> dtypes;
  for (const DTypeInfo &d : dtype_infos())
    if (is_multiplicand_type(d.dtype) && (packed || values_per_byte(d.dtype) == 1))
      dtypes.push_back(d.dtype);
  return or_list(dtypes);
}

// Reports a reserved dtype; true when the dtype is usable.
bool check_not_reserved(Errors &errors, std::string_view key, DType dtype) {
  if (!is_reserved_type(dtype))
    return true;
  add(errors, key, "dtype '" + str(to_string(dtype)) + "' is not supported yet");
  return false;
}

bool is_fp8(DType t) {
  return t == DType::e4m3 || t == DType::e5m2;
}

struct DTypeRoles {
  std::string_view op;        // "" for gemm, else "fprop" ... for the messages
  std::string_view first_key; // the first multiplied input
  DType first;
  std::string_view second_key; // the other multiplied input
  DType second;
  std::string_view output_key; // the computed tensor
  DType output;
};

// Mixed multiplied inputs (a != b): a gemm may pair two dtypes when the mma table
// (compiler/target/mma_table.h) has a form that multiplies exactly that pair, generated or not
// (code generation reports a form it does not emit); a convolution never mixes.
bool is_mixed_pair_allowed(const DTypeRoles &roles) {
  if (!roles.op.empty())
    return false;
  for (const codegen::MmaForm &f : codegen::mma_forms())
    if (f.a != f.b && f.a == roles.first && f.b == roles.second)
      return true;
  return false;
}

// "a=s8 b=u8, a=u8 b=s8": the mixed pairs of the mma table, for messages ("" for a convolution).
std::string mixed_pair_list(const DTypeRoles &roles) {
  if (!roles.op.empty())
    return "";
  std::vector<std::string> pairs;
  for (const codegen::MmaForm &f : codegen::mma_forms()) {
    const std::string pair = str(roles.first_key) + "=" + str(to_string(f.a)) + " " +
                             str(roles.second_key) + "=" + str(to_string(f.b));
    if (f.a != f.b && std::find(pairs.begin(), pairs.end(), pair) == pairs.end())
      pairs.push_back(pair);
  }
  std::string out;
  for (const std::string &p : pairs)
    out += (out.empty() ? "" : ", ") + p;
  return out;
}

// The dtype rules shared by gemm and convolutions.
void check_dtypes(Errors &errors, const DTypeRoles &roles, DType acc, MathMode math) {
  const bool first_usable = check_not_reserved(errors, roles.first_key, roles.first);
  const bool second_usable = check_not_reserved(errors, roles.second_key, roles.second);
  const bool output_usable = check_not_reserved(errors, roles.output_key, roles.output);
  const bool acc_usable = check_not_reserved(errors, "acc", acc);
  if (!first_usable)
    return;
  const std::string input = str(to_string(roles.first));
  const std::string multiplies = roles.op.empty() ? std::string()
                                                  : " (" + str(roles.op) + " multiplies " +
                                                        str(roles.first_key) + " and " +
                                                        str(roles.second_key) + ")";
  if (!is_multiplicand_type(roles.first)) {
    add(errors, roles.first_key,
        str(roles.first_key) + "=" + input + " cannot be a multiplied input" + multiplies +
            ": use " + multiplicand_list(roles.op.empty()));
    return;
  }
  if (!roles.op.empty() && is_fp8(roles.first)) {
    add(errors, roles.first_key,
        str(roles.first_key) + "=" + input + ": " + str(roles.op) +
            " has no fp8 kernel: tcjit multiplies e4m3/e5m2 in GEMMs only (use a gemm, or f16 "
            "or bf16 tensors for the convolution)");
    return;
  }
  // Mixed pairs (s8 x u8, e4m3 x e5m2, ...) are those of the mma table (gemm only).
  if (second_usable && roles.second != roles.first && !is_mixed_pair_allowed(roles)) {
    const std::string where = roles.op.empty() ? std::string() : " in " + str(roles.op) + ",";
    const std::string pairs = mixed_pair_list(roles);
    add(errors, roles.second_key,
        str(roles.second_key) + "=" + str(to_string(roles.second)) + " does not match " +
            str(roles.first_key) + "=" + input + ":" + where + " the multiplied inputs " +
            str(roles.first_key) + " and " + str(roles.second_key) + " must have the same dtype" +
            (pairs.empty() ? std::string() : ", or be one of the mixed pairs " + pairs) +
            (roles.op.empty() ? std::string() : " (mixed dtypes are for gemm only)"));
  }
  if (acc_usable && !is_allowed_acc(roles.first, acc))
    add(errors, "acc",
        "acc=" + str(to_string(acc)) + " is not allowed for " + input + " inputs: " + input +
            " accumulates in " + allowed_acc_text(roles.first) +
            " (use acc=" + str(to_string(default_acc_dtype(roles.first))) + ")");
  if (output_usable && !is_allowed_output(roles.first, roles.output)) {
    const std::string computes =
        roles.op.empty() ? std::string()
                         : " (" + str(roles.op) + " computes " + str(roles.output_key) + ")";
    add(errors, roles.output_key,
        str(roles.output_key) + "=" + str(to_string(roles.output)) + " is not a valid output for " +
            input + " inputs" + computes + ": " + input + " inputs produce " +
            allowed_output_text(roles.first) + " (use " + str(roles.output_key) + "=" +
            str(to_string(default_output_dtype(roles.first))) + ")");
  }
  switch (roles.first) {
  case DType::f32: return;
  case DType::tf32:
    if (math == MathMode::f32)
      add(errors, "math",
          "math=f32 contradicts tf32 inputs: tf32 storage is always multiplied as tf32 (use "
          "math=tf32 or math=auto, or store the inputs as f32)");
    return;
  case DType::f16:
  case DType::bf16:
  case DType::f64:
  case DType::s8:
  case DType::u8:
  case DType::s32:
  case DType::s4:
  case DType::u4:
  case DType::e4m3:
  case DType::e5m2:
  case DType::b1:
    if (math != MathMode::automatic)
      add(errors, "math",
          "math=" + str(to_string(math)) + " does not apply to " + input +
              " inputs: math= selects how f32 inputs are multiplied (tf32 or full f32); remove "
              "it");
    return;
  }
}

// sparse=2:4 on a GEMM: the types tcjit compiles with mma.sp, A row-major (the kept values of
// every group of 4 along K lie together, compiler/reference/sparse_2_4.h), K a multiple of the
// sparse mma's K, lda in compressed elements. s4/u4 are sparse by pairs of values (the PTX ISA's
// 4:8 pair-wise rule; B col-major is check_packed_operands').
void check_sparse_gemm(Errors &errors, const GemmSpec &g) {
  const DType a = g.a.dtype;
  const bool half = a == DType::f16 || a == DType::bf16, byte = a == DType::s8 || a == DType::u8;
  const bool tf32 = a == DType::f32 || a == DType::tf32; // 1:2 pairs (math=f32 has no mma.sp)
  const bool nibble = a == DType::s4 || a == DType::u4;  // 4:8 by pairs (2 of every 4 pairs)
  if (!half && !byte && !tf32 && !nibble) {
    add(errors, "sparse",
        "sparse=2:4 is compiled for a=f16 and a=bf16 (mma.sp m16n8k32, acc=f32), a=s8 and "
        "a=u8 (mma.sp m16n8k64, acc=s32), a=s4 and a=u4 (mma.sp m16n8k128, acc=s32, 2 kept pairs "
        "of every 4 pairs of values) and a=f32 with math=tf32 or a=tf32 (mma.sp m16n8k16, "
        "one kept value of every pair); a=" +
            str(to_string(a)) +
            " is not supported with sparse=2:4 (use one of those, or remove sparse=2:4)");
    return;
  }
  // the sparse mma's K (compiler/target/mma_table.cpp)
  const int64_t sparse_mma_k = tf32 ? 16 : half ? 32 : byte ? 64 : 128;
  const std::string mma = "mma.sp m16n8k" + str(sparse_mma_k);
  if (g.a.layout != MatrixLayout::row)
    add(errors, "sparse",
        "sparse=2:4 needs A row-major (K contiguous): A is passed compressed, the 2 kept values of "
        "every 4 along K (s4/u4: pairs of values) side by side; write a=" +
            str(to_string(a)) + ":row");
  if (!g.k.is_fixed())
    add(errors, "sparse",
        "sparse=2:4 needs a fixed k (the compressed layout of A depends on it): give k=<size>, a "
        "multiple of " +
            str(sparse_mma_k));
  else if (g.k.value % sparse_mma_k != 0)
    add(errors, "sparse",
        "sparse=2:4 needs k to be a multiple of " + str(sparse_mma_k) + " (the K of " + mma +
            "); k=" + str(g.k.value) + ": pad K with zero columns of A and zero rows of B");
  if (g.a.ld && g.k.is_fixed() && *g.a.ld < g.k.value / 2)
    add(errors, "lda",
        "lda=" + str(*g.a.ld) +
            " is too small: with sparse=2:4 A is passed compressed, k/2=" + str(g.k.value / 2) +
            " values per row, so lda (in compressed elements) must be at "
            "least " +
            str(g.k.value / 2));
}

// sparse= and bop=: where they apply.
void check_sparsity_and_bop(Errors &errors, const OpSpec &spec, DType input) {
  if (spec.sparsity != Sparsity::dense && spec.kind != OpKind::gemm)
    add(errors, "sparse",
        "sparse=" + str(to_string(spec.sparsity)) + " applies to gemm only: tcjit has no sparse " +
            str(to_string(spec.kind)) + " (remove it)");
  else if (spec.sparsity != Sparsity::dense && spec.gemm.a.dtype == DType::f32 &&
           spec.math == MathMode::f32)
    add(errors, "sparse",
        "sparse=2:4 with a=f32 multiplies in tf32 (mma.sp m16n8k16); math=f32 has no sparse "
        "tensor-core mma: use math=tf32 (or auto), or remove sparse=2:4");
  else if (spec.sparsity != Sparsity::dense)
    check_sparse_gemm(errors, spec.gemm);
  if (spec.bop != BitOp::and_popc && input != DType::b1)
    add(errors, "bop",
        "bop=" + str(to_string(spec.bop)) + " applies to b1 inputs only (a=b1 b=b1); " +
            str(to_string(input)) + " inputs are multiplied, not combined bitwise (remove it)");
}

void check_epilogue_numbers(Errors &errors, const Epilogue &e) {
  if (!std::isfinite(e.alpha))
    add(errors, "alpha",
        "alpha=" + str(e.alpha) + " is not a finite number: alpha and beta must be finite");
  if (!std::isfinite(e.beta))
    add(errors, "beta",
        "beta=" + str(e.beta) + " is not a finite number: alpha and beta must be finite");
}

// --- gemm ---------------------------------------------------------------------------------------

struct MatrixRole {
  std::string_view key;    // "a"
  std::string_view ld_key; // "lda"
  std::string_view rows_key, cols_key;
  const Dim &rows;
  const Dim &cols;
  const MatrixOperand &operand;
};

// lda >= k for a row-major A (m x k), lda >= m for a column-major one; likewise for B and C.
bool check_leading_dimension(Errors &errors, const MatrixRole &role, bool dims_valid) {
  if (!role.operand.ld)
    return true;
  const int64_t ld = *role.operand.ld;
  if (ld < 1 || ld > max_size) {
    add(errors, role.ld_key,
        str(role.ld_key) + "=" + str(ld) + " is out of range: leading dimensions are " +
            range_rule);
    return false;
  }
  if (!dims_valid)
    return true;
  const bool row = role.operand.layout == MatrixLayout::row;
  const Dim &contiguous = row ? role.cols : role.rows;
  const std::string_view contiguous_key = row ? role.cols_key : role.rows_key;
  if (!contiguous.is_fixed() || ld >= contiguous.value)
    return true;
  add(errors, role.ld_key,
      str(role.ld_key) + "=" + str(ld) + " is too small: " + str(role.key) + " is " +
          (row ? "row" : "column") + "-major " + str(role.rows_key) + " x " + str(role.cols_key) +
          ", so " + str(role.ld_key) + " must be at least " + str(contiguous_key) + "=" +
          str(contiguous.value));
  return false;
}

void check_gemm_operand_size(Errors &errors, const MatrixRole &role, const Dim &batch) {
  const bool row = role.operand.layout == MatrixLayout::row;
  const int64_t outer = upper_bound(row ? role.rows : role.cols);
  const int64_t inner =
      role.operand.ld ? *role.operand.ld : upper_bound(row ? role.cols : role.rows);
  check_operand_size(errors, role.key, {upper_bound(batch), outer, inner}, role.operand.dtype);
  // A concrete operand's buffer is bounded (symbolic sizes are checked once bound).
  const Dim &outer_dim = row ? role.rows : role.cols;
  const Dim &inner_dim = row ? role.cols : role.rows;
  if (!batch.is_fixed() || !outer_dim.is_fixed() || (!role.operand.ld && !inner_dim.is_fixed()) ||
      !size_fits({batch.value, outer, inner}, role.operand.dtype))
    return;
  const int64_t bits = dtype_bits(role.operand.dtype) * batch.value * outer * inner;
  const int64_t bytes = bits / 8 + (bits % 8 != 0);
  if (bytes <= max_operand_bytes)
    return;
  std::string product = batch.value == 1 ? std::string() : str(batch.value) + " x ";
  product += str(outer) + " x " + str(inner);
  add(errors, role.key,
      str(role.key) + " is too large: " + product + " elements of " +
          str(int64_t{dtype_bits(role.operand.dtype)}) + " bits are " + str(bytes) +
          " bytes; an operand is limited to " + str(max_operand_bytes) +
          " bytes (1 TiB: more than any GPU's memory, and the emulator's device memory); make "
          "the problem" +
          (role.operand.ld ? " or " + str(role.ld_key) + "=" + str(*role.operand.ld) : "") +
          " smaller");
}

// Packed sub-byte inputs (s4, u4, b1): the tensor core takes them K-contiguous, K in whole
// 16-byte pieces, every row starting on a byte.
void check_packed_operands(Errors &errors, const GemmSpec &g) {
  const int per_byte = values_per_byte(g.a.dtype);
  if (per_byte == 1)
    return;
  const std::string t = str(to_string(g.a.dtype));
  if (g.a.layout != MatrixLayout::row)
    add(errors, "a",
        "a=" + t + ":col: packed " + t +
            " inputs must lie K-contiguous (the tensor core reads them row x col); store A "
            "row-major and B column-major (a=" +
            t + ":row b=" + str(to_string(g.b.dtype)) + ":col), or transpose A");
  if (g.b.layout != MatrixLayout::col)
    add(errors, "b",
        "b=" + str(to_string(g.b.dtype)) + ":row: packed " + t +
            " inputs must lie K-contiguous (the tensor core reads them row x col); store A "
            "row-major and B column-major (a=" +
            t + ":row b=" + str(to_string(g.b.dtype)) + ":col), or transpose B");
  const int64_t k_multiple = 16 * per_byte; // values in 16 bytes
  if (g.k.is_fixed() && g.k.value % k_multiple != 0)
    add(errors, "k",
        "k=" + str(g.k.value) + " is not a multiple of " + str(k_multiple) + ": " + t +
            " values are packed " + str(int64_t{per_byte}) + " per byte and K must fill whole " +
            "16-byte pieces; pad K with zeros to " +
            str((g.k.value + k_multiple - 1) / k_multiple * k_multiple));
  const std::array<std::pair<std::string_view, const MatrixOperand *>, 2> operands{
      {{"lda", &g.a}, {"ldb", &g.b}}};
  for (const auto &[key, op] : operands)
    if (op->ld && *op->ld % per_byte != 0)
      add(errors, key,
          str(key) + "=" + str(*op->ld) + " does not start every row on a byte: " + t +
              " values are packed " + str(int64_t{per_byte}) + " per byte, so " + str(key) +
              " must be a multiple of " + str(int64_t{per_byte}) + " (use " + str(key) + "=" +
              str((*op->ld + per_byte - 1) / per_byte * per_byte) + ")");
}

void validate_gemm(Errors &errors, const OpSpec &spec) {
  const GemmSpec &g = spec.gemm;
  bool dims_valid = check_dim(errors, "m", g.m);
  dims_valid = check_dim(errors, "n", g.n) && dims_valid;
  dims_valid = check_dim(errors, "k", g.k) && dims_valid;
  dims_valid = check_dim(errors, "batch", g.batch) && dims_valid;

  check_dtypes(errors, DTypeRoles{"", "a", g.a.dtype, "b", g.b.dtype, "c", g.c.dtype}, spec.acc,
               spec.math);
  check_sparsity_and_bop(errors, spec, g.a.dtype);
  check_packed_operands(errors, g);

  const std::array<MatrixRole, 3> roles{
      MatrixRole{"a", "lda", "m", "k", g.m, g.k, g.a},
      MatrixRole{"b", "ldb", "k", "n", g.k, g.n, g.b},
      MatrixRole{"c", "ldc", "m", "n", g.m, g.n, g.c},
  };
  bool lds_valid = true;
  for (const MatrixRole &role : roles) // a 2:4-sparse A's lda counts compressed elements
    if (role.key != "a" || spec.sparsity == Sparsity::dense)
      lds_valid = check_leading_dimension(errors, role, dims_valid) && lds_valid;
  if (dims_valid && lds_valid)
    for (const MatrixRole &role : roles)
      check_gemm_operand_size(errors, role, g.batch);

  check_epilogue_numbers(errors, spec.epilogue);
}

// --- convolutions -------------------------------------------------------------------------------

struct SpatialDim {
  size_t index; // into pad/stride/dilation
  std::string_view name, input_key, filter_key, output_key;
  int64_t input, filter;
};

bool check_per_dim(Errors &errors, std::string_view key, const std::array<int64_t, 3> &values,
                   OpKind kind, int64_t lowest, std::string_view what) {
  const size_t first = kind == OpKind::conv3d ? 0 : 1;
  for (size_t i = first; i < 3; ++i) {
    if (values[i] >= lowest && values[i] <= max_size)
      continue;
    add(errors, key,
        str(key) + "=" + per_dim_text(values, kind) + " is out of range: " + str(what) + " are " +
            str(lowest) + ".." + str(max_size) + " in every dimension");
    return false;
  }
  return true;
}

std::string_view activation_family(OpKind kind) {
  return kind == OpKind::conv3d ? "ndhwc or ncdhw" : "nhwc or nchw";
}

std::string_view filter_family(OpKind kind) {
  return kind == OpKind::conv3d ? "ktrsc or kctrs" : "krsc or kcrs";
}

void check_tensor_layout(Errors &errors, OpKind kind, std::string_view key, bool filter,
                         TensorLayout layout) {
  if (is_allowed_tensor_layout(kind, filter, layout))
    return;
  add(errors, key,
      "layout '" + str(to_string(layout)) + "' is not valid for " + str(key) + " of " +
          str(to_string(kind)) + " (use " +
          str(filter ? filter_family(kind) : activation_family(kind)) + ")");
}

DTypeRoles conv_dtype_roles(const ConvSpec &c) {
  switch (c.pass) {
  case ConvPass::fprop:
    return DTypeRoles{"fprop", "x", c.x.dtype, "filter", c.filter.dtype, "y", c.y.dtype};
  case ConvPass::dgrad:
    return DTypeRoles{"dgrad", "y", c.y.dtype, "filter", c.filter.dtype, "x", c.x.dtype};
  case ConvPass::wgrad:
    return DTypeRoles{"wgrad", "x", c.x.dtype, "y", c.y.dtype, "filter", c.filter.dtype};
  }
  return DTypeRoles{"fprop", "x", c.x.dtype, "filter", c.filter.dtype, "y", c.y.dtype};
}

// out = (in + 2*pad - dilation*(filter-1) - 1)/stride + 1 must be at least 1.
bool check_output_dim(Errors &errors, const ConvSpec &c, const SpatialDim &d) {
  const int64_t pad = c.pad[d.index], dilation = c.dilation[d.index];
  const int64_t dilated_filter = dilation * (d.filter - 1) + 1;
  const int64_t padded_input = d.input + 2 * pad;
  if (dilated_filter <= padded_input)
    return true;
  add(errors, d.filter_key,
      "output " + str(d.name) + " is less than 1: " + str(d.output_key) + " = (" +
          str(d.input_key) + " + 2*pad - dilation*(" + str(d.filter_key) +
          "-1) - 1)/stride + 1 with " + str(d.input_key) + "=" + str(d.input) +
          ", pad=" + str(pad) + ", dilation=" + str(dilation) + ", " + str(d.filter_key) + "=" +
          str(d.filter) + ": the dilated filter (" + str(dilated_filter) +
          ") is larger than the padded input (" + str(padded_input) + "); use a smaller " +
          str(d.filter_key) + " or dilation, more padding, or a larger " + str(d.input_key));
  return false;
}

void validate_conv(Errors &errors, const OpSpec &spec) {
  const ConvSpec &c = spec.conv;
  const bool is_3d = spec.kind == OpKind::conv3d;
  bool geometry_valid = check_dim(errors, "n", c.n);
  if (is_3d)
    geometry_valid = check_size(errors, "d", c.d) && geometry_valid;
  geometry_valid = check_size(errors, "h", c.h) && geometry_valid;
  geometry_valid = check_size(errors, "w", c.w) && geometry_valid;
  geometry_valid = check_size(errors, "c", c.c) && geometry_valid;
  geometry_valid = check_size(errors, "k", c.k) && geometry_valid;
  if (is_3d)
    geometry_valid = check_size(errors, "t", c.t) && geometry_valid;
  geometry_valid = check_size(errors, "r", c.r) && geometry_valid;
  geometry_valid = check_size(errors, "s", c.s) && geometry_valid;
  if (!is_3d && (c.d != 1 || c.t != 1 || c.pad[0] != 0 || c.stride[0] != 1 || c.dilation[0] != 1)) {
    add(errors, "",
        "conv2d has no depth dimension: d and t must be 1, and the depth entries of pad, stride "
        "and dilation 0, 1 and 1");
    geometry_valid = false;
  }
  geometry_valid = check_per_dim(errors, "pad", c.pad, spec.kind, 0, "pads") && geometry_valid;
  geometry_valid =
      check_per_dim(errors, "stride", c.stride, spec.kind, 1, "strides") && geometry_valid;
  geometry_valid =
      check_per_dim(errors, "dilation", c.dilation, spec.kind, 1, "dilations") && geometry_valid;
  if (c.groups < 1 || c.groups > max_size) {
    add(errors, "groups", "groups=" + str(c.groups) + " is out of range: groups are " + range_rule);
    geometry_valid = false;
  } else {
    if (c.c >= 1 && c.c % c.groups != 0) {
      add(errors, "groups", "groups=" + str(c.groups) + " does not divide c=" + str(c.c));
      geometry_valid = false;
    }
    if (c.k >= 1 && c.k % c.groups != 0) {
      add(errors, "groups", "groups=" + str(c.groups) + " does not divide k=" + str(c.k));
      geometry_valid = false;
    }
  }

  check_tensor_layout(errors, spec.kind, "x", false, c.x.layout);
  check_tensor_layout(errors, spec.kind, "filter", true, c.filter.layout);
  check_tensor_layout(errors, spec.kind, "y", false, c.y.layout);

  check_dtypes(errors, conv_dtype_roles(c), spec.acc, spec.math);
  check_sparsity_and_bop(errors, spec, c.x.dtype);
  if (values_per_byte(c.x.dtype) > 1)
    add(errors, "x",
        "x=" + str(to_string(c.x.dtype)) + ": tcjit has no " + str(to_string(spec.kind)) +
            " in packed " + str(to_string(c.x.dtype)) +
            " inputs (sub-byte types are GEMM-only); use s8 tensors, or express the convolution "
            "as a GEMM");

  if (c.pass == ConvPass::wgrad && spec.epilogue.bias != BiasKind::none)
    add(errors, "bias",
        "bias=" + str(to_string(spec.epilogue.bias)) +
            " does not apply to pass=wgrad: wgrad computes the filter gradient, which has no "
            "bias (use bias=none)");
  else if (spec.epilogue.bias == BiasKind::row)
    add(errors, "bias",
        "bias=row is not valid for a convolution: a convolution's bias is one value per output "
        "channel, which is bias=col");
  check_epilogue_numbers(errors, spec.epilogue);

  if (!geometry_valid)
    return;
  const std::array<SpatialDim, 3> spatial{
      SpatialDim{0, "depth", "d", "t", "o", c.d, c.t},
      SpatialDim{1, "height", "h", "r", "p", c.h, c.r},
      SpatialDim{2, "width", "w", "s", "q", c.w, c.s},
  };
  bool outputs_valid = true;
  for (const SpatialDim &d : spatial)
    if (is_3d || d.index > 0)
      outputs_valid = check_output_dim(errors, c, d) && outputs_valid;
  if (!outputs_valid)
    return;
  const ConvOutputDims out = conv_output_dims(c);
  const int64_t n = upper_bound(c.n);
  check_operand_size(errors, "x", {n, c.d, c.h, c.w, c.c}, c.x.dtype);
  check_operand_size(errors, "filter", {c.k, c.t, c.r, c.s, c.c / c.groups}, c.filter.dtype);
  check_operand_size(errors, "y", {n, out.o, out.p, out.q, c.k}, c.y.dtype);
}

} // namespace

std::vector<SpecError> validate_spec(const OpSpec &spec) {
  Errors errors;
  switch (spec.kind) {
  case OpKind::gemm: validate_gemm(errors, spec); break;
  case OpKind::conv2d:
  case OpKind::conv3d: validate_conv(errors, spec); break;
  }
  return errors;
}

DType input_dtype(const OpSpec &spec) {
  switch (spec.kind) {
  case OpKind::gemm: return spec.gemm.a.dtype;
  case OpKind::conv2d:
  case OpKind::conv3d:
    return spec.conv.pass == ConvPass::dgrad ? spec.conv.y.dtype : spec.conv.x.dtype;
  }
  return spec.gemm.a.dtype;
}

namespace {

bool contains(std::span<const DType> dtypes, DType t) {
  return std::find(dtypes.begin(), dtypes.end(), t) != dtypes.end();
}

// The default of a list, or for a type that cannot be multiplied f32 (float) or s32 (integer).
DType first_or_widest(std::span<const DType> dtypes, DType input) {
  if (!dtypes.empty())
    return dtypes.front();
  return is_float_type(input) ? DType::f32 : DType::s32;
}

} // namespace

DType default_acc_dtype(DType input) {
  return first_or_widest(dtype_info(input).accumulators, input);
}

DType default_output_dtype(DType input) {
  return first_or_widest(dtype_info(input).outputs, input);
}

bool is_allowed_output(DType input, DType output) {
  return contains(dtype_info(input).outputs, output);
}

bool is_allowed_acc(DType input, DType acc) {
  return contains(dtype_info(input).accumulators, acc);
}

bool is_multiplicand_type(DType t) {
  return !dtype_info(t).accumulators.empty();
}

bool is_allowed_tensor_layout(OpKind kind, bool filter, TensorLayout layout) {
  switch (layout) {
  case TensorLayout::nhwc:
  case TensorLayout::nchw: return kind == OpKind::conv2d && !filter;
  case TensorLayout::ndhwc:
  case TensorLayout::ncdhw: return kind == OpKind::conv3d && !filter;
  case TensorLayout::krsc:
  case TensorLayout::kcrs: return kind == OpKind::conv2d && filter;
  case TensorLayout::ktrsc:
  case TensorLayout::kctrs: return kind == OpKind::conv3d && filter;
  }
  return false;
}

} // namespace tcjit
