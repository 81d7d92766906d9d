// Whether the epilogue's passes are a loop (KernelPlan::epilogue_loop), decided once for both
// backends.
//
// The epilogue works in passes: one mma row-block (tiles_n x acc_regs accumulators) per pass, or
// one column-block for the LLVM backend's staged epilogue of a col-major D (llvm/epilogue.h).
// Unrolled, every accumulator gets its own copy of alpha/beta/bias/activation; for an activation
// of ~30 instructions (gelu's erfc, tanh, sigmoid: ex2.approx, rcp.approx and a polynomial) that
// is most of the kernel's PTX (bf16 128x128x32 w64x64 + bias + gelu: 2.0x the PTX of the kernel
// without activation) and of ptxas's time. As a loop (not unrolled: `.pragma "nounroll"`), the
// pass's accumulators are picked by a dispatch on the pass index (CUTLASS's acc2smem does the
// same) and the computation is emitted once. Activations that are a select or nothing (none,
// relu) stay unrolled: their epilogue is loads, stores and address arithmetic, which the loop
// would not shorten much but would keep every accumulator live to the end.
#pragma once

#include "compiler/codegen/plan/kernel_plan.h"

namespace tcjit::codegen {

// True for the activations whose per-value code is longer than a loop's dispatch: every one but
// none and relu (custom: unknown, so assumed long).
bool activation_is_heavy(Activation);

// Sets p.epilogue_loop: a heavy activation (a backend loops where it has more than one pass).
void plan_epilogue_loop(KernelPlan &p);

} // namespace tcjit::codegen
