// Entry points of the per-family instruction implementations (one file each). The decoder stores
// one of these in Instr::exec; each handles the lanes set in `mask`.
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
void exec_ldmatrix(ExecContext &ctx, Warp &warp, const Instr &in, uint32_t mask);
void exec_cp_async(ExecContext &ctx, Warp &warp, const Instr &in, uint32_t mask);
void exec_nop(ExecContext &ctx, Warp &warp, const Instr &in, uint32_t mask);

} // namespace tcjit::emu
