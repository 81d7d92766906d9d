// What a decode hook works with. The loader's decoder (ptx_decoder.cpp) checks an instruction
// against the instruction table (ptx_checker.h), then calls the decode hook of the instruction's
// entry in that table (ptx_instruction_table.h); each family's hook lives in the family's file
// (exec_*.cpp) and turns the opcode's modifiers and the operands into an Instr, with the
// decoder's name, symbol, label and register services declared here.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "runtime/emu/program.h"
#include "runtime/emu/ptx_ast.h"
#include "runtime/emu/ptx_instruction_table.h"

namespace tcjit::emu {

class Decoder; // ptx_decoder.cpp: the module's names, symbols, labels and registers

// The modifiers of an opcode (the parts after the first '.') that no hook has consumed yet.
struct Modifiers {
  std::vector<std::string> list;

  // Removes `m` when present; says whether it was.
  bool take(std::string_view m);
  // Removes and returns every type modifier (.b32, .f16x2, ...), in order.
  std::vector<DType> take_types();
};

struct DecodeState {
  Decoder &decoder;
  const AstInstruction &ai;
  std::string base;            // the opcode's first part: "add", "cp"
  Modifiers mods;              // the rest, consumed by the hook
  const InstructionForm *form; // the table's form; null for an unchecked instruction
  Instr &in;                   // what the hook fills in
};

// ---- the decoder's services (ptx_decoder.cpp) ----------------------------------------------

// "file:line: what" as a load error.
[[noreturn]] void decode_fail(const DecodeState &s, const std::string &what);
// "unsupported instruction '<opcode>'".
[[noreturn]] void decode_unsupported(const DecodeState &s);
// Fails unless the instruction has lo..hi operands.
void expect_operands(const DecodeState &s, size_t lo, size_t hi);
// Takes the opcode's only type; fails unless there is exactly one.
DType take_one_type(DecodeState &s);
// Fails on the first modifier no hook consumed.
void expect_no_modifiers_left(const DecodeState &s);

// Operand `i` as a value of type `t` (register, immediate, special register, vector).
Operand source_operand(DecodeState &s, size_t i, DType t);
// `a` as a value; a variable's name reads as its address in `symbol_context`.
Operand value_operand(DecodeState &s, const AstOperand &a, DType t, Space symbol_context);
// `a` as a destination register, vector or sink.
Operand dest_operand(DecodeState &s, const AstOperand &a, DType t);
// [reg+off], [symbol+off], [imm]; resolves a .param `space` to the kernel's or the thread's.
Operand address_operand(DecodeState &s, const AstOperand &a, Space &space);
// The instruction index of label `a`.
uint32_t label_target(DecodeState &s, const AstOperand &a);
// The declared type of a register operand (None for anything else).
DType register_type(const DecodeState &s, const Operand &o);
// Whether the function being decoded is a kernel (.entry).
bool decoding_kernel(const DecodeState &s);
// call's operands: the callee, its argument and return-value .param lists.
void decode_call_operands(DecodeState &s);

Operand immediate_operand(uint64_t v);

// ---- modifiers shared by several families -------------------------------------------------

Round take_rounding(Modifiers &m);   // Round::None when absent
CmpOp take_comparison(Modifiers &m); // CmpOp::None when absent
Space take_space(Modifiers &m);      // Space::Generic when absent
// Drops the cache, ordering and scope qualifiers that do not change the emulated result.
void drop_memory_hints(Modifiers &m);

} // namespace tcjit::emu
