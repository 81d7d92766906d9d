// Whether the epilogue's passes are a loop (KernelPlan::epilogue_loop), decided once for both
// backends.
//
// The epilogue works in passes: one mma row-block (tiles_n x acc_regs accumulators) per pass, or
// one column-block for the LLVM backend's staged epilogue of a col-major D (llvm/epilogue.h).
// Unrolled, every accumulator gets its own copy of alpha/beta/bias/activation and its own address
// arithmetic; with an activation of ~30 instructions (gelu's erfc, tanh, sigmoid: ex2.approx,
// rcp.approx and a polynomial) that was most of the kernel's PTX (bf16 128x128x32 w64x64 + bias
// + gelu: 2.0x the PTX of the kernel without activation, 5,579 SASS instructions against
// CUTLASS's 1,915) and of ptxas's time. As a loop (not unrolled: `.pragma "nounroll"`), the
// pass's accumulators are picked by a dispatch on the pass index (CUTLASS's acc2smem does the
// same) and the pass's code is emitted once; the LLVM backend's staged epilogue loops over the
// pass's read-back items too. Measured (ptxas -O3 sm_80, bench/README.md): the loop gives fewer
// SASS instructions for every activation, none and relu included, every output type and the
// exact integer path, with the same main loop and no more than 2 more registers (s8 128x128x64
// w64x64: 255 -> 240, the epilogue no longer sets the register peak). So every epilogue loops.
//
// TCJIT_EPILOGUE_UNROLL=1 in the environment unrolls the passes as before (to measure the
// difference; bench/compile_floor.py); 0 or unset loops; any other value is an error naming it
// (std::runtime_error), not silently one of the two.
#pragma once

#include "compiler/codegen/plan/kernel_plan.h"

namespace tcjit::codegen {

// Whether TCJIT_EPILOGUE_UNROLL asks for the unrolled epilogue ("1"). Throws std::runtime_error
// for a value other than unset, "", "0" or "1".
bool epilogue_unroll_requested();

// Sets p.epilogue_loop (a backend loops where it has more than one pass); throws as above.
void plan_epilogue_loop(KernelPlan &p);

} // namespace tcjit::codegen
