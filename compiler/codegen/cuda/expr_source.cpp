#include "compiler/codegen/cuda/expr_source.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace tcjit::codegen::cuda_detail {

namespace {

// The shortest decimal that reads back as the constant, with its type's suffix.
std::string float_literal(ExprType t, double v) {
  char buf[48];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    const bool exact = t == ExprType::f32 ? std::strtof(buf, nullptr) == static_cast<float>(v)
                                          : std::strtod(buf, nullptr) == v;
    if (exact)
      break;
  }
  std::string s = buf;
  if (s.find_first_of(".e") == std::string::npos)
    s += ".0";
  return t == ExprType::f32 ? s + "f" : s;
}

std::string integer_literal(ExprType t, uint64_t bits) {
  if (t == ExprType::b1)
    return bits != 0 ? "true" : "false";
  if (t == ExprType::i32) {
    const auto v = static_cast<int32_t>(static_cast<uint32_t>(bits));
    return v < 0 ? "u32(" + std::to_string(v) + ")" : std::to_string(v) + "u";
  }
  const auto v = static_cast<int64_t>(bits);
  return v < 0 ? "u64(" + std::to_string(v) + "ll)" : std::to_string(v) + "ull";
}

std::string binary(const std::string &a, const char *op, const std::string &b) {
  return "(" + a + " " + op + " " + b + ")";
}

std::string node_source(const ExprGraph &g, const ExprNode &n, const std::vector<std::string> &text,
                        const ExprSourceInputs &inputs) {
  auto x = [&](int i) { return text[static_cast<size_t>(n.args[static_cast<size_t>(i)])]; };
  const ExprType ot = n.args[0] >= 0 ? g.nodes[static_cast<size_t>(n.args[0])].type : n.type;
  const bool f32 = n.type == ExprType::f32;
  switch (n.op) {
  case ExprOp::constant:
    return is_float(n.type) ? float_literal(n.type, n.value) : integer_literal(n.type, n.bits);
  case ExprOp::input: {
    const auto it = inputs.find(n.name);
    if (it == inputs.end())
      throw std::logic_error("expr_source: input '" + n.name + "' is not bound");
    return it->second;
  }
  case ExprOp::add: return binary(x(0), "+", x(1));
  case ExprOp::sub: return binary(x(0), "-", x(1));
  case ExprOp::mul: return binary(x(0), "*", x(1));
  case ExprOp::div: return binary(x(0), "/", x(1));
  case ExprOp::urem: return binary(x(0), "%", x(1));
  case ExprOp::shl: return binary(x(0), "<<", x(1));
  case ExprOp::lshr: return binary(x(0), ">>", x(1));
  case ExprOp::bit_and: return binary(x(0), n.type == ExprType::b1 ? "&&" : "&", x(1));
  case ExprOp::bit_or: return binary(x(0), n.type == ExprType::b1 ? "||" : "|", x(1));
  case ExprOp::bit_xor: return binary(x(0), n.type == ExprType::b1 ? "!=" : "^", x(1));
  case ExprOp::zext: return "u64(" + x(0) + ")";
  case ExprOp::ult: return binary(x(0), "<", x(1));
  case ExprOp::slt: {
    const std::string s = ot == ExprType::i64 ? "s64" : "int";
    return binary(s + "(" + x(0) + ")", "<", s + "(" + x(1) + ")");
  }
  case ExprOp::eq: return binary(x(0), "==", x(1));
  case ExprOp::ogt: return binary(x(0), ">", x(1));
  case ExprOp::olt: return binary(x(0), "<", x(1));
  case ExprOp::ugt: return "!" + binary(x(0), "<=", x(1));
  case ExprOp::select: return "(" + x(0) + " ? " + x(1) + " : " + x(2) + ")";
  case ExprOp::fneg: return "(-" + x(0) + ")";
  case ExprOp::fabs: return (f32 ? "fabsf(" : "fabs(") + x(0) + ")";
  case ExprOp::div_approx: return "div_approx(" + x(0) + ", " + x(1) + ")";
  case ExprOp::ex2_approx: return "ex2_approx(" + x(0) + ")";
  case ExprOp::lg2_approx: return "lg2_approx(" + x(0) + ")";
  case ExprOp::byte_perm: return "__byte_perm(" + x(0) + ", " + x(1) + ", " + x(2) + ")";
  case ExprOp::math: return to_string(n.function) + std::string(f32 ? "f(" : "(") + x(0) + ")";
  }
  throw std::logic_error("expr_source: unknown operation");
}

} // namespace

const char *cuda_type(ExprType t) {
  switch (t) {
  case ExprType::b1: return "bool";
  case ExprType::i32: return "u32";
  case ExprType::i64: return "u64";
  case ExprType::f32: return "float";
  case ExprType::f64: return "double";
  }
  return "?";
}

ExprSource expr_source(const std::vector<Expr> &roots, const ExprSourceInputs &inputs,
                       const std::string &indent) {
  ExprSource out;
  if (roots.empty())
    return out;
  const ExprGraph &g = *roots.front().graph;
  // uses of each node the roots reach (a root counts as one)
  std::vector<int> uses(g.nodes.size(), 0);
  int last = -1;
  for (const Expr &r : roots) {
    if (r.graph != &g)
      throw std::logic_error("expr_source: roots of different graphs");
    ++uses[static_cast<size_t>(r.id)];
    last = std::max(last, r.id);
  }
  for (int i = last; i >= 0; --i) {
    const ExprNode &n = g.nodes[static_cast<size_t>(i)];
    if (uses[static_cast<size_t>(i)] > 0)
      for (int a : n.args)
        if (a >= 0)
          ++uses[static_cast<size_t>(a)];
  }
  std::vector<std::string> text(g.nodes.size());
  // an inlined and of conditions, as `a && b && c` without its parentheses: conditions print as
  // one left-to-right chain whatever the formula's nesting (measured: NVRTC makes fewer
  // instructions of `in && y < H && x < W` than of `in && (y < H && x < W)`)
  std::vector<std::string> chain(g.nodes.size());
  auto link = [&](int arg) {
    const size_t a = static_cast<size_t>(arg);
    return chain[a].empty() ? text[a] : chain[a];
  };
  for (int i = 0; i <= last; ++i) {
    const size_t at = static_cast<size_t>(i);
    if (uses[at] == 0)
      continue;
    const ExprNode &n = g.nodes[at];
    if (n.op == ExprOp::bit_and && n.type == ExprType::b1) {
      chain[at] = link(n.args[0]) + " && " + link(n.args[1]);
      text[at] = "(" + chain[at] + ")";
    } else {
      text[at] = node_source(g, n, text, inputs);
    }
    if (uses[at] > 1 && n.op != ExprOp::constant && n.op != ExprOp::input) {
      const std::string name = "v" + std::to_string(i);
      out.statements +=
          indent + "const " + cuda_type(n.type) + " " + name + " = " + text[at] + ";\n";
      text[at] = name;
      chain[at].clear();
    }
  }
  for (const Expr &r : roots)
    out.values.push_back(text[static_cast<size_t>(r.id)]);
  return out;
}

} // namespace tcjit::codegen::cuda_detail
