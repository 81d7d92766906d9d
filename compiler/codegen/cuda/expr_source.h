// Expressions (plan/expr.h) as CUDA C++: the source backend's reading of the formulas
// (plan/formulas.h).
#pragma once

#include "compiler/codegen/plan/expr.h"

#include <map>
#include <string>
#include <vector>

namespace tcjit::codegen::cuda_detail {

// The C++ type of an expression type: bool, u32, u64, float, double (the prelude's typedefs).
const char *cuda_type(ExprType);

// The C++ of an input, by name: an expression of the input's C++ type (cuda_type).
using ExprSourceInputs = std::map<std::string, std::string>;

struct ExprSource {
  std::string statements;          // `<indent>const T v<id> = ...;\n` lines
  std::vector<std::string> values; // one C++ expression per root
};

// The C++ of `roots` (nodes of one graph): a local for each node used more than once, in the
// graph's order, and one fully parenthesised expression per root, with unsigned integer arithmetic
// (slt compares as signed). The f32 approximations call the prelude's inline-PTX helpers
// (div_approx, ex2_approx, lg2_approx), the library functions CUDA's <name> (f64) or <name>f.
ExprSource expr_source(const std::vector<Expr> &roots, const ExprSourceInputs &,
                       const std::string &indent);

} // namespace tcjit::codegen::cuda_detail
