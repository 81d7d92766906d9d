#include "compiler/codegen/llvm/expr_lowering.h"

#include <llvm/IR/IntrinsicsNVPTX.h>

#include <stdexcept>

namespace tcjit::codegen {

using llvm::Value;

namespace {

llvm::Type *ir_type(EmitContext &e, ExprType t) {
  switch (t) {
  case ExprType::b1: return e.b.getInt1Ty();
  case ExprType::i32: return e.i32();
  case ExprType::i64: return e.i64();
  case ExprType::f32: return e.b.getFloatTy();
  case ExprType::f64: return e.b.getDoubleTy();
  }
  throw std::logic_error("emit_expr: unknown type");
}

Value *arg(const std::vector<Value *> &values, const ExprNode &n, int i) {
  return values[static_cast<size_t>(n.args[static_cast<size_t>(i)])];
}

Value *emit_node(EmitContext &e, const ExprGraph &g, const ExprNode &n,
                 const std::vector<Value *> &values, const ExprIrInputs &inputs) {
  auto &b = e.b;
  const bool fl = n.args[0] >= 0 && is_float(g.nodes[static_cast<size_t>(n.args[0])].type);
  auto x = [&](int i) { return arg(values, n, i); };
  switch (n.op) {
  case ExprOp::constant:
    if (is_float(n.type))
      return llvm::ConstantFP::get(ir_type(e, n.type), n.value);
    return llvm::ConstantInt::get(ir_type(e, n.type), n.bits);
  case ExprOp::input: {
    const auto it = inputs.find(n.name);
    if (it == inputs.end())
      throw std::logic_error("emit_expr: input '" + n.name + "' is not bound");
    if (it->second->getType() != ir_type(e, n.type))
      throw std::logic_error("emit_expr: input '" + n.name + "' bound to a value of another type");
    return it->second;
  }
  case ExprOp::add: return fl ? b.CreateFAdd(x(0), x(1)) : b.CreateAdd(x(0), x(1));
  case ExprOp::sub: return fl ? b.CreateFSub(x(0), x(1)) : b.CreateSub(x(0), x(1));
  case ExprOp::mul: return fl ? b.CreateFMul(x(0), x(1)) : b.CreateMul(x(0), x(1));
  case ExprOp::div: return fl ? b.CreateFDiv(x(0), x(1)) : b.CreateUDiv(x(0), x(1));
  case ExprOp::urem: return b.CreateURem(x(0), x(1));
  case ExprOp::shl: return b.CreateShl(x(0), x(1));
  case ExprOp::lshr: return b.CreateLShr(x(0), x(1));
  case ExprOp::bit_and: return b.CreateAnd(x(0), x(1));
  case ExprOp::bit_or: return b.CreateOr(x(0), x(1));
  case ExprOp::bit_xor: return b.CreateXor(x(0), x(1));
  case ExprOp::zext: return b.CreateZExt(x(0), e.i64());
  case ExprOp::ult: return b.CreateICmpULT(x(0), x(1));
  case ExprOp::slt: return b.CreateICmpSLT(x(0), x(1));
  case ExprOp::eq: return fl ? b.CreateFCmpOEQ(x(0), x(1)) : b.CreateICmpEQ(x(0), x(1));
  case ExprOp::ogt: return b.CreateFCmpOGT(x(0), x(1));
  case ExprOp::olt: return b.CreateFCmpOLT(x(0), x(1));
  case ExprOp::ugt: return b.CreateFCmpUGT(x(0), x(1));
  case ExprOp::select: return b.CreateSelect(x(0), x(1), x(2));
  case ExprOp::fneg: return b.CreateFNeg(x(0));
  case ExprOp::fabs:
    return b.CreateCall(e.intrinsic(llvm::Intrinsic::fabs, {x(0)->getType()}), {x(0)});
  case ExprOp::div_approx:
    return b.CreateCall(e.intrinsic(llvm::Intrinsic::nvvm_div_approx_f), {x(0), x(1)});
  case ExprOp::ex2_approx:
    return b.CreateCall(e.intrinsic(llvm::Intrinsic::nvvm_ex2_approx_f), {x(0)});
  case ExprOp::lg2_approx:
    return b.CreateCall(e.intrinsic(llvm::Intrinsic::nvvm_lg2_approx_f), {x(0)});
  case ExprOp::byte_perm:
    return b.CreateCall(e.intrinsic(llvm::Intrinsic::nvvm_prmt), {x(0), x(1), x(2)});
  case ExprOp::math: { // libdevice: __nv_<name>f for f32, __nv_<name> for f64
    llvm::Type *t = x(0)->getType();
    llvm::FunctionCallee f = e.module.getOrInsertFunction(
        std::string("__nv_") + to_string(n.function) + (t->isFloatTy() ? "f" : ""),
        llvm::FunctionType::get(t, {t}, false));
    return b.CreateCall(f, {x(0)});
  }
  }
  throw std::logic_error("emit_expr: unknown operation");
}

} // namespace

std::vector<Value *> emit_expr(EmitContext &e, const std::vector<Expr> &roots,
                               const ExprIrInputs &inputs, EmittedExpr &emitted) {
  if (roots.empty())
    return {};
  const ExprGraph &g = *roots.front().graph;
  emitted.values.resize(g.nodes.size(), nullptr);
  // the nodes the roots reach that are not emitted yet (operands come before their users)
  std::vector<char> needed(g.nodes.size(), 0);
  int last = -1;
  for (const Expr &r : roots) {
    if (r.graph != &g)
      throw std::logic_error("emit_expr: roots of different graphs");
    needed[static_cast<size_t>(r.id)] = 1;
    last = std::max(last, r.id);
  }
  for (int i = last; i >= 0; --i) {
    const size_t at = static_cast<size_t>(i);
    if (!needed[at] || emitted.values[at] != nullptr)
      continue;
    for (int a : g.nodes[at].args)
      if (a >= 0)
        needed[static_cast<size_t>(a)] = 1;
  }
  for (int i = 0; i <= last; ++i) {
    const size_t at = static_cast<size_t>(i);
    if (needed[at] && emitted.values[at] == nullptr)
      emitted.values[at] = emit_node(e, g, g.nodes[at], emitted.values, inputs);
  }
  std::vector<Value *> out;
  for (const Expr &r : roots)
    out.push_back(emitted.values[static_cast<size_t>(r.id)]);
  return out;
}

Value *emit_expr(EmitContext &e, Expr root, const ExprIrInputs &inputs) {
  EmittedExpr emitted;
  return emit_expr(e, {root}, inputs, emitted).front();
}

} // namespace tcjit::codegen
