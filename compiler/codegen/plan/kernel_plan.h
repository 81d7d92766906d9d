// The kernel plan: everything about the kernel that follows from spec + config, decided before any
// LLVM IR exists — tiling, pipeline, fragments, shared-memory layout (with its XOR swizzle).
//
// Shared memory holds, per stage, an A tile then a B tile. Each operand tile is stored the way the
// operand lies in global memory: `rows` x `cols` with `cols` the contiguous dimension
// (A row: m x k, A col: k x m, B row: k x n, B col: n x k). A row of the tile is cols*esize bytes,
// split into 16-byte chunks. The XOR swizzle (CUTLASS's Swizzle<3,4,3> generalised) permutes the
// eight 16-byte chunks of every 128-byte line:
//   offset = row * row_bytes + col * esize
//   R      = row                 (rows of >= 128 bytes)
//          = offset >> 7         (rows of <  128 bytes: 128-byte lines of several rows)
//   offset ^= (((R >> swizzle_shift) << swizzle_spread) % 8) << 4
// A permutation inside each line, so 8 consecutive 16-byte cp.async stores (one line) never
// conflict, whatever the parameters. The parameters are chosen per fragment-load pattern:
// - ldmatrix(.trans) and the SIMT loads (shift 0, spread 0): the 8 row addresses of an ldmatrix
//   phase lie in 8 consecutive rows (or lines) and get 8 different chunks.
// - ld.shared.b32 of tf32 m/n-contiguous tiles and ld.shared.b64 of f64 tiles (spread 1): one
//   phase reads 4 consecutive rows (lines) x 32 bytes; XOR by 2 * (R % 4) gives them 4 disjoint
//   chunk pairs.
// - byte loads of s8 m/n-contiguous tiles: one instruction reads k rows 4 apart (k = 4q + x);
//   the shift makes R >> shift count those rows (lines) 0, 1, 2, 3, so they get 4 chunks.
// plan_kernel picks them; tests/codegen check every case on the emulator (zero bank conflicts).
// Both backends print the swizzle from one formula (formulas.h, swizzled_offset).
#pragma once

#include "compiler/codegen/plan/conv_lowering.h"
#include "compiler/codegen/plan/tile_config.h"
#include "compiler/target/mma_table.h"
#include "tcjit/op_spec.h"

#include <cstdint>
#include <optional>
#include <string>

namespace tcjit::codegen {

enum class FragmentLoad {
  ldmatrix,       // ldmatrix.x4 (k-contiguous tile; any element size, b16 pairs)
  ldmatrix_trans, // ldmatrix.x4.trans (16-bit elements, m/n-contiguous tile)
  scalar,         // ld.shared per element (f64, and 32/8-bit m/n-contiguous tiles)
};

struct OperandPlan {
  char name = 'a';
  DType dtype = DType::f16;
  int esize = 2; // bytes per element
  MatrixLayout layout = MatrixLayout::row;
  bool k_contiguous = true; // tile rows run along the outer dim, cols along K
  int rows = 0, cols = 0;   // smem tile (per stage), cols contiguous
  int row_bytes = 0;
  int stage_bytes = 0;
  int smem_offset = 0;       // of stage 0; stage s at smem_offset + s * stage_bytes
  int vec = 1;               // global vector width in elements (bytes for packed inputs)
  int copy_bytes = 0;        // vec * esize: 16/8/4 -> cp.async, 2/1 -> ld.global + st.shared
  int copies = 0;            // vectors per stage tile
  int copies_per_thread = 0; // ceil(copies / threads)
  FragmentLoad load = FragmentLoad::scalar;
  int swizzle_shift = 0;          // see the swizzle above
  int swizzle_spread = 0;         // 0 or 1
  Gather gather = Gather::linear; // how a tile element's global address is formed
};

// A 2:4-sparse A's metadata staged through shared memory (sparse_metadata.h): one stage slot per
// pipeline stage after the B tiles. All zero for dense plans.
struct SparseMetadataPlan {
  int unit_bytes = 0;        // one row's metadata of one k-step: mma.k / 8 (the copy unit)
  int chunk_bytes = 0;       // rows g and g + 8 of an m16 tile, all k-steps: 2 * k_steps * unit
  int stage_bytes = 0;       // bm * bk / 8
  int smem_offset = 0;       // of stage 0; stage s at smem_offset + s * stage_bytes
  int copies = 0;            // units per stage: bm * k_steps
  int copies_per_thread = 0; // ceil(copies / threads)
};

struct KernelPlan {
  std::string kernel_name; // deterministic, from spec + config
  std::string arch;        // "sm_80"
  int sm = 80;
  int ptx_version = 70; // x10: the arch's, raised to the mma form's min_ptx
  TileConfig config;
  MmaForm mma; // the instruction of the main loop (its accumulators: mma.acc, mma.c_regs per tile)
  // The accumulators after the main loop, as the epilogue, the split-K workspace and the staged
  // stores read them: the main loop's, except f16 accumulation (MmaKind::f16_f16), whose two
  // f16x2 registers per tile are widened once, after the main loop, to four f32 (same c_offset
  // map). Set by plan_kernel (accumulators_after_main_loop).
  DType acc = DType::f32;
  int acc_regs = 4; // per mma tile
  MathMode math = MathMode::tf32;
  int threads = 0, warps = 0;
  int warps_m = 0, warps_n = 0;
  int tiles_m = 0, tiles_n = 0; // mma tiles per warp
  int k_steps = 0;              // mma k-steps per K-tile
  // Packed sub-byte inputs (s4, u4: 2; b1: 8; else 1): values per byte along K. The kernel works
  // in bytes along K: `mma` is the form seen in bytes (k / k_pack, elem_bits 8, the m16n8k32 s8
  // fragment map, which is the byte view of the m16n8k64 s4 and m16n8k256 b1 maps), the operand
  // tiles are bk / k_pack bytes wide, and the kernel divides its K, lda, ldb and A/B batch strides
  // (values at run time, kernel_abi.h) by k_pack on entry. A must be row-major and B col-major.
  int k_pack = 1;
  OperandPlan a, b;
  SparseMetadataPlan meta; // 2:4-sparse A only
  // A convolution's implicit GEMM (conv_lowering.h): the constants its gathers use. The plan's
  // operands, tiles and epilogue are those of the view; the batch index is the group.
  std::optional<ConvConstants> conv;
  bool bias_per_batch = false; // grouped conv: group g's bias starts at g * N
  // Channel padding (TileConfig::pad_c): the module also holds <kernel_name>_pad_channels, which
  // copies x and the filter with their `pad_from` channels zero-padded to conv->c (kernel_abi.h).
  int64_t pad_from = 0; // 0: no padding
  // The direct depthwise kernel (conv_lowering.h, depthwise.h): bm pixels x bn channels per CTA,
  // `threads` threads, each computing outputs tid, tid + threads, ... of the tile; no shared
  // memory; mma.acc is the accumulator type (the multiply-adds are not mma).
  bool depthwise = false;
  int smem_bytes = 0; // dynamic shared memory per CTA
  // epilogue
  DType out = DType::f32;
  MatrixLayout out_layout = MatrixLayout::row;
  int c_vec = 1; // alignment of C/D in elements (analyze_alignment): >= 2 allows paired stores
  DType epi = DType::f32; // type the epilogue computes in (f32, f64 for f64)
  Epilogue epilogue;
  bool integer_identity = false; // s32 accumulators and an identity epilogue: exact integer path
  // Shared-memory-staged epilogue (epilogue.h): the warp writes its accumulators to shared memory
  // one slab at a time and reads them back along D's contiguous dimension, so that C is loaded and
  // D stored in coalesced vectors of stage_vec elements. Chosen for m16n8 tensor-core forms with
  // an output element of < 4 bytes (f16, bf16, s8) without split-K, when the staging buffer fits
  // (plan_kernel); smem_bytes covers it.
  bool stage_epilogue = false;
  int stage_lines = 0;    // slab: 16 rows (row-major D) or 8 columns (col-major D) per pass
  int stage_line_len = 0; // elements per line: wn (row-major D) or wm (col-major D)
  int stage_vec = 1;      // elements per C/D access: min(c_vec, 8)
  int stage_bytes = 0;    // staging buffer of the CTA: warps * lines * line_len * 4
  // The epilogue's passes as a loop, their code emitted once (epilogue_loop.h).
  bool epilogue_loop = false;
  // The LLVM backend's environment overrides at planning (llvm_overrides.h): the NVPTX level
  // (-1: the backend's choice) and the pass pipeline ("": the backend's own).
  int llc_opt = -1;
  std::string llvm_pipeline;
};

// acc and acc_regs of a plan whose main loop issues `mma` (see KernelPlan::acc).
struct Accumulators {
  DType acc;
  int regs;
};
Accumulators accumulators_after_main_loop(const MmaForm &mma);
// True when the main loop's accumulators are f16x2 pairs widened to f32 after it.
bool widens_f16_accumulators(const KernelPlan &);

// Builds the plan. Preconditions (internal errors if broken): validate_tile_config() is empty and
// vec_a/vec_b are resolved.
KernelPlan plan_kernel(const OpSpec &spec, const TileConfig &config, std::string_view arch,
                       bool tf32_off);

// The swizzled byte offset of element (row, col) of an operand tile: the formula both backends
// print (formulas.h), evaluated on the host.
int64_t swizzled_offset(const OperandPlan &, int64_t row, int64_t col);

// Byte offset of accumulator (line, pos) in a warp's epilogue staging slab (4-byte elements,
// stage_lines x stage_line_len), with the staging swizzle: the formula of formulas.h, evaluated.
int64_t staging_offset(const KernelPlan &, int64_t line, int64_t pos);

// What the generated PTX depends on, as text: two specs (of any sizes) whose plans have the same
// identity get byte-identical PTX, so one compiled kernel serves both; the problem's sizes, its
// leading dimensions and alpha/beta values are run-time arguments. Made of the kernel name (dtypes,
// layouts, tile, warps, stages, split-K, rasterization, vector widths of A, B and C, activation,
// bias, beta != 0) with what the name leaves out: arch and PTX version, resolved math, the exact
// integer epilogue (alpha = 1, beta = 0, no bias/activation) and the staged epilogue.
std::string kernel_identity(const KernelPlan &);

// True when an operand's fragments are loaded element by element from 8-bit elements (s8 with
// M/N-contiguous tiles: four byte loads per register). Such kernels have so many distinct
// shared-memory addresses that hoisting them out of the main loop, or unrolling it by the stage
// count, spills (40-276 B): the code generator does neither for them.
bool bytewise_fragments(const KernelPlan &);

// An operand's global vector width in elements (values): OperandPlan::vec counts bytes for packed
// sub-byte inputs (KernelPlan::k_pack).
inline int vector_elements(const KernelPlan &p, const OperandPlan &op) {
  return op.vec * (op.name == 'a' || op.name == 'b' ? p.k_pack : 1);
}
// The plan the fragment loads follow: `p` itself, or for a 2:4-sparse form `p` with its dense
// twin's mma (mma_table.h: dense_twin), whose A map over the compressed tile and whose two B
// fragments make the sparse form's registers (packed inputs: both in bytes, packed_byte_view).
KernelPlan fragment_plan(const KernelPlan &p);
// A form as a kernel with packed inputs (k_pack values per byte) sees it: K in bytes, 8-bit
// elements, the m16n8k32 s8 map (sparse s4/u4 m16n8k128: s8's sparse m16n8k64 map, the 2 kept
// units of every 4 being bytes, i.e. pairs of values). The form itself when k_pack is 1.
MmaForm packed_byte_view(const MmaForm &form, int k_pack);
// The K-tile's extent in the kernel's units along K: bk values, bytes for packed inputs
// (bk / k_pack). What the kernel's K-tile counter kt multiplies to reach K (which it holds in
// bytes for packed inputs, like lda): the sparse metadata's column of a k-step uses it.
int k_tile_extent(const KernelPlan &p);

// Multi-line human-readable description (TCJIT_DEBUG, `tcjit compile`).
std::string describe(const KernelPlan &);

} // namespace tcjit::codegen
