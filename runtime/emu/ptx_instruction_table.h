// One table of the PTX instruction forms the emulator supports: per opcode, the instruction types
// it takes, the modifiers it requires, and each operand's kind (register, immediate, address,
// predicate, label, vector) and type rule. The loader's checker (ptx_checker.cpp) validates every
// instruction against it and the decoder (ptx_decoder.cpp) takes the opcode enum and the operand
// count from the same entry, and calls the entry's decode hook (each family's, in its exec_*.cpp
// file). The rules were confirmed with ptxas -arch=sm_80 (docs/emulator.md,
// "PTX checker"); ptxas is the ground truth, the PTX ISA's type-checking tables the starting point.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string_view>

#include "runtime/emu/program.h"

namespace tcjit::emu {

// A set of DType values (one bit per enumerator).
class TypeSet {
public:
  constexpr TypeSet() = default;
  constexpr TypeSet(std::initializer_list<DType> types) {
    for (DType t : types)
      bits_ |= bit(t);
  }
  constexpr bool has(DType t) const { return (bits_ & bit(t)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr TypeSet operator|(TypeSet o) const { return from_bits(bits_ | o.bits_); }

private:
  static constexpr uint64_t bit(DType t) { return uint64_t{1} << static_cast<unsigned>(t); }
  static constexpr TypeSet from_bits(uint64_t b) {
    TypeSet s;
    s.bits_ = b;
    return s;
  }
  uint64_t bits_ = 0;
};

// What an operand may be, syntactically.
enum class ArgKind : uint8_t {
  Dest,         // a register, `_` allowed
  MovDest,      // mov's destination: a register, or {..} of registers splitting a .bN value
  DestPair,     // a register or `p|q` (setp, shfl: the second is a predicate)
  Src,          // a register or an immediate
  Imm,          // an integer constant only
  Address,      // [reg+off], [symbol+off], [imm]
  Label,        // a branch target
  MovSrc,       // mov's source: register, immediate, a variable's name (its address), or {..}
                // of registers packed into a .bN value
  CvtaSrc,      // cvta's source: a register, or (not .to) a variable of the state space
  Data,         // ld/st data: a register, or {..} with the form's vector arity (st: immediates too)
  Fragment,     // mma's A, B, C: {..} of the registers holding OperandSpec::values elements of
                // the rule's type per thread (sub-32-bit elements packed into 32-bit registers)
  DestFragment, // mma's D, ldmatrix's destination: a Fragment of registers (`_` allowed)
  SharedAddress,    // cp.async's destination: an address in .shared
  GlobalAddress,    // cp.async's source: an address in .global (any integer register)
  SparseMetadata,   // mma.sp's metadata: a 32-bit or .pred register (or {..} of one), no constant
  SparsitySelector, // mma.sp's sparsity selector: an integer constant 0..OperandSpec::values
};

// Which type an operand must agree with.
enum class TypeRule : uint8_t {
  Type,      // the instruction type, strict (PTX ISA "type checking rules")
  Type2,     // the second instruction type, strict (slct selector, cvt packing sources)
  Type3,     // the third (mma: B)
  Type4,     // the fourth (mma: C)
  Wide,      // twice the size of the instruction type (mul.wide d, mad.wide c)
  Relaxed,   // ld/st/cvt destination/data: the register may be wider than the instruction type
  Relaxed2,  // cvt's source: as Relaxed, for the source type
  Pred,      // .pred
  U32,       // a 32-bit integer (b32/u32/s32)
  U64,       // a 64-bit integer (b64/u64/s64)
  B32,       // any 32-bit register
  AddressOf, // cvta: an integer register of the instruction type's size (u32/u64)
  SizeOrIgnoreSrc, // cp.async: a 32-bit integer (src-size), or a .pred (ignore-src, PTX ISA 7.5)
  None,            // no type (labels, addresses checked by their own rules)
};

// A modifier the form needs (ptxas refuses the instruction without it), or a rule between its
// instruction types.
enum class Requires : uint8_t {
  Nothing,
  IntMulMode,          // integer types: .lo, .hi or .wide (mul, mad)
  IntHalfMode,         // .lo or .hi (mul24, mad24)
  FloatRounding,       // f32/f64: a rounding mode (fma, mad)
  RoundOrApprox,       // f32: a rounding mode or .approx (.full for div); f64: a rounding mode
  Approx,              // .approx (sin cos lg2 ex2.f32 rsqrt tanh)
  CvtRounding,         // cvt: float<->int and narrowing float conversions need a rounding mode
  SameAccumulatorType, // mma: .dtype equals .ctype
};

// Modifier classes a form allows (InstructionForm::mods); the checker also applies each class's
// type rule (e.g. .ftz only with .f32, rounding only with float types).
namespace mods {
inline constexpr uint16_t kRound = 1 << 0;    // .rn .rz .rm .rp (float types)
inline constexpr uint16_t kIntRound = 1 << 1; // .rni .rzi .rmi .rpi (cvt)
inline constexpr uint16_t kFtz = 1 << 2;      // .ftz (.f32; halves where kFtzHalf)
inline constexpr uint16_t kFtzHalf = 1 << 3;  // .ftz also with .f16/.f16x2
inline constexpr uint16_t kSat = 1 << 4;      // .sat (.f32, halves; .s32 where kSatS32)
inline constexpr uint16_t kSatS32 = 1 << 5;   // .sat also with .s32
inline constexpr uint16_t kCc = 1 << 6;       // .cc (32/64-bit integers)
inline constexpr uint16_t kApprox = 1 << 7;   // .approx
inline constexpr uint16_t kFull = 1 << 8;     // .full (div.f32)
inline constexpr uint16_t kNaN = 1 << 9;      // .NaN (min/max of floats)
inline constexpr uint16_t kRelu = 1 << 10;    // .relu (min/max of halves, cvt to halves)
inline constexpr uint16_t kLoHi = 1 << 11;    // .lo .hi (integer types)
inline constexpr uint16_t kSpace = 1 << 12;   // a state space (see InstructionForm::spaces)
} // namespace mods

// State spaces as bits (InstructionForm::spaces), indexed by Space.
constexpr uint8_t space_bit(Space s) {
  return static_cast<uint8_t>(1u << static_cast<unsigned>(s));
}

struct OperandSpec {
  ArgKind kind = ArgKind::Src;
  TypeRule rule = TypeRule::Type;
  const char *role = "";
  uint8_t values = 0; // Fragment: elements per thread; SparsitySelector: the largest value
};

struct DecodeState; // instruction_decode.h
// A decode hook: turns one checked instruction into an Instr (instruction_decode.h).
using DecodeFn = void (*)(DecodeState &state);

struct InstructionForm {
  std::string_view opcode;   // the first part of the opcode: "add", "ld"
  std::string_view when;     // the modifiers that select this form, '.'-separated ("wide",
                             // "m16n8k16.f16"): all must be present; "" default
  Op op = Op::Mov;           // what the decoder emits
  DecodeFn decode = nullptr; // the family's decode hook
  uint8_t type_count = 1;    // instruction types in the opcode (cvt and slct 2, bra 0)
  TypeSet types;             // the first instruction type
  TypeSet types2;            // the second (cvt source, slct selector, mma A)
  TypeSet types3;            // the third (mma B)
  TypeSet types4;            // the fourth (mma C)
  TypeSet sm90_types;        // of `types`, those that need .target sm_90 or later
  Requires requires_mod = Requires::Nothing;
  uint16_t mods = 0;        // modifier classes allowed (mods::k...)
  uint8_t spaces = 0;       // state spaces allowed (space_bit), with mods::kSpace
  uint8_t min_operands = 0; // trailing operands past min_operands are optional
  uint8_t max_operands = 0;
  OperandSpec operands[6] = {};
};

// The forms of `opcode` (empty when the emulator does not know the instruction).
std::span<const InstructionForm> instruction_forms(std::string_view opcode);

// The form of `opcode` selected by `modifiers` (the parts after the first '.'): the first form
// whose `when` modifiers are all among them, else the default form. Null when the opcode is
// unknown or has no form for these modifiers.
const InstructionForm *select_form(std::string_view opcode,
                                   std::span<const std::string_view> modifiers);

// An instruction the decoder supports without operand rules in the table (the checker passes it
// through): its decode hook validates what it needs.
struct UncheckedInstruction {
  std::string_view opcode;
  DecodeFn decode = nullptr;
};

// The unchecked instruction `opcode`, or null.
const UncheckedInstruction *unchecked_instruction(std::string_view opcode);

// Whether `modifier` is one of the '.'-separated modifiers of a form's `when`.
bool form_selected_by(std::string_view when, std::string_view modifier);

// The types an atom/red operation (.add, .cas, ...) takes; null for an unknown operation.
const TypeSet *atomic_operation_types(std::string_view operation);

// The register types a fragment of `element`s (ArgKind::Fragment) may be held in, after the
// vector's elements are merged into one type (ptxas -arch=sm_80).
TypeSet fragment_registers(DType element);
// The same for mma.sp, where ptxas (CUDA 13) is looser: .bf16, .tf32 and .f32 fragments take any
// 32-bit register or a .pred, as 8-bit ones do.
TypeSet sparse_fragment_registers(DType element);

// "b32", "f16x2", ... without the dot.
std::optional<DType> dtype_from_name(std::string_view name);

// Type sets used by the table and by the checker's messages.
namespace types {
inline constexpr TypeSet kBits = {DType::B16, DType::B32, DType::B64};
inline constexpr TypeSet kUnsigned = {DType::U16, DType::U32, DType::U64};
inline constexpr TypeSet kSigned = {DType::S16, DType::S32, DType::S64};
inline constexpr TypeSet kInt = kUnsigned | kSigned;
inline constexpr TypeSet kFloat = {DType::F32, DType::F64};
inline constexpr TypeSet kHalf = {DType::F16, DType::F16x2, DType::BF16, DType::BF16x2};
} // namespace types

} // namespace tcjit::emu
