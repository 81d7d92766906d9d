// Shared memory -> mma fragments for one k-step: ldmatrix.x4 (k-contiguous tiles),
// ldmatrix.x4.trans (16-bit m/n-contiguous tiles) or per-element ld.shared (f64; 32/8-bit
// m/n-contiguous tiles).
//
// ldmatrix.x4 over a k-contiguous A tile: lane l gives the row address of row (l & 7) of matrix
// l >> 3; matrices in register order are (rows 0-7, chunk 0), (rows 8-15, chunk 0),
// (rows 0-7, chunk 1), (rows 8-15, chunk 1), where a chunk is 16 bytes of k. That is a0..a3 of
// m16n8k16 (f16/bf16), of m16n8k8 (tf32: one f32 per b16 pair) and of m16n8k32 (s8: four per b16
// pair) alike. For B (n rows) one x4 loads two n-tiles: (n 0-7, chunk 0) (n 0-7, chunk 1)
// (n 8-15, chunk 0) (n 8-15, chunk 1) = b0 b1 of tile 2p, then b0 b1 of tile 2p+1.
#pragma once

#include "compiler/codegen/llvm/emit_context.h"

#include <vector>

namespace tcjit::codegen {

// Per mma tile of the warp (tiles_m of them), its A registers for k-step `ks` (i32, or double
// for f64), raw bits as stored (tf32 rounding happens in the mma emitter).
std::vector<std::vector<llvm::Value *>> emit_load_a_fragments(EmitContext &, llvm::Value *stage,
                                                              int ks);
// Per n-tile of the warp (tiles_n of them), its B registers.
std::vector<std::vector<llvm::Value *>> emit_load_b_fragments(EmitContext &, llvm::Value *stage,
                                                              int ks);
// A 2:4-sparse form's A and B registers for k-step `ks` (kernel_plan.h, fragment_plan): A the
// compressed tile's fragments of the dense twin at ks, B two of the twin's, at 2ks and 2ks + 1:
// by ldmatrix one x4 per n tile (sparse_b_ldmatrix_element), so that its four registers are the
// mma.sp's operand as loaded (two x4 of two n tiles each would need four moves per mma).
std::pair<std::vector<std::vector<llvm::Value *>>, std::vector<std::vector<llvm::Value *>>>
emit_load_sparse_fragments(EmitContext &, llvm::Value *stage, int ks);

} // namespace tcjit::codegen
