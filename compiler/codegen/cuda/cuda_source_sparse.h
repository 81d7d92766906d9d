// A 2:4-sparse A's metadata in the CUDA C++ backend (cuda_source.h), internal to compiler/codegen:
// its copy into the pipeline's stage slots and the warps' metadata registers read back from there,
// printed from the formulas of plan/sparse_metadata.h.
#pragma once

#include "compiler/codegen/plan/kernel_plan.h"

#include <sstream>

namespace tcjit::codegen::cuda_detail {

// `meta_copy(smem, meta, M, K, m0, stage, ktile, tid)`: K-tile `ktile`'s metadata into stage slot
// `stage` (cp.async in the caller's group; tf32's 2-byte units by ld + st), and
// `load_meta(e, stage, ks, warp_m0, g, q)`: the warp's metadata registers of k-step `ks`, one per
// m-tile; and where B is loaded by ldmatrix, `load_b_sparse(f, smem, stage, ks, warp0, lane)`:
// each n tile's four B registers by one ldmatrix.x4. For a plan with a sparse mma only.
void emit_sparse_metadata_functions(std::ostringstream &s, const KernelPlan &p);

} // namespace tcjit::codegen::cuda_detail
