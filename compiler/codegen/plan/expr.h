// The expression form in which a formula is written once for both backends.
//
// A formula (the shared-memory swizzle, an activation, a convolution gather's address arithmetic:
// formulas.h) is a C++ function that builds an expression from named inputs and the plan's
// constants. Three consumers read the same expression:
// - the LLVM backend emits it through IRBuilder (llvm/expr_lowering.h),
// - the CUDA C++ backend prints it as C++ (cuda/expr_source.h),
// - the host evaluates it (evaluate() below: the plan's swizzle, the tests).
// What truly differs between the backends (an NVVM intrinsic or an inline-PTX helper for
// ex2.approx, libdevice's __nv_exp or CUDA's exp) lives in those consumers, never in a formula.
//
// Nodes are plain data in an ExprGraph, stored in the order they were made, so every node's
// operands come before it. The LLVM backend emits the nodes in that order: a formula written in
// the shape of IRBuilder calls (the same nesting, the same operand order) gives the same IR, and
// hence the same PTX. An operation on constants folds to a constant, as IRBuilder's does; nothing
// else is simplified (IRBuilder does not either), so a formula says exactly what is computed.
//
// Types are LLVM's: integers are bit patterns (i32, i64; b1 for conditions) whose arithmetic wraps,
// with the signedness in the operation (udiv, urem, lshr, ult, slt); floats are f32 or f64, every
// f32 operation rounded to f32.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tcjit::codegen {

enum class ExprType { b1, i32, i64, f32, f64 };

// Library functions of one float argument: libdevice's __nv_<name>[f] in the LLVM backend,
// CUDA's <name>[f] in the source backend, <cmath> on the host.
enum class MathFunction { exp, expm1, tanh, erfc, log1p };

enum class ExprOp {
  constant,
  input,
  // both operands of one type; integers wrap, floats round to the type
  add,
  sub,
  mul,
  div, // integers: unsigned; floats: IEEE (f64 only in the formulas: f32 uses div_approx)
  urem,
  shl,
  lshr,
  bit_and, // b1 too: a logical and of conditions
  bit_or,
  bit_xor,
  zext, // i32 -> i64
  // comparisons -> b1
  ult,
  slt,
  eq,
  ogt, // floats, ordered: false when either is NaN
  olt,
  ugt,    // floats, unordered: true when either is NaN
  select, // args[0] ? args[1] : args[2]
  fneg,
  fabs,
  // f32 hardware approximations (PTX div.approx.f32, ex2.approx.f32, lg2.approx.f32)
  div_approx,
  ex2_approx,
  lg2_approx,
  math, // `function`(args[0])
  // i32: PTX prmt.b32 (default mode): byte i of the result is byte (selector >> 4i) & 7 of the
  // 8 bytes {args[1], args[0]} (args[0] bytes 0-3); selector nibbles without bit 3
  byte_perm,
};

struct ExprNode {
  ExprOp op = ExprOp::constant;
  ExprType type = ExprType::i32;
  uint64_t bits = 0; // an integer constant, as a bit pattern of its type
  double value = 0;  // a float constant (f32: exactly a float)
  std::string name;  // an input
  MathFunction function = MathFunction::exp;
  std::array<int, 3> args{-1, -1, -1}; // operand node ids, all before this node
};

struct ExprGraph {
  std::vector<ExprNode> nodes;
};

// A node of a graph: what the formula functions take and return.
struct Expr {
  ExprGraph *graph = nullptr;
  int id = -1;
  const ExprNode &node() const { return graph->nodes[static_cast<size_t>(id)]; }
  ExprType type() const { return node().type; }
};

// A C++ number in a formula (`row * 4`, `x * 0.5`): a constant of the other operand's type.
struct Literal {
  bool integral;
  int64_t integer; // when integral
  double value;    // when not
  Literal(int v) : integral(true), integer(v), value(0) {}
  Literal(int64_t v) : integral(true), integer(v), value(0) {}
  Literal(double v) : integral(false), integer(0), value(v) {}
};

Expr input(ExprGraph &, ExprType, const std::string &name);
// A constant: integers from an integral literal (wrapped to the type), floats from any (f32:
// rounded to float).
Expr constant(ExprGraph &, ExprType, Literal);
Expr constant_like(Expr like, Literal); // of like's type
bool is_constant(Expr);

Expr operator+(Expr, Expr);
Expr operator-(Expr, Expr);
Expr operator*(Expr, Expr);
Expr operator/(Expr, Expr); // unsigned for integers
Expr operator%(Expr, Expr); // unsigned, integers only
Expr operator<<(Expr, Expr);
Expr operator>>(Expr, Expr); // logical
Expr operator&(Expr, Expr);
Expr operator|(Expr, Expr);
Expr operator^(Expr, Expr);
Expr operator-(Expr); // floats
#define TCJIT_EXPR_LITERAL_OPERATOR(op)                                                            \
  inline Expr operator op(Expr a, Literal b) {                                                     \
    return a op constant_like(a, b);                                                               \
  }                                                                                                \
  inline Expr operator op(Literal a, Expr b) {                                                     \
    return constant_like(b, a) op b;                                                               \
  }
TCJIT_EXPR_LITERAL_OPERATOR(+)
TCJIT_EXPR_LITERAL_OPERATOR(-)
TCJIT_EXPR_LITERAL_OPERATOR(*)
TCJIT_EXPR_LITERAL_OPERATOR(/)
TCJIT_EXPR_LITERAL_OPERATOR(%)
TCJIT_EXPR_LITERAL_OPERATOR(<<)
TCJIT_EXPR_LITERAL_OPERATOR(>>)
TCJIT_EXPR_LITERAL_OPERATOR(&)
TCJIT_EXPR_LITERAL_OPERATOR(|)
TCJIT_EXPR_LITERAL_OPERATOR(^)
#undef TCJIT_EXPR_LITERAL_OPERATOR

Expr zext64(Expr);
Expr ult(Expr, Expr);
Expr slt(Expr, Expr);
Expr eq(Expr, Expr);
Expr ogt(Expr, Expr);
Expr olt(Expr, Expr);
Expr ugt(Expr, Expr);
Expr ult(Expr, Literal);
Expr slt(Expr, Literal);
Expr eq(Expr, Literal);
Expr ogt(Expr, Literal);
Expr olt(Expr, Literal);
Expr ugt(Expr, Literal);
Expr select(Expr condition, Expr if_true, Expr if_false);
Expr select(Expr condition, Expr if_true, Literal if_false);
Expr fabs(Expr);
Expr div_approx(Expr, Expr);
Expr div_approx(Literal, Expr);
Expr ex2_approx(Expr);
Expr lg2_approx(Expr);
Expr math(MathFunction, Expr);
Expr byte_perm(Expr a, Expr b, Expr selector); // i32 (ExprOp::byte_perm)
Expr byte_perm(Expr a, Expr b, Literal selector);

const char *to_string(MathFunction);
bool is_integer(ExprType);
bool is_float(ExprType);

// A value on the host: integers as their bit pattern (i32: zero-extended), floats as double (f32:
// exactly a float).
struct ExprValue {
  uint64_t bits = 0;
  double value = 0;
};
using ExprInputs = std::map<std::string, ExprValue>;

// The value of `e` with the inputs bound by name (std::invalid_argument for an unbound input). The
// f32 approximations are evaluated as exactly rounded f32 operations (the hardware's differ by a
// few ulps).
ExprValue evaluate(Expr e, const ExprInputs &inputs = {});
// evaluate() of an integer expression, as a signed value of its type.
int64_t evaluate_integer(Expr e, const ExprInputs &inputs = {});
double evaluate_float(Expr e, const ExprInputs &inputs = {});
ExprValue integer_value(int64_t v);
ExprValue float_value(double v);

} // namespace tcjit::codegen
