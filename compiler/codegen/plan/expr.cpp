#include "compiler/codegen/plan/expr.h"

#include <cmath>
#include <stdexcept>

namespace tcjit::codegen {

namespace {

int width(ExprType t) {
  switch (t) {
  case ExprType::b1: return 1;
  case ExprType::i32: return 32;
  case ExprType::i64: return 64;
  case ExprType::f32: return 32;
  case ExprType::f64: return 64;
  }
  return 64;
}

uint64_t wrap(ExprType t, uint64_t bits) {
  const int w = width(t);
  return w == 64 ? bits : bits & ((uint64_t{1} << w) - 1);
}

int64_t as_signed(ExprType t, uint64_t bits) {
  const int w = width(t);
  if (w == 64 || t == ExprType::b1)
    return static_cast<int64_t>(bits);
  const uint64_t sign = uint64_t{1} << (w - 1);
  return static_cast<int64_t>((bits ^ sign) - sign);
}

double round_to(ExprType t, double v) {
  return t == ExprType::f32 ? static_cast<double>(static_cast<float>(v)) : v;
}

ExprValue boolean(bool b) {
  return ExprValue{b ? 1u : 0u, 0};
}

double apply_math(MathFunction f, ExprType t, double x) {
  if (t == ExprType::f32) {
    const float v = static_cast<float>(x);
    switch (f) {
    case MathFunction::exp: return std::exp(v);
    case MathFunction::expm1: return std::expm1(v);
    case MathFunction::tanh: return std::tanh(v);
    case MathFunction::erfc: return std::erfc(v);
    case MathFunction::log1p: return std::log1p(v);
    }
  }
  switch (f) {
  case MathFunction::exp: return std::exp(x);
  case MathFunction::expm1: return std::expm1(x);
  case MathFunction::tanh: return std::tanh(x);
  case MathFunction::erfc: return std::erfc(x);
  case MathFunction::log1p: return std::log1p(x);
  }
  return x;
}

// The value of node `n` from its operands' values `a`.
ExprValue apply(const ExprNode &n, const std::array<ExprValue, 3> &a, const ExprGraph &g) {
  const ExprType t = n.type;
  // the operands' type (comparisons yield b1 from another type)
  const ExprType ot = n.args[0] >= 0 ? g.nodes[static_cast<size_t>(n.args[0])].type : t;
  const bool fl = is_float(ot);
  const uint64_t x = a[0].bits, y = a[1].bits;
  const double u = a[0].value, v = a[1].value;
  switch (n.op) {
  case ExprOp::constant: return ExprValue{n.bits, n.value};
  case ExprOp::input: break;
  case ExprOp::add: return fl ? ExprValue{0, round_to(t, u + v)} : ExprValue{wrap(t, x + y), 0};
  case ExprOp::sub: return fl ? ExprValue{0, round_to(t, u - v)} : ExprValue{wrap(t, x - y), 0};
  case ExprOp::mul: return fl ? ExprValue{0, round_to(t, u * v)} : ExprValue{wrap(t, x * y), 0};
  case ExprOp::div:
    if (fl)
      return ExprValue{0, round_to(t, u / v)};
    if (y == 0)
      throw std::invalid_argument("expression: integer division by zero");
    return ExprValue{x / y, 0};
  case ExprOp::urem:
    if (y == 0)
      throw std::invalid_argument("expression: integer remainder by zero");
    return ExprValue{x % y, 0};
  case ExprOp::shl: return ExprValue{y >= uint64_t(width(t)) ? 0 : wrap(t, x << y), 0};
  case ExprOp::lshr: return ExprValue{y >= uint64_t(width(t)) ? 0 : x >> y, 0};
  case ExprOp::bit_and: return ExprValue{x & y, 0};
  case ExprOp::bit_or: return ExprValue{x | y, 0};
  case ExprOp::bit_xor: return ExprValue{x ^ y, 0};
  case ExprOp::zext: return ExprValue{x, 0};
  case ExprOp::ult: return boolean(x < y);
  case ExprOp::slt: return boolean(as_signed(ot, x) < as_signed(ot, y));
  case ExprOp::eq: return fl ? boolean(u == v) : boolean(x == y);
  case ExprOp::ogt: return boolean(u > v);
  case ExprOp::olt: return boolean(u < v);
  case ExprOp::ugt: return boolean(!(u <= v));
  case ExprOp::select: return a[0].bits != 0 ? a[1] : a[2];
  case ExprOp::fneg: return ExprValue{0, -u};
  case ExprOp::fabs: return ExprValue{0, std::fabs(u)};
  case ExprOp::div_approx:
    return ExprValue{0, static_cast<double>(static_cast<float>(u) / static_cast<float>(v))};
  case ExprOp::ex2_approx: return ExprValue{0, std::exp2(static_cast<float>(u))};
  case ExprOp::lg2_approx: return ExprValue{0, std::log2(static_cast<float>(u))};
  case ExprOp::math: return ExprValue{0, round_to(t, apply_math(n.function, t, u))};
  case ExprOp::byte_perm: {
    const uint64_t bytes = (x & 0xffffffffu) | ((y & 0xffffffffu) << 32);
    uint64_t r = 0;
    for (int i = 0; i < 4; ++i)
      r |= ((bytes >> (8 * ((a[2].bits >> (4 * i)) & 7))) & 0xff) << (8 * i);
    return ExprValue{r, 0};
  }
  }
  throw std::logic_error("expression: apply() of an input");
}

// True for the operations that IRBuilder folds when every operand is a constant (instructions;
// not calls: the approximations, fabs and library functions stay calls).
bool folds(ExprOp op) {
  switch (op) {
  case ExprOp::constant:
  case ExprOp::input:
  case ExprOp::fabs:
  case ExprOp::div_approx:
  case ExprOp::ex2_approx:
  case ExprOp::lg2_approx:
  case ExprOp::math:
  case ExprOp::byte_perm: return false;
  case ExprOp::add:
  case ExprOp::sub:
  case ExprOp::mul:
  case ExprOp::div:
  case ExprOp::urem:
  case ExprOp::shl:
  case ExprOp::lshr:
  case ExprOp::bit_and:
  case ExprOp::bit_or:
  case ExprOp::bit_xor:
  case ExprOp::zext:
  case ExprOp::ult:
  case ExprOp::slt:
  case ExprOp::eq:
  case ExprOp::ogt:
  case ExprOp::olt:
  case ExprOp::ugt:
  case ExprOp::select:
  case ExprOp::fneg: return true;
  }
  return false;
}

ExprGraph &graph_of(Expr a, Expr b) {
  if (a.graph == nullptr || a.graph != b.graph)
    throw std::logic_error("expression: operands of different graphs");
  return *a.graph;
}

Expr make(ExprGraph &g, ExprOp op, ExprType type, std::array<int, 3> args,
          MathFunction function = MathFunction::exp) {
  ExprNode n;
  n.op = op;
  n.type = type;
  n.args = args;
  n.function = function;
  bool all_constant = folds(op);
  std::array<ExprValue, 3> values{};
  for (size_t i = 0; i < 3 && all_constant; ++i) {
    if (args[i] < 0)
      break;
    const ExprNode &arg = g.nodes[static_cast<size_t>(args[i])];
    all_constant = arg.op == ExprOp::constant;
    values[i] = ExprValue{arg.bits, arg.value};
  }
  if (all_constant) {
    const ExprValue v = apply(n, values, g);
    n = ExprNode{};
    n.type = type;
    n.bits = v.bits;
    n.value = v.value;
  }
  g.nodes.push_back(n);
  return Expr{&g, static_cast<int>(g.nodes.size() - 1)};
}

void require(bool ok, const char *what) {
  if (!ok)
    throw std::logic_error(std::string("expression: ") + what);
}

// A binary operation whose operands and result share one type.
Expr same_type(ExprOp op, Expr a, Expr b) {
  ExprGraph &g = graph_of(a, b);
  require(a.type() == b.type(), "operands of different types");
  return make(g, op, a.type(), {a.id, b.id, -1});
}

Expr integer_op(ExprOp op, Expr a, Expr b) {
  require(!is_float(a.type()), "an integer operation on floats");
  return same_type(op, a, b);
}

Expr compare(ExprOp op, Expr a, Expr b, bool on_floats) {
  ExprGraph &g = graph_of(a, b);
  require(a.type() == b.type(), "comparison of different types");
  require(is_float(a.type()) == on_floats, "a comparison of the wrong kind of operands");
  return make(g, op, ExprType::b1, {a.id, b.id, -1});
}

Expr unary_float(ExprOp op, Expr a) {
  require(is_float(a.type()), "a float operation on integers");
  return make(*a.graph, op, a.type(), {a.id, -1, -1});
}

} // namespace

bool is_integer(ExprType t) {
  return !is_float(t);
}
bool is_float(ExprType t) {
  return t == ExprType::f32 || t == ExprType::f64;
}

const char *to_string(MathFunction f) {
  switch (f) {
  case MathFunction::exp: return "exp";
  case MathFunction::expm1: return "expm1";
  case MathFunction::tanh: return "tanh";
  case MathFunction::erfc: return "erfc";
  case MathFunction::log1p: return "log1p";
  }
  return "?";
}

Expr input(ExprGraph &g, ExprType type, const std::string &name) {
  ExprNode n;
  n.op = ExprOp::input;
  n.type = type;
  n.name = name;
  g.nodes.push_back(n);
  return Expr{&g, static_cast<int>(g.nodes.size() - 1)};
}

Expr constant(ExprGraph &g, ExprType type, Literal v) {
  ExprNode n;
  n.type = type;
  if (is_float(type)) {
    n.value = round_to(type, v.integral ? static_cast<double>(v.integer) : v.value);
  } else {
    require(v.integral, "a fractional integer constant");
    n.bits = wrap(type, static_cast<uint64_t>(v.integer));
  }
  g.nodes.push_back(n);
  return Expr{&g, static_cast<int>(g.nodes.size() - 1)};
}

Expr constant_like(Expr like, Literal v) {
  return constant(*like.graph, like.type(), v);
}

bool is_constant(Expr e) {
  return e.node().op == ExprOp::constant;
}

Expr operator+(Expr a, Expr b) {
  return same_type(ExprOp::add, a, b);
}
Expr operator-(Expr a, Expr b) {
  return same_type(ExprOp::sub, a, b);
}
Expr operator*(Expr a, Expr b) {
  return same_type(ExprOp::mul, a, b);
}
Expr operator/(Expr a, Expr b) {
  return same_type(ExprOp::div, a, b);
}
Expr operator%(Expr a, Expr b) {
  return integer_op(ExprOp::urem, a, b);
}
Expr operator<<(Expr a, Expr b) {
  return integer_op(ExprOp::shl, a, b);
}
Expr operator>>(Expr a, Expr b) {
  return integer_op(ExprOp::lshr, a, b);
}
Expr operator&(Expr a, Expr b) {
  return integer_op(ExprOp::bit_and, a, b);
}
Expr operator|(Expr a, Expr b) {
  return integer_op(ExprOp::bit_or, a, b);
}
Expr operator^(Expr a, Expr b) {
  return integer_op(ExprOp::bit_xor, a, b);
}
Expr operator-(Expr a) {
  return unary_float(ExprOp::fneg, a);
}

Expr zext64(Expr a) {
  require(a.type() == ExprType::i32, "zext64 of a non-i32");
  return make(*a.graph, ExprOp::zext, ExprType::i64, {a.id, -1, -1});
}

Expr ult(Expr a, Expr b) {
  return compare(ExprOp::ult, a, b, false);
}
Expr slt(Expr a, Expr b) {
  return compare(ExprOp::slt, a, b, false);
}
Expr eq(Expr a, Expr b) {
  return compare(ExprOp::eq, a, b, is_float(a.type()));
}
Expr ogt(Expr a, Expr b) {
  return compare(ExprOp::ogt, a, b, true);
}
Expr olt(Expr a, Expr b) {
  return compare(ExprOp::olt, a, b, true);
}
Expr ugt(Expr a, Expr b) {
  return compare(ExprOp::ugt, a, b, true);
}
Expr ult(Expr a, Literal b) {
  return ult(a, constant_like(a, b));
}
Expr slt(Expr a, Literal b) {
  return slt(a, constant_like(a, b));
}
Expr eq(Expr a, Literal b) {
  return eq(a, constant_like(a, b));
}
Expr ogt(Expr a, Literal b) {
  return ogt(a, constant_like(a, b));
}
Expr olt(Expr a, Literal b) {
  return olt(a, constant_like(a, b));
}
Expr ugt(Expr a, Literal b) {
  return ugt(a, constant_like(a, b));
}

Expr select(Expr c, Expr t, Expr f) {
  require(c.type() == ExprType::b1, "select on a non-condition");
  require(t.type() == f.type(), "select of different types");
  graph_of(c, t);
  graph_of(t, f);
  return make(*c.graph, ExprOp::select, t.type(), {c.id, t.id, f.id});
}

Expr select(Expr c, Expr t, Literal f) {
  return select(c, t, constant_like(t, f));
}

Expr byte_perm(Expr a, Expr b, Expr selector) {
  require(a.type() == ExprType::i32 && b.type() == ExprType::i32 &&
              selector.type() == ExprType::i32,
          "byte_perm of a non-i32");
  graph_of(a, b);
  graph_of(b, selector);
  return make(*a.graph, ExprOp::byte_perm, ExprType::i32, {a.id, b.id, selector.id});
}

Expr byte_perm(Expr a, Expr b, Literal selector) {
  return byte_perm(a, b, constant_like(a, selector));
}

Expr fabs(Expr a) {
  return unary_float(ExprOp::fabs, a);
}

Expr div_approx(Expr a, Expr b) {
  require(a.type() == ExprType::f32 && b.type() == ExprType::f32, "div_approx of a non-f32");
  return make(graph_of(a, b), ExprOp::div_approx, ExprType::f32, {a.id, b.id, -1});
}

Expr div_approx(Literal a, Expr b) {
  return div_approx(constant_like(b, a), b);
}

Expr ex2_approx(Expr a) {
  require(a.type() == ExprType::f32, "ex2_approx of a non-f32");
  return unary_float(ExprOp::ex2_approx, a);
}

Expr lg2_approx(Expr a) {
  require(a.type() == ExprType::f32, "lg2_approx of a non-f32");
  return unary_float(ExprOp::lg2_approx, a);
}

Expr math(MathFunction f, Expr a) {
  require(is_float(a.type()), "a library function of an integer");
  return make(*a.graph, ExprOp::math, a.type(), {a.id, -1, -1}, f);
}

ExprValue evaluate(Expr e, const ExprInputs &inputs) {
  const ExprGraph &g = *e.graph;
  // the nodes `e` reaches, then their values in the graph's order (operands first)
  std::vector<char> reached(static_cast<size_t>(e.id) + 1, 0);
  reached[static_cast<size_t>(e.id)] = 1;
  for (int i = e.id; i >= 0; --i)
    if (reached[static_cast<size_t>(i)])
      for (int arg : g.nodes[static_cast<size_t>(i)].args)
        if (arg >= 0)
          reached[static_cast<size_t>(arg)] = 1;
  std::vector<ExprValue> values(reached.size());
  for (size_t i = 0; i < reached.size(); ++i) {
    if (!reached[i])
      continue;
    const ExprNode &n = g.nodes[i];
    if (n.op == ExprOp::input) {
      const auto it = inputs.find(n.name);
      if (it == inputs.end())
        throw std::invalid_argument("expression: input '" + n.name + "' is not bound");
      values[i] = is_float(n.type) ? ExprValue{0, round_to(n.type, it->second.value)}
                                   : ExprValue{wrap(n.type, it->second.bits), 0};
      continue;
    }
    std::array<ExprValue, 3> a{};
    for (size_t k = 0; k < 3; ++k)
      if (n.args[k] >= 0)
        a[k] = values[static_cast<size_t>(n.args[k])];
    values[i] = apply(n, a, g);
  }
  return values.back();
}

int64_t evaluate_integer(Expr e, const ExprInputs &inputs) {
  require(is_integer(e.type()), "evaluate_integer of a float");
  return as_signed(e.type(), evaluate(e, inputs).bits);
}

double evaluate_float(Expr e, const ExprInputs &inputs) {
  require(is_float(e.type()), "evaluate_float of an integer");
  return evaluate(e, inputs).value;
}

ExprValue integer_value(int64_t v) {
  return ExprValue{static_cast<uint64_t>(v), 0};
}
ExprValue float_value(double v) {
  return ExprValue{0, v};
}

} // namespace tcjit::codegen
