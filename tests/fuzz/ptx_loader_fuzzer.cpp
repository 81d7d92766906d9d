// Fuzz target: the emulator's PTX loader (runtime/emu: lexer, parser, decoder and its checks).
// Any bytes are loaded as a module with load_program(), as EmuDevice::load_module does, but
// nothing is executed and no device memory is allocated: .global/.const variables get addresses
// from a counter, with GlobalMemory::allocate's 1 TiB limit. The only acceptable outcomes are a
// Program whose indices are all in range (check_program) or a DeviceError of kind ModuleLoad (or
// OutOfMemory from the allocator) with a message; any other exception, a crash or a hang is a
// bug.
#include "fuzz_check.h"

#include "runtime/device/device.h"
#include "runtime/emu/program.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace {

using tcjit::fuzz::require;

// What the executor relies on without checking again: every index in the decoded program is in
// range (registers, vector operands, branch and call targets, functions), and variables'
// initializers fit them.
void check_program(const tcjit::emu::Program &prog) {
  using tcjit::emu::Op;
  using tcjit::emu::Operand;
  using tcjit::emu::OperandKind;
  const size_t n = prog.code.size();
  auto operand_ok = [&](const Operand &o) {
    if (o.kind == OperandKind::Reg)
      return o.reg < prog.num_regs;
    if (o.kind != OperandKind::Vector)
      return true;
    if (size_t{o.reg} + o.count > prog.vector_regs.size())
      return false;
    for (uint32_t i = 0; i < o.count; ++i)
      if (prog.vector_regs[o.reg + i] >= prog.num_regs)
        return false;
    return true;
  };
  for (size_t pc = 0; pc < n; ++pc) {
    const tcjit::emu::Instr &in = prog.code[pc];
    const std::string where = "instruction " + std::to_string(pc) + " at line " +
                              std::to_string(in.line) +
                              (pc < prog.opcode_text.size() ? " " + prog.opcode_text[pc] : "");
    require(in.function < prog.functions.size(), "an instruction of no function", where);
    require(in.exec != nullptr || in.is_control, "an instruction without an implementation", where);
    if (in.op == Op::Bra || in.op == Op::Call)
      require(in.target < n, "a branch or call target outside the code", where);
    if (in.op == Op::Call)
      require(in.callee < prog.functions.size(), "a call of no function", where);
    require(!in.has_guard || in.guard < prog.num_regs, "a guard register out of range", where);
    bool ok = operand_ok(in.dst) && operand_ok(in.dst2);
    for (const Operand &o : in.src)
      ok = ok && operand_ok(o);
    require(ok, "an operand register out of range", where);
  }
  for (const tcjit::emu::Function &f : prog.functions)
    require(f.entry_pc <= f.end_pc && f.end_pc <= n, "a function's code outside the program",
            f.name);
  for (const tcjit::emu::GlobalVariable &g : prog.globals)
    require(g.init.size() <= g.size, "a variable's initializer larger than the variable", g.name);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using tcjit::device::DeviceError;
  using tcjit::device::ErrorKind;
  const std::string_view ptx(reinterpret_cast<const char *>(data), size);

  uint64_t next = 0x1000'0000;
  const tcjit::emu::GlobalAllocator allocate = [&](uint64_t bytes, uint32_t align) -> uint64_t {
    if (bytes > (uint64_t{1} << 40))
      throw DeviceError(ErrorKind::OutOfMemory, "fuzz allocator: more than 1 TiB");
    const uint64_t a = align < 256 ? 256 : align;
    const uint64_t base = (next + a - 1) / a * a;
    next = base + bytes + 4096;
    return base;
  };
  try {
    std::unique_ptr<tcjit::emu::Program> program =
        tcjit::emu::load_program(ptx, "fuzz.ptx", allocate);
    require(program != nullptr, "load_program returned no program");
    check_program(*program);
  } catch (const DeviceError &e) {
    require(e.kind() == ErrorKind::ModuleLoad || e.kind() == ErrorKind::OutOfMemory,
            "load_program threw a DeviceError of an unexpected kind", e.what());
    require(std::string_view(e.what()).size() > 0, "a DeviceError without a message");
  }
  return 0;
}
