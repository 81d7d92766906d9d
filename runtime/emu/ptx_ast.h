// The parsed (not yet decoded) form of a PTX module: names are still strings.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tcjit::emu {

struct AstOperand {
  enum class Kind {
    Name,    // register, special register, symbol or label: %r1, %tid.x, smem, $L__BB0_2
    Integer, // 12, -1, 0xFF
    Float,   // 0f3F800000 (f32 bits), 0d... (f64 bits), 1.5
    Address, // [name], [name+imm], [imm]
    Vector,  // {a, b, c, d}; elements may be Sink
    Pair,    // a|b (e.g. the value and predicate outputs of shfl.sync)
    List,    // (a, b): call arguments
    Sink,    // _
  };
  Kind kind = Kind::Name;
  std::string name;               // Name, Address base ("" when the address is an immediate)
  bool negated = false;           // !%p
  uint64_t int_value = 0;         // Integer (two's complement), Address offset
  bool float_is_f32_bits = false; // Float: 0f literal
  bool float_is_f64_bits = false; // Float: 0d literal
  uint64_t float_bits = 0;
  double float_value = 0;           // Float: decimal literal
  std::vector<AstOperand> elements; // Vector, Pair, List
};

struct AstInstruction {
  int line = 0;
  std::string guard; // predicate register name, "" when unguarded
  bool guard_negated = false;
  std::string opcode; // full opcode with modifiers: "ld.global.v4.f32"
  std::vector<AstOperand> operands;
  std::string operand_error; // set when the operands did not parse (reported by the decoder)
};

enum class AstSpace { Reg, Global, Shared, Const, Local, Param };

struct AstVariable {
  int line = 0;
  AstSpace space = AstSpace::Global;
  std::string type;    // ".b8", ".f32", ...
  uint32_t vector = 1; // .v2 / .v4
  uint32_t align = 0;  // 0: natural alignment of the type
  std::string name;
  bool is_array = false;
  uint64_t array_count = 0; // 0 with is_array: unsized ([]), e.g. extern dynamic shared memory
  bool is_extern = false;
  std::vector<AstOperand> init; // initializer elements (Integer or Float), flattened
  bool has_range = false;       // .reg %r<N>
  uint64_t range = 0;
};

struct AstStatement {
  enum class Kind { Instruction, Label, Variable, OpenScope, CloseScope };
  Kind kind = Kind::Instruction;
  int line = 0;
  std::string label;
  AstInstruction instruction;
  AstVariable variable;
};

struct AstFunction {
  int line = 0;
  bool is_entry = false;
  bool has_body = false;
  std::string name;
  std::vector<AstVariable> params;
  std::vector<AstVariable> returns;
  std::vector<AstStatement> body;
};

struct AstModule {
  std::string source_name;
  std::string version; // "8.5"
  std::string target;  // "sm_80"
  uint32_t address_size = 64;
  std::vector<AstVariable> globals; // .global/.shared/.const at module scope
  std::vector<AstFunction> functions;
};

} // namespace tcjit::emu
