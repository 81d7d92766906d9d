// A 2:4-sparse A's metadata in the LLVM backend: its copy into the pipeline's stage slots and the
// warps' metadata registers read back from there (plan/sparse_metadata.h: the layout and formulas).
#pragma once

#include "compiler/codegen/llvm/emit_context.h"

#include <vector>

namespace tcjit::codegen {

// Where a 2:4-sparse A's metadata lies (docs/dsl.md): `base` (ptr addrspace(1)) is the batch's
// metadata, after its M x lda compressed values at the next 16-byte boundary; row m's K / 8 bytes
// start at m * (K / 8).
struct SparseMetadataArgs {
  llvm::Value *base = nullptr;
  llvm::Value *m = nullptr, *k = nullptr; // i32 M and K (dense)
  llvm::Value *m0 = nullptr;              // i32: the CTA's first row
};
SparseMetadataArgs sparse_metadata_args(EmitContext &, llvm::Value *a_base, llvm::Value *lda,
                                        llvm::Value *m, llvm::Value *k, llvm::Value *m0);

// Copies the metadata of K-tile `ktile` (i32) into stage slot `stage` (i32): cp.async for units
// of 4 and 8 bytes (in the group the caller commits with A and B), ld.global + st.shared for
// tf32's 2-byte units. Units outside the matrix are copied from the batch's first one.
void emit_sparse_metadata_copy(EmitContext &, const SparseMetadataArgs &, llvm::Value *stage,
                               llvm::Value *ktile);

// The warp's metadata registers (i32) of k-step `ks` in stage `stage`, one per m-tile.
std::vector<llvm::Value *> emit_load_sparse_metadata(EmitContext &, llvm::Value *stage, int ks);

} // namespace tcjit::codegen
