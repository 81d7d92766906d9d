#include "compiler/codegen/cuda/cuda_source_sparse.h"

#include "compiler/codegen/cuda/expr_source.h"
#include "compiler/codegen/plan/formulas.h"
#include "compiler/codegen/plan/sparse_metadata.h"

#include <string>
#include <vector>

namespace tcjit::codegen::cuda_detail {

namespace {

void emit_copy(std::ostringstream &s, const KernelPlan &p) {
  const SparseMetadataPlan &meta = p.meta;
  ExprGraph g;
  auto i32 = [&](const char *name) { return input(g, ExprType::i32, name); };
  const SparseMetadataCopy c =
      sparse_metadata_copy(p, i32("idx"), i32("m0"), i32("ktile"), i32("M"), i32("K"));
  const ExprSource src = expr_source({c.in, c.global_offset, c.smem_offset},
                                     {{"idx", "idx"},
                                      {"m0", "u32(m0)"},
                                      {"ktile", "u32(ktile)"},
                                      {"M", "u32(M)"},
                                      {"K", "u32(K)"}},
                                     "    ");
  s << "// 2:4-sparse A's metadata: " << meta.unit_bytes << "-byte units (one row, one k-step), "
    << meta.stage_bytes << " B per stage slot, rows g and g + 8 of each m-tile side by side\n"
    << "// (plan/sparse_metadata.h); units outside the matrix are copied from the first one.\n"
    << "__device__ __forceinline__ void meta_copy(u32 smem, const u8 *meta, int M, int K, int m0, "
       "int stage, int ktile, int tid) {\n"
    << "#pragma unroll\n"
    << "  for (int it = 0; it < " << meta.copies_per_thread << "; ++it) {\n"
    << "    const u32 idx = u32(tid) + u32(it * " << p.threads << ");\n"
    << "    if ((it + 1) * " << p.threads << " > " << meta.copies << " && idx >= " << meta.copies
    << "u) break;\n"
    << src.statements << "    const u8 *src = " << src.values[0] << " ? meta + " << src.values[1]
    << " : meta;\n"
    << "    const u32 off = " << meta.smem_offset << "u + u32(stage) * " << meta.stage_bytes
    << "u + " << src.values[2] << ";\n";
  if (meta.unit_bytes >= 4)
    s << "    asm volatile(\"cp.async.ca.shared.global [%0], [%1], " << meta.unit_bytes
      << ";\" ::\"r\"(smem + off), \"l\"(src) : \"memory\");\n";
  else
    s << "    *(u16 *)(tcjit_smem + off) = *(const u16 *)src;\n";
  s << "  }\n}\n";
}

void emit_load(std::ostringstream &s, const KernelPlan &p) {
  const SparseMetadataPlan &meta = p.meta;
  const int words = sparse_metadata_words(p);
  // two graphs: the offset's locals come before the load, the register's after it
  ExprGraph og, rg;
  auto i32 = [](ExprGraph &g, const char *name) { return input(g, ExprType::i32, name); };
  Expr offset = sparse_metadata_read_offset(p, i32(og, "warp_m0"), i32(og, "g"), i32(og, "q"),
                                            i32(og, "i"), i32(og, "ks"));
  std::vector<Expr> loaded;
  ExprSourceInputs names{{"warp_m0", "u32(warp_m0)"},
                         {"g", "u32(g)"},
                         {"q", "u32(q)"},
                         {"i", "u32(i)"},
                         {"ks", "u32(ks)"}};
  for (int w = 0; w < words; ++w) {
    const std::string name = "w" + std::to_string(w);
    loaded.push_back(input(rg, ExprType::i32, name));
    names[name] = name;
  }
  const ExprSource off = expr_source({offset}, names, "    ");
  const ExprSource reg =
      expr_source({sparse_metadata_register(p, loaded, i32(rg, "q"))}, names, "    ");
  s << "__device__ __forceinline__ void load_meta(u32 *e, int stage, int ks, int warp_m0, int g, "
       "int q) {\n"
    << "#pragma unroll\n"
    << "  for (int i = 0; i < " << p.tiles_m << "; ++i) {\n"
    << off.statements << "    const u8 *at = tcjit_smem + " << meta.smem_offset
    << "u + u32(stage) * " << meta.stage_bytes << "u + " << off.values[0] << ";\n";
  if (words == 2)
    s << "    const uint2 v = *(const uint2 *)at;\n"
      << "    const u32 w0 = v.x, w1 = v.y;\n";
  else
    s << "    const u32 w0 = *(const u32 *)at;\n";
  // a block of its own: the register's locals may reuse the offset's names
  s << "    {\n" << reg.statements << "    e[i] = " << reg.values[0] << ";\n    }\n  }\n}\n";
}

// B by ldmatrix: one x4 per n tile, its four registers the mma.sp operand as loaded.
void emit_load_b(std::ostringstream &s, const KernelPlan &p) {
  const OperandPlan &op = p.b;
  if (op.load == FragmentLoad::scalar)
    return;
  ExprGraph lg;
  const LdmatrixLane lane = ldmatrix_lane(input(lg, ExprType::i32, "lane"));
  const ExprSource lane_src = expr_source({lane.j, lane.r}, {{"lane", "u32(lane)"}}, "  ");
  ExprGraph g;
  const LdmatrixLane at_lane{input(g, ExprType::i32, "j"), input(g, ExprType::i32, "r")};
  const TileElement at =
      sparse_b_ldmatrix_element(p, at_lane, input(g, ExprType::i32, "warp0"),
                                input(g, ExprType::i32, "tile"), input(g, ExprType::i32, "ks"));
  const ExprSource at_src = expr_source(
      {at.row, at.col},
      {{"j", "j"}, {"r", "r"}, {"warp0", "u32(warp0)"}, {"tile", "u32(t)"}, {"ks", "u32(ks)"}},
      "    ");
  s << "// 2:4-sparse B: the four registers of n tile t at k-step ks by one ldmatrix.x4\n"
    << "__device__ __forceinline__ void load_b_sparse(u32 (&f)[" << p.tiles_n
    << "][4], u32 smem, int stage, int ks, int warp0, int lane) {\n"
    << "  const u32 stage_off = u32(stage) * " << op.stage_bytes << "u;\n"
    << "  const u32 j = " << lane_src.values[0] << ", r = " << lane_src.values[1] << ";\n"
    << "#pragma unroll\n  for (int t = 0; t < " << p.tiles_n << "; ++t) {\n"
    << at_src.statements << "    const int row = int(" << at_src.values[0] << "), col = int("
    << at_src.values[1] << ");\n"
    << "    ldmatrix_x4" << (op.load == FragmentLoad::ldmatrix_trans ? "_trans" : "")
    << "(f[t], smem + stage_off + b_offset(row, col));\n  }\n}\n";
}

} // namespace

void emit_sparse_metadata_functions(std::ostringstream &s, const KernelPlan &p) {
  emit_copy(s, p);
  emit_load(s, p);
  emit_load_b(s, p);
}

} // namespace tcjit::codegen::cuda_detail
