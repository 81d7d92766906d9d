#include "compiler/codegen/plan/kernel_plan.h"

#include "compiler/codegen/plan/epilogue_loop.h"
#include "compiler/codegen/plan/formulas.h"
#include "compiler/codegen/plan/llvm_overrides.h"
#include "compiler/codegen/plan/sparse_metadata.h"

#include "compiler/spec/problem_key.h"

#include "compiler/spec/alignment.h"
#include "compiler/target/arch.h"
#include "compiler/target/dtype_info.h"
#include "support/fnv1a.h"
#include "support/hex16.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace tcjit::codegen {

namespace {

OperandPlan plan_operand(char name, const MatrixOperand &op, bool k_contig_when_row, int outer,
                         int bk, int vec, int threads, const MmaForm &mma) {
  OperandPlan p;
  p.name = name;
  p.dtype = op.dtype;
  p.esize = std::max(1, dtype_bits(op.dtype) / 8); // packed sub-byte types: bytes (k_pack)
  p.layout = op.layout;
  p.k_contiguous = (op.layout == MatrixLayout::row) == k_contig_when_row;
  p.rows = p.k_contiguous ? outer : bk;
  p.cols = p.k_contiguous ? bk : outer;
  p.row_bytes = p.cols * p.esize;
  p.stage_bytes = p.rows * p.row_bytes;
  p.vec = vec;
  p.copy_bytes = vec * p.esize;
  p.copies = p.rows * p.cols / vec;
  p.copies_per_thread = (p.copies + threads - 1) / threads;
  if (mma.fragments == FragmentMap::m8n8k4_64bit || mma.fragments == FragmentMap::simt)
    p.load = FragmentLoad::scalar;
  else if (p.k_contiguous)
    p.load = FragmentLoad::ldmatrix;
  else if (p.esize == 2)
    p.load = FragmentLoad::ldmatrix_trans;
  else
    p.load = FragmentLoad::scalar;
  // The swizzle parameters for the element-wise fragment loads (kernel_plan.h).
  if (p.load == FragmentLoad::scalar && mma.kind != MmaKind::simt_f32) {
    if (p.esize >= 4) {
      p.swizzle_spread = 1;
    } else { // s8, m/n-contiguous: rows 4 apart must fall into different chunks
      const int rows_per_line = p.row_bytes >= 128 ? 1 : 128 / p.row_bytes;
      p.swizzle_shift = rows_per_line >= 4 ? 0 : rows_per_line == 2 ? 1 : 2;
    }
  }
  return p;
}

// The staged epilogue (epilogue.h) where it makes global stores coalesced: m16n8 tensor-core
// accumulators (4 per mma tile: (g, 2q), (g, 2q+1), (g+8, 2q), (g+8, 2q+1)) and an output element
// of < 4 bytes (f32/s32/f64 rows of a fragment already fill whole 32-byte sectors), not for the
// split-K workspace pass. The staging buffer (warps x slab, f32/s32) reuses the pipeline's shared
// memory; it may grow smem_bytes, but never past max(pipeline, 48 KiB) (which every arch allows,
// and the pipeline alone was validated): larger slabs keep the direct epilogue.
void plan_epilogue_staging(KernelPlan &p) {
  const int out_bytes = dtype_bits(p.out) / 8;
  const bool row = p.out_layout == MatrixLayout::row;
  const bool m16n8 = p.mma.kind != MmaKind::simt_f32 && p.mma.m == 16 && p.mma.n == 8 &&
                     p.acc_regs == 4 && dtype_bits(p.acc) == 32;
  if (!m16n8 || out_bytes >= 4 || p.config.split_k != 1)
    return;
  for (int i = 0; i < 4; ++i) {
    const FragOffset o = c_offset(p.mma, i);
    if (o.row != (i / 2) * 8 || o.col != i % 2)
      throw std::logic_error(
          "plan_kernel: unexpected m16n8 accumulator map for the staged epilogue");
  }
  const int lines = row ? 16 : 8;
  const int len = row ? p.config.wn : p.config.wm;
  const int bytes = p.warps * lines * len * 4;
  if (bytes > std::max(p.smem_bytes, 48 * 1024))
    return;
  p.stage_epilogue = true;
  p.stage_lines = lines;
  p.stage_line_len = len;
  p.stage_vec = std::min({p.c_vec, 8, len});
  p.stage_bytes = bytes;
  p.smem_bytes = std::max(p.smem_bytes, bytes);
}

} // namespace

namespace {

KernelPlan plan_view(const OpSpec &spec, const TileConfig &c, std::string_view arch, bool tf32_off,
                     int c_vec);

} // namespace

KernelPlan plan_kernel(const OpSpec &spec, const TileConfig &c, std::string_view arch,
                       bool tf32_off) {
  if (spec.kind == OpKind::gemm) {
    int c_vec = 1;
    for (const OperandAlignment &al : analyze_alignment(spec))
      if (al.operand == "c")
        c_vec = al.elements;
    return plan_view(spec, c, arch, tf32_off, c_vec);
  }
  const ConvLowering l = lower_conv(effective_spec(spec, c));
  KernelPlan p = plan_view(l.view, c, arch, tf32_off, l.max_vec_c);
  if (c.pad_c != 0)
    p.pad_from = spec.conv.c;
  if (l.depthwise) {
    p.depthwise = true;
    p.smem_bytes = 0;
    p.stage_epilogue = false;
    p.stage_bytes = 0;
    p.c_vec = 1;
  }
  p.conv = l.conv;
  p.a.gather = l.a;
  p.b.gather = l.b;
  p.bias_per_batch = l.conv.groups > 1 && spec.epilogue.bias != BiasKind::none;
  // tcjit_gemm_... -> tcjit_conv2d_fprop_..._c<hash of the constants>
  const std::string constants = describe(l.conv);
  char tag[16];
  std::snprintf(tag, sizeof tag, "%08x", support::fnv1a32(constants));
  p.kernel_name = std::string("tcjit_") + (l.conv.three_d ? "conv3d_" : "conv2d_") +
                  std::string(to_string(l.conv.pass)) + (l.depthwise ? "_depthwise" : "") + "_" +
                  p.kernel_name.substr(std::string_view("tcjit_gemm_").size()) +
                  (p.pad_from != 0 ? "_pc" + std::to_string(c.pad_c) : std::string()) + "_c" + tag;
  return p;
}

namespace {

KernelPlan plan_view(const OpSpec &spec, const TileConfig &c, std::string_view arch, bool tf32_off,
                     int c_vec) {
  KernelPlan p;
  const auto info = find_arch(arch);
  if (!info || c.vec_a == 0 || c.vec_b == 0)
    throw std::logic_error("plan_kernel: config not validated/resolved (pass validate_config)");
  p.arch = std::string(arch);
  p.sm = info->sm_version;
  p.config = c;
  p.math = resolve_math(spec.math, tf32_off);
  p.mma = math_form(spec, tf32_off);
  p.ptx_version = kernel_ptx_version(p.mma, *info);
  p.warps_m = c.bm / c.wm;
  p.warps_n = c.bn / c.wn;
  p.warps = p.warps_m * p.warps_n;
  p.threads = 32 * p.warps;
  p.tiles_m = c.wm / p.mma.m;
  p.tiles_n = c.wn / p.mma.n;
  p.k_steps = c.bk / p.mma.k;
  // Packed sub-byte inputs: from here on the kernel sees bytes along K (kernel_plan.h k_pack).
  p.k_pack = values_per_byte(spec.gemm.a.dtype);
  if (p.k_pack > 1) {
    if (spec.gemm.a.layout != MatrixLayout::row || spec.gemm.b.layout != MatrixLayout::col ||
        c.vec_a % p.k_pack != 0 || c.vec_b % p.k_pack != 0 || p.mma.kind == MmaKind::simt_f32)
      throw std::logic_error("plan_kernel: packed inputs need row x col and byte vectors "
                             "(validate_spec / validate_tile_config)");
    p.mma = packed_byte_view(p.mma, p.k_pack);
  }
  const int bk = c.bk / p.k_pack;
  // 2:4-sparse A: its tile holds the compressed K-tile (bk / 2 values per row); the fragment
  // loads follow the form's dense twin (mma_table.h).
  const int a_bk = p.mma.sparse ? bk / 2 : bk;
  p.a = plan_operand('a', spec.gemm.a, true, c.bm, a_bk, c.vec_a / p.k_pack, p.threads, p.mma);
  p.b = plan_operand('b', spec.gemm.b, false, c.bn, bk, c.vec_b / p.k_pack, p.threads, p.mma);
  p.a.smem_offset = 0;
  p.b.smem_offset = c.stages * p.a.stage_bytes;
  p.smem_bytes = c.stages * (p.a.stage_bytes + p.b.stage_bytes);
  if (p.mma.sparse) { // the metadata's stage slots follow B's (sparse_metadata.h)
    p.meta = plan_sparse_metadata(p);
    p.smem_bytes += c.stages * p.meta.stage_bytes;
  }
  p.out = spec.gemm.c.dtype;
  p.out_layout = spec.gemm.c.layout;
  p.c_vec = c_vec;
  const Accumulators acc = accumulators_after_main_loop(p.mma);
  p.acc = acc.acc;
  p.acc_regs = acc.regs;
  p.epi = p.acc == DType::f64 ? DType::f64 : DType::f32;
  p.epilogue = spec.epilogue;
  p.integer_identity = p.acc == DType::s32 && spec.epilogue.alpha == 1.0 &&
                       spec.epilogue.beta == 0.0 && spec.epilogue.bias == BiasKind::none &&
                       spec.epilogue.act == Activation::none;
  plan_epilogue_staging(p);
  plan_epilogue_loop(p);
  plan_llvm_overrides(p);
  std::ostringstream name;
  name << "tcjit_gemm_" << to_string(p.mma.kind) << "_"
       << (spec.gemm.a.layout == MatrixLayout::row ? 'r' : 'c')
       << (spec.gemm.b.layout == MatrixLayout::row ? 'r' : 'c')
       << (spec.gemm.c.layout == MatrixLayout::row ? 'r' : 'c') << "_" << to_string(p.out) << "_"
       << c.bm << "x" << c.bn << "x" << c.bk << "_w" << c.wm << "x" << c.wn << "_s" << c.stages
       << (c.split_k > 1 ? "_k" + std::to_string(c.split_k) : std::string())
       << (c.raster_group > 1 ? "_g" + std::to_string(c.raster_group) : std::string()) << "_va"
       << c.vec_a << "_vb" << c.vec_b << "_vc" << p.c_vec << "_" << to_string(spec.epilogue.act)
       << (spec.epilogue.act == Activation::custom ? custom_activation_digest(spec.epilogue.custom)
                                                   : std::string())
       << "_" << to_string(spec.epilogue.bias) << (spec.epilogue.beta != 0.0 ? "_beta" : "");
  p.kernel_name = name.str();
  return p;
}

} // namespace

Accumulators accumulators_after_main_loop(const MmaForm &mma) {
  if (mma.kind == MmaKind::f16_f16)
    return {DType::f32, 2 * mma.c_regs}; // c0 c1 | c2 c3 -> c0, c1, c2, c3
  return {mma.acc, mma.c_regs};
}

bool widens_f16_accumulators(const KernelPlan &p) {
  return p.mma.acc == DType::f16 && p.acc == DType::f32;
}

int64_t swizzled_offset(const OperandPlan &op, int64_t row, int64_t col) {
  ExprGraph g;
  return evaluate_integer(
      swizzled_offset(op, constant(g, ExprType::i32, row), constant(g, ExprType::i32, col)));
}

int64_t staging_offset(const KernelPlan &p, int64_t line, int64_t pos) {
  ExprGraph g;
  return evaluate_integer(
      staging_offset(p, constant(g, ExprType::i32, line), constant(g, ExprType::i32, pos)));
}

std::string kernel_identity(const KernelPlan &p) {
  std::ostringstream o;
  o << p.kernel_name << "|" << p.arch << "|ptx" << p.ptx_version << "|" << to_string(p.math) << "|"
    << to_string(p.epi) << (p.integer_identity ? "|integer_identity" : "")
    << (p.stage_epilogue ? "|staged" + std::to_string(p.stage_vec) : std::string())
    << (p.epilogue_loop ? "" : "|epilogue_unrolled") // TCJIT_EPILOGUE_UNROLL: other code
    << (p.llc_opt >= 0 ? "|llc" + std::to_string(p.llc_opt) : std::string()) // TCJIT_LLC_OPT
    << (p.llvm_pipeline.empty() ? std::string() // TCJIT_LLVM_PIPELINE, by its digest
                                : "|pipeline" + support::hex16(support::fnv1a64(p.llvm_pipeline)));
  if (p.conv)
    o << "|" << describe(*p.conv) << (p.bias_per_batch ? "|grouped_bias" : "")
      << (p.pad_from != 0 ? "|pad_from" + std::to_string(p.pad_from) : "")
      << (p.a.gather == Gather::strided_phases ? "|dgrad_phases" : "");
  return o.str();
}

bool bytewise_fragments(const KernelPlan &p) {
  const auto bytewise = [](const OperandPlan &op) {
    return op.load == FragmentLoad::scalar && op.esize == 1;
  };
  return bytewise(p.a) || bytewise(p.b);
}

MmaForm packed_byte_view(const MmaForm &form, int k_pack) {
  MmaForm f = form;
  if (k_pack == 1)
    return f;
  f.k /= k_pack;
  f.elem_bits = 8;
  // sparse s4/u4 m16n8k128 in bytes: s8's m16n8k64 (2 kept bytes, pairs of values, of every 4)
  f.fragments = f.sparse ? FragmentMap::sp_m16n8k64_8bit : FragmentMap::m16n8k32_8bit;
  return f;
}

KernelPlan fragment_plan(const KernelPlan &p) {
  KernelPlan out = p;
  if (p.mma.sparse) { // the twin of the table's form (p.mma is in bytes when packed)
    const auto forms = mma_forms();
    const auto table = std::find_if(forms.begin(), forms.end(),
                                    [&](const MmaForm &f) { return f.kind == p.mma.kind; });
    out.mma = packed_byte_view(dense_twin(*table), p.k_pack);
  }
  return out;
}

int k_tile_extent(const KernelPlan &p) {
  return p.config.bk / p.k_pack;
}

std::string describe(const KernelPlan &p) {
  std::ostringstream o;
  auto op = [&](const OperandPlan &x) {
    o << "  " << x.name << ": " << to_string(x.dtype) << ":" << to_string(x.layout) << " smem "
      << x.rows << "x" << x.cols << (x.k_contiguous ? " (k contiguous)" : " (m/n contiguous)")
      << ", " << x.stage_bytes << " B/stage, vec " << x.vec << " (" << x.copy_bytes << " B, "
      << (x.copy_bytes >= 4 ? "cp.async" : "ld.global+st.shared") << "), " << x.copies_per_thread
      << " copies/thread, fragments by "
      << (x.load == FragmentLoad::ldmatrix         ? "ldmatrix.x4"
          : x.load == FragmentLoad::ldmatrix_trans ? "ldmatrix.x4.trans"
                                                   : "ld.shared")
      << " (swizzle shift " << x.swizzle_shift << ", spread " << x.swizzle_spread << ")"
      << (x.gather != Gather::linear ? ", " + std::string(to_string(x.gather)) + " gather" : "")
      << "\n";
  };
  o << "kernel " << p.kernel_name << "\n";
  if (p.depthwise)
    o << "  direct depthwise kernel of " << describe(*p.conv) << ": " << p.config.bm << " pixels x "
      << p.config.bn << " channels per CTA, " << p.threads
      << " threads, each output's taps summed by one thread\n";
  else if (p.conv)
    o << "  implicit GEMM of " << describe(*p.conv) << ": A by " << to_string(p.a.gather)
      << ", B by " << to_string(p.b.gather)
      << (p.a.gather == Gather::strided_phases ? ", one stride phase x group per grid z\n"
                                               : ", one group per grid z\n");
  if (p.pad_from != 0)
    o << "  x and the filter copied first with c = " << p.pad_from << " zero-padded to "
      << p.conv->c << " channels (" << p.kernel_name << "_pad_channels)\n";
  o << "  target " << p.arch << ", PTX " << p.ptx_version / 10 << "." << p.ptx_version % 10 << "\n"
    << "  mma " << p.mma.ptx
    << (widens_f16_accumulators(p) ? " (f16x2 accumulators, widened to f32 after the main loop)"
                                   : "")
    << "\n"
    << (p.k_pack > 1 ? "  packed inputs: " + std::to_string(p.k_pack) +
                           " values per byte, loaded and fragmented as bytes along K\n"
                     : std::string())
    << "  CTA " << p.config.bm << "x" << p.config.bn << "x" << p.config.bk << ", " << p.warps
    << " warps (" << p.warps_m << "x" << p.warps_n << "), warp tile " << p.config.wm << "x"
    << p.config.wn << " = " << p.tiles_m << "x" << p.tiles_n << " mma tiles, " << p.k_steps
    << " k-steps per K-tile\n"
    << "  pipeline " << p.config.stages << " stages, " << p.smem_bytes
    << " B dynamic shared memory\n";
  op(p.a);
  op(p.b);
  if (p.mma.sparse)
    o << "  metadata: " << p.meta.stage_bytes << " B/stage, " << p.meta.unit_bytes
      << "-byte units (" << (p.meta.unit_bytes >= 4 ? "cp.async" : "ld.global+st.shared") << "), "
      << p.meta.copies_per_thread
      << " copies/thread, paired rows g, g + 8 per m-tile (one shared load per m-tile and "
         "k-step)\n";
  o << "  epilogue act="
    << (p.epilogue.act == Activation::custom ? "custom:" + p.epilogue.custom.path
                                             : std::string(to_string(p.epilogue.act)))
    << " bias=" << to_string(p.epilogue.bias) << " alpha=" << p.epilogue.alpha
    << " beta=" << p.epilogue.beta << " -> " << to_string(p.out)
    << (p.integer_identity ? " (exact integer)" : "") << "\n";
  if (p.stage_epilogue)
    o << "  epilogue staged through shared memory: " << p.stage_lines << " x " << p.stage_line_len
      << " accumulators per warp and pass, " << p.stage_bytes << " B per CTA, C/D vectors of "
      << p.stage_vec << " elements (" << p.stage_vec * dtype_bits(p.out) / 8 << " B)\n";
  else
    o << "  epilogue direct from the fragments\n";
  return o.str();
}

} // namespace tcjit::codegen
