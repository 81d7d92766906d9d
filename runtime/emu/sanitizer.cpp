// Error reports of the always-on sanitizer: every fault names the kernel, the PTX line, the
// instruction, the block and the thread (or warp).
#include <cstdio>

#include "runtime/emu/exec_context.h"

namespace tcjit::emu {

std::string hex_address(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

void fault(const ExecContext &ctx, const Warp &warp, const Instr &in, int lane,
           const std::string &what) {
  const Program &prog = *ctx.program;
  const Cta &cta = *ctx.cta;
  const device::Dim3 &block = ctx.launch->config.block;
  size_t index = static_cast<size_t>(&in - prog.code.data());
  std::string where = "kernel '" + ctx.launch->kernel->name + "'";
  const Function &fn = prog.functions[in.function];
  if (!fn.is_entry)
    where += " (in function '" + fn.name + "')";
  where += " at " + prog.source_name + ":" + std::to_string(in.line);
  if (index < prog.opcode_text.size())
    where += " (" + prog.opcode_text[index] + ")";
  where += ", block (" + std::to_string(cta.id.x) + "," + std::to_string(cta.id.y) + "," +
           std::to_string(cta.id.z) + ")";
  if (lane >= 0) {
    uint32_t t = thread_index(warp, static_cast<uint32_t>(lane));
    where += " thread (" + std::to_string(t % block.x) + "," +
             std::to_string(t / block.x % block.y) + "," + std::to_string(t / (block.x * block.y)) +
             ")";
  } else {
    where += " warp " + std::to_string(warp.index) + " (threads " +
             std::to_string(warp.index * 32) + ".." + std::to_string(warp.index * 32 + 31) + ")";
  }
  throw EmuFault{"emulator sanitizer: " + where + ": " + what};
}

} // namespace tcjit::emu
