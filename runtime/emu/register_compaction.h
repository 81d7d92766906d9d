// Register slots shared by PTX registers whose live ranges never overlap. PTX registers are
// virtual and LLVM's PTX is close to SSA: a generated GEMM declares a few thousand (3,000 x 32
// lanes x 8 bytes: 768 KiB per warp, more than a core's L2 per block), of which a few hundred hold
// a value at any one point. Each register's live range is bounded by an interval of instruction
// indices, [first access, last access], widened to every loop (backward branch) it touches until
// nothing changes; registers whose intervals are disjoint share a slot (linear scan). The interval
// is conservative: per thread (each lane has its own slots) a register holds its value from its
// first write through its last read, along any path of the code between them, and a loop that
// reaches a register's accesses may carry its value around. A register first accessed by a read
// (or a predicated write), which a thread may read before writing it, keeps a slot of its own, so
// it reads 0 as before. Programs with calls keep one slot per register (a callee's registers
// live while the caller's wait).
#pragma once

#include "runtime/emu/program.h"

namespace tcjit::emu {

// Renumbers prog's registers (operands, vector operands, constant registers, num_regs); the
// reserved registers (SpecialReg) keep their numbers.
void compact_registers(Program &prog);

} // namespace tcjit::emu
