// Expressions (plan/expr.h) as LLVM IR: the LLVM backend's reading of the formulas
// (plan/formulas.h). Internal header: includes LLVM.
#pragma once

#include "compiler/codegen/llvm/emit_context.h"
#include "compiler/codegen/plan/expr.h"

#include <map>
#include <string>
#include <vector>

namespace tcjit::codegen {

// The IR values of a graph's inputs, by name (i1, i32, i64, float or double, as the input's type).
using ExprIrInputs = std::map<std::string, llvm::Value *>;

// The nodes of one graph already emitted (by node id; nullptr: not yet), so that a kernel can emit
// parts of one graph at different places, each node once. The values must dominate the later
// uses: emit the shared parts first.
struct EmittedExpr {
  std::vector<llvm::Value *> values;
};

// The IR of `roots` (nodes of one graph) at the builder's insertion point: each node they reach
// that `emitted` does not hold yet, in the graph's order (expr.h), through IRBuilder (so that
// operations on constants fold as the formula's did). The f32 approximations are their NVVM
// intrinsics, the library functions libdevice's __nv_<name>[f] (linked by nvptx_emit).
std::vector<llvm::Value *> emit_expr(EmitContext &, const std::vector<Expr> &roots,
                                     const ExprIrInputs &, EmittedExpr &);
llvm::Value *emit_expr(EmitContext &, Expr root, const ExprIrInputs &);

} // namespace tcjit::codegen
