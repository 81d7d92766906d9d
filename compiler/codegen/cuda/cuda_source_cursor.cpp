#include "compiler/codegen/cuda/cuda_source_cursor.h"

#include "compiler/codegen/cuda/expr_source.h"
#include "compiler/codegen/plan/formulas.h"

namespace tcjit::codegen::cuda_detail {

namespace {

std::string name(const OperandPlan &op) {
  return std::string(1, op.name);
}

} // namespace

void emit_copy_cursor_functions(std::ostringstream &s, const KernelPlan &p, const OperandPlan &op) {
  const std::string x = name(op), n = std::to_string(op.copies_per_thread);
  ExprGraph g;
  auto u32_input = [&](const char *in) { return input(g, ExprType::i32, in); };
  const LinearCopy lc = linear_copy(op, u32_input("row"), u32_input("col"), u32_input("mn0"),
                                    u32_input("outer_extent"), u32_input("contig_extent"),
                                    input(g, ExprType::i64, "ld"));
  const ExprSource setup = expr_source({lc.fixed, lc.k, lc.k_limit, lc.step},
                                       {{"row", "u32(row)"},
                                        {"col", "u32(col)"},
                                        {"mn0", "u32(mn0)"},
                                        {"outer_extent", "u32(outer_extent)"},
                                        {"contig_extent", "u32(contig_extent)"},
                                        {"ld", "u64(ld)"}},
                                       "    ");
  const int vecs_per_row = op.cols / op.vec;
  auto row_col = [&] {
    return "    const u32 idx = u32(tid) + u32(it * " + std::to_string(p.threads) +
           ");\n    const int row = int(idx / " + std::to_string(vecs_per_row) +
           "u), col = int(idx % " + std::to_string(vecs_per_row) + "u) * " +
           std::to_string(op.vec) + ";\n";
  };
  s << "// operand " << x << "'s copies in the main loop: pointers the loop advances (formulas.h, "
    << "linear_copy)\n"
    << "__device__ __forceinline__ s64 " << x << "_cursor(const u8 *(&ptr)[" << n << "], int (&k)["
    << n << "], int (&k_limit)[" << n
    << "], const u8 *base, s64 ld, int outer_extent, int contig_extent, int mn0, int kt, int tid) "
       "{\n"
    << "#pragma unroll\n  for (int it = 0; it < " << n << "; ++it) {\n"
    << row_col() << setup.statements << "    ptr[it] = base + (" << setup.values[0]
    << " + u64(kt) * " << setup.values[3] << ") * " << op.esize << ";\n"
    << "    k[it] = int(" << setup.values[1] << ");\n"
    << "    k_limit[it] = int(" << setup.values[2] << ");\n  }\n"
    << "  return s64(" << setup.values[3] << ") * " << op.esize << "; // bytes per K-tile\n}\n";
  ExprGraph h;
  LinearCopy at;
  at.k = input(h, ExprType::i32, "k");
  at.k_limit = input(h, ExprType::i32, "k_limit");
  const ExprSource in = expr_source(
      {linear_copy_in(op, at, input(h, ExprType::i32, "kt"))},
      {{"k", "u32(k[it])"}, {"k_limit", "u32(k_limit[it])"}, {"kt", "u32(kt)"}}, "    ");
  const char *cache = op.copy_bytes == 16 ? "cg" : "ca";
  s << "__device__ __forceinline__ void " << x << "_cursor_copy(u32 smem, const u8 *const (&ptr)["
    << n << "], const int (&k)[" << n << "], const int (&k_limit)[" << n
    << "], s64 step, int stage, int kt, int tiles, int tid) {\n"
    << "#pragma unroll\n  for (int it = 0; it < " << n << "; ++it) {\n"
    << row_col() << in.statements << "    const bool in = " << in.values[0] << ";\n"
    << "    const u32 off = u32(stage) * " << op.stage_bytes << "u + " << x
    << "_offset(row, col);\n"
    << "    asm volatile(\"cp.async." << cache << ".shared.global [%0], [%1], " << op.copy_bytes
    << ", %2;\" ::\"r\"(smem + off), \"l\"(ptr[it] + tiles * step), \"r\"(in ? " << op.copy_bytes
    << " : 0) : \"memory\");\n  }\n}\n";
}

std::string copy_cursor_setup(const OperandPlan &op, const std::string &kt0) {
  const std::string x = name(op), n = std::to_string(op.copies_per_thread);
  const std::string mn0 = op.name == 'a' ? "m0" : "n0", ld = op.name == 'a' ? "lda" : "ldb";
  return "  const u8 *" + x + "_ptr[" + n + "];\n  int " + x + "_k[" + n + "], " + x + "_k_limit[" +
         n + "];\n  const s64 " + x + "_step = " + x + "_cursor(" + x + "_ptr, " + x + "_k, " + x +
         "_k_limit, " + x + ", " + ld + ", " + x + "_outer, " + x + "_contig, " + mn0 + ", " + kt0 +
         ", tid);\n";
}

std::string copy_cursor_copy(const OperandPlan &op, const std::string &tiles) {
  const std::string x = name(op);
  return "    " + x + "_cursor_copy(smem, " + x + "_ptr, " + x + "_k, " + x + "_k_limit, " + x +
         "_step, next_stage, next, " + tiles + ", tid);\n";
}

std::string copy_cursor_advance(const OperandPlan &op, int tiles) {
  // The empty asm makes the advanced pointer opaque (the LLVM backend's freeze): NVVM's loop
  // strength reduction would otherwise rebuild every body's pointers from one induction variable
  // plus per-body bases, 3 register pairs per copy (tf32 128x128x16: 146 -> 126 registers,
  // main-loop SASS 506 -> 486 instructions).
  const std::string x = name(op), n = std::to_string(op.copies_per_thread);
  return "#pragma unroll\n  for (int it = 0; it < " + n + "; ++it) {\n    " + x +
         "_ptr[it] += " + std::to_string(tiles) + " * " + x + "_step;\n    asm(\"\" : \"+l\"(" + x +
         "_ptr[it])); // opaque: advanced as carried\n  }\n";
}

} // namespace tcjit::codegen::cuda_detail
