// The loader's PTX checker: validates one parsed instruction against the instruction table
// (ptx_instruction_table.h) the way ptxas does: the instruction types, required modifiers, the
// operand count and kinds, each operand's type and width, vector arity and state spaces. A
// violation throws DeviceError (ModuleLoad) "file:line: <ptxas's words> for instruction '...':
// <which operand, what it is, what the instruction needs>".
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "runtime/emu/program.h"
#include "runtime/emu/ptx_ast.h"
#include "runtime/emu/ptx_instruction_table.h"

namespace tcjit::emu {

// What a name in an operand denotes, as the decoder's scopes know it.
struct CheckedName {
  enum class Kind { Unknown, Register, Special, Variable };
  Kind kind = Kind::Unknown;
  DType type = DType::None;    // Register, Special: the declared type
  Space space = Space::Global; // Variable: its state space (ParamKernel for any .param)
};

struct CheckContext {
  std::string_view source_name;
  int sm_version = 0;  // from .target sm_XY (0: none)
  int ptx_version = 0; // 75 for .version 7.5 (0: none: no version checks)
  std::function<CheckedName(const std::string &)> lookup;
};

// Checks `ai`; throws on a violation. Returns the table's form of the instruction, or null when
// the table has none for its opcode and modifiers (the decoder then handles it: call, ret,
// fence, ... and the unsupported ones).
const InstructionForm *check_instruction(const AstInstruction &ai, const CheckContext &ctx);

// 80 for "sm_80", 90 for "sm_90a"; 0 when `target` is not sm_<digits>.
int sm_version_of(std::string_view target);

} // namespace tcjit::emu
