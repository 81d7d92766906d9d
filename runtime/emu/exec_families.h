// Entry points of the per-family instruction implementations (one file each): the decode hooks
// that the instruction table (ptx_instruction_table.cpp) names for each opcode, and the exec
// functions the hooks store in Instr::exec; each exec function handles the lanes set in `mask`.
#pragma once

#include <cstdint>

#include "runtime/emu/program.h"

namespace tcjit::emu {

void exec_move(ExecContext &ctx, Warp &warp, const Instr &in, uint32_t mask);    // mov
void exec_compare(ExecContext &ctx, Warp &warp, const Instr &in, uint32_t mask); // setp selp slct
void exec_integer(ExecContext &ctx, Warp &warp, const Instr &in, uint32_t mask);
void exec_float(ExecContext &ctx, Warp &warp, const Instr &in, uint32_t mask);   // f32 f64
void exec_half(ExecContext &ctx, Warp &warp, const Instr &in, uint32_t mask);    // f16 bf16 (x2)
void exec_convert(ExecContext &ctx, Warp &warp, const Instr &in, uint32_t mask); // cvt cvta
void exec_memory(ExecContext &ctx, Warp &warp, const Instr &in, uint32_t mask);  // ld st ...
void exec_atomic(ExecContext &ctx, Warp &warp, const Instr &in, uint32_t mask);  // atom red
void exec_warp(ExecContext &ctx, Warp &warp, const Instr &in, uint32_t mask);    // shfl vote ...
void exec_mma(ExecContext &ctx, Warp &warp, const Instr &in, uint32_t mask);
void exec_mma_sparse(ExecContext &ctx, Warp &warp, const Instr &in, uint32_t mask);
void exec_ldmatrix(ExecContext &ctx, Warp &warp, const Instr &in, uint32_t mask);
void exec_cp_async(ExecContext &ctx, Warp &warp, const Instr &in, uint32_t mask);
void exec_nop(ExecContext &ctx, Warp &warp, const Instr &in, uint32_t mask);

struct DecodeState; // instruction_decode.h

void decode_move(DecodeState &s); // exec_move.cpp: mov
void decode_setp(DecodeState &s); // exec_compare.cpp
void decode_selp(DecodeState &s);
void decode_slct(DecodeState &s);
// exec_integer.cpp: the arithmetic of every numeric type (the type picks exec_integer,
// exec_float or exec_half), with the integer instructions' own modifiers
void decode_arithmetic(DecodeState &s);
void decode_arithmetic_modifiers(DecodeState &s); // the shared part, without the operands
void decode_shf(DecodeState &s);
void decode_prmt(DecodeState &s);
void decode_bfind(DecodeState &s);
void decode_testp(DecodeState &s); // exec_float.cpp
void decode_cvt(DecodeState &s);   // exec_convert.cpp
void decode_cvta(DecodeState &s);
void decode_load_store(DecodeState &s); // exec_memory.cpp: ld ldu st
void decode_isspacep(DecodeState &s);
void decode_prefetch(DecodeState &s);
void decode_cache_hint(DecodeState &s); // prefetchu discard applypriority
void decode_createpolicy(DecodeState &s);
void decode_atomic(DecodeState &s); // exec_atomic.cpp: atom red
void decode_shfl(DecodeState &s);   // exec_warp.cpp
void decode_vote(DecodeState &s);
void decode_activemask(DecodeState &s);
void decode_redux(DecodeState &s);
void decode_match(DecodeState &s);
void decode_mma(DecodeState &s);        // exec_mma.cpp
void decode_mma_sparse(DecodeState &s); // exec_mma_sparse.cpp
void decode_ldmatrix(DecodeState &s);   // exec_ldmatrix.cpp
void decode_cp_async(DecodeState &s);   // exec_cp_async.cpp: cp.async and its groups
void decode_branch(DecodeState &s);     // executor.cpp (control): bra
void decode_call(DecodeState &s);
void decode_return(DecodeState &s);  // ret exit trap brkpt
void decode_barrier(DecodeState &s); // bar barrier
void decode_fence(DecodeState &s);   // membar fence
void decode_nanosleep(DecodeState &s);
void decode_griddepcontrol(DecodeState &s);

} // namespace tcjit::emu
