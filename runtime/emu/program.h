// The decoded ("compact") form of a PTX module: opcode enums, resolved register indices, symbols
// resolved to addresses, labels resolved to instruction indices. Nothing here is a string at
// execution time except for error messages.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "runtime/device/device.h"

namespace tcjit::emu {

enum class DType : uint8_t {
  None,
  B8,
  B16,
  B32,
  B64,
  B128,
  U8,
  U16,
  U32,
  U64,
  S8,
  S16,
  S32,
  S64,
  F16,
  F16x2,
  BF16,
  BF16x2,
  TF32,
  F32,
  F64,
  Pred,
  S4,
  U4,
  E4M3,
  E5M2,
  B1, // mma's single-bit A/B (.b1): 32 per register, bit i holds element i
};

uint32_t dtype_bytes(DType t);
bool dtype_is_float(DType t);  // F16 F16x2 BF16 BF16x2 TF32 F32 F64
bool dtype_is_signed(DType t); // S8..S64
const char *dtype_name(DType t);

enum class Space : uint8_t { Generic, Global, Shared, Local, Const, ParamKernel, ParamThread };
const char *space_name(Space s);

enum class Round : uint8_t { None, Rn, Rz, Rm, Rp, Rna, Rni, Rzi, Rmi, Rpi };

enum class CmpOp : uint8_t {
  None,
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge,
  Lo,
  Ls,
  Hi,
  Hs,
  Equ,
  Neu,
  Ltu,
  Leu,
  Gtu,
  Geu,
  Num,
  Nan,
};

enum class BoolOp : uint8_t { None, And, Or, Xor };

enum class Op : uint16_t {
  // moves and compares
  Mov,
  Setp,
  Selp,
  Slct,
  // integer and float arithmetic (the family is chosen by the instruction type)
  Add,
  Sub,
  Mul,
  Mad,
  Mul24,
  Mad24,
  Div,
  Rem,
  Min,
  Max,
  Abs,
  Neg,
  Shl,
  Shr,
  Shf,
  Bfe,
  Bfi,
  Prmt,
  Popc,
  Clz,
  Brev,
  Bfind,
  Lop3,
  And,
  Or,
  Xor,
  Not,
  Cnot,
  Sad,
  Fma,
  Rcp,
  Sqrt,
  Rsqrt,
  Ex2,
  Lg2,
  Sin,
  Cos,
  Tanh,
  Copysign,
  Testp,
  // conversions
  Cvt,
  Cvta,
  Cvtpack,
  // memory
  Ld,
  St,
  Prefetch,
  Fence,
  Isspacep,
  Atom,
  Red,
  // control
  Bra,
  Call,
  Ret,
  Exit,
  Trap,
  BarSync,
  BarArrive,
  BarWarpSync,
  Nanosleep,
  // warp collectives
  Shfl,
  Vote,
  Activemask,
  Redux,
  MatchAny,
  MatchAll,
  // tensor core and async copy
  Mma,
  Ldmatrix,
  CpAsync,
  CpAsyncCommit,
  CpAsyncWait,
  CpAsyncWaitAll,
};

// Instruction classes of the per-launch counters.
enum class InstrClass : uint8_t { Integer, Float, Convert, Memory, Mma, Control, Sync, Warp };
constexpr size_t kInstrClassCount = 8;
const char *instr_class_name(InstrClass c);

enum class OperandKind : uint8_t { None, Reg, Imm, Special, Vector };

// Special registers that change while a kernel runs; the per-thread constant ones (%tid, %ctaid,
// %laneid ...) live in reserved registers (see SpecialReg).
enum class DynamicSpecial : uint8_t { Clock, Clock64, GlobalTimer };

// Registers 0..kReservedRegs-1 of every warp hold these values, set when the CTA starts.
enum class SpecialReg : uint32_t {
  TidX,
  TidY,
  TidZ,
  NtidX,
  NtidY,
  NtidZ,
  CtaidX,
  CtaidY,
  CtaidZ,
  NctaidX,
  NctaidY,
  NctaidZ,
  LaneId,
  WarpId,
  NwarpId,
  SmId,
  NsmId,
  GridId,
  LanemaskEq,
  LanemaskLt,
  LanemaskLe,
  LanemaskGt,
  LanemaskGe,
  DynamicSmemSize,
  TotalSmemSize,
  Zero,
  Sink,
  Count,
};
constexpr uint32_t kReservedRegs = static_cast<uint32_t>(SpecialReg::Count);
constexpr uint32_t kSinkReg = static_cast<uint32_t>(SpecialReg::Sink);

struct Operand {
  OperandKind kind = OperandKind::None;
  uint8_t count = 0;    // Vector: element count
  bool negated = false; // !%p
  DynamicSpecial special = DynamicSpecial::Clock;
  uint32_t reg = 0;   // Reg: register; Vector: first index into Program::vector_regs
  uint64_t imm = 0;   // Imm: value bits
  int64_t offset = 0; // address operands: added to the base (Reg) value
};

enum class MulMode : uint8_t { Lo, Hi, Wide };
enum class ShflMode : uint8_t { Up, Down, Bfly, Idx };
enum class VoteMode : uint8_t { All, Any, Uni, Ballot };
enum class AtomOp : uint8_t { Add, Min, Max, Exch, Cas, And, Or, Xor, Inc, Dec };
enum class MmaKind : uint8_t {
  F16_M16N8K16,
  BF16_M16N8K16,
  F16_M16N8K8,
  BF16_M16N8K8,
  TF32_M16N8K8,
  TF32_M16N8K4,
  I8_M16N8K32,
  I8_M16N8K16,
  I4_M16N8K64,
  I4_M16N8K32,
  F64_M8N8K4,
  F8_M16N8K32,  // e4m3/e5m2 A and B (any pair), f32 C/D: sm_89+, PTX 8.4
  B1_M16N8K256, // .b1 with .and.popc / .xor.popc (Instr::bop); no layout table (exec_mma_b1.cpp)
  B1_M16N8K128,
};

struct Instr;
struct ExecContext;
struct Warp;
using ExecFn = void (*)(ExecContext &ctx, Warp &warp, const Instr &in, uint32_t mask);

struct Instr {
  Op op = Op::Mov;
  InstrClass cls = InstrClass::Integer;
  bool is_control = false;    // handled by the executor core (changes PCs or blocks)
  bool is_collective = false; // needs lanes together (bar, shfl, vote, mma, ldmatrix ...)
  ExecFn exec = nullptr;
  DType type = DType::None;  // the instruction type (cvt: destination)
  DType type2 = DType::None; // cvt: source; setp/slct: comparison type; mma: A/B type
  DType type3 = DType::None; // mma: C type
  DType type4 = DType::None; // mma: B type
  Round rnd = Round::None;
  bool ftz = false, sat = false, satfinite = false, approx = false, relu = false;
  bool carry_in = false, carry_out = false; // addc / .cc
  bool trans = false, to_space = false;     // ldmatrix .trans; cvta.to
  bool uni = false;
  MulMode mul = MulMode::Lo;
  CmpOp cmp = CmpOp::None;
  BoolOp bop = BoolOp::None;
  Space space = Space::Generic;
  uint8_t vec = 1;  // .v2/.v4 of ld/st; ldmatrix .num; atom vector
  uint8_t mode = 0; // ShflMode, VoteMode, AtomOp, shf (0 l, 1 r) with wrap flag in bit 1
  MmaKind mma = MmaKind::F16_M16N8K16;
  // mma.sp: the dense K of the shape (0: a dense mma), the sparsity selector, and whether the
  // metadata is .sp::ordered_metadata (src[3] is the metadata register E)
  uint8_t sparse_k = 0;
  uint8_t sparsity_selector = 0;
  bool ordered_metadata = false;
  uint8_t access_bytes = 0; // bytes per element of ld/st/atom
  bool has_guard = false, guard_negated = false;
  uint32_t guard = 0;
  Operand dst, dst2;
  std::array<Operand, 5> src;
  uint32_t target = 0;   // branch target / callee entry
  uint32_t callee = 0;   // Call: function index
  uint32_t line = 0;     // PTX source line
  uint32_t function = 0; // index of the enclosing function
};

// Static and dynamic shared memory of one kernel. Each kernel gets only the .shared variables it
// uses: its own, and the module-scope ones that it or a function it calls references.
struct SharedLayout {
  uint32_t static_bytes = 0;   // end of the kernel's static .shared variables
  uint32_t dynamic_base = 0;   // offset of extern (dynamic) shared memory
  uint32_t dynamic_align = 16; // alignment of extern (dynamic) shared memory
};

struct Function {
  std::string name;
  bool is_entry = false;
  uint32_t entry_pc = 0, end_pc = 0;
  device::KernelInfo info; // entries only
  // Functions: thread-param-scratch offsets of the formal parameters and return values.
  std::vector<uint32_t> param_offsets, param_sizes, return_offsets, return_sizes;
  uint32_t local_bytes = 0; // .local variables of this function (frame)
  uint32_t local_base = 0;  // offset of this function's frame in a thread's local memory
  SharedLayout shared;      // entries only
};

struct GlobalVariable {
  std::string name;
  Space space = Space::Global;
  uint64_t size = 0;
  uint32_t align = 1;
  std::vector<uint8_t> init;
  uint64_t address = 0; // device address (allocated while decoding)
};

struct Program {
  std::string source_name;
  std::vector<Instr> code;
  std::vector<uint32_t> vector_regs;
  std::vector<Function> functions;
  std::unordered_map<std::string, uint32_t> function_index;
  uint32_t num_regs = kReservedRegs; // registers per thread (all functions share one file)
  uint32_t local_bytes = 0;          // per thread, all functions' frames
  uint32_t param_scratch_bytes = 0;  // per thread: call arguments and return values
  std::vector<GlobalVariable> globals;
  std::vector<std::string> opcode_text; // per instruction, for error messages
  // registers holding immediates used inside vector operands ({%r1, 0}), set when a CTA starts
  std::vector<std::pair<uint32_t, uint64_t>> constant_regs;
};

// Declaration limits the loader enforces (docs/emulator.md, "Limits"); beyond them it fails with
// the file, the line and the limit instead of allocating without bound.
// PTX virtual registers are not ptxas's 255 physical ones: generated kernels declare a few
// thousand; the cap keeps one block's register file (64-bit slots x 32 lanes x warps) bounded.
inline constexpr uint64_t kMaxRegistersPerType = 65536;         // per function and register type
inline constexpr uint64_t kMaxRegistersPerModule = 131072;      // all functions share one file
inline constexpr uint64_t kMaxLocalBytesPerThread = 512 * 1024; // CUDA's per-thread limit
// The arch's maximum shared memory per block (opt-in), from `.target sm_XX`: sm_70 96 KiB,
// sm_75 64 KiB, sm_80/sm_87 163 KiB, sm_86/sm_89/sm_12x 99 KiB, sm_90/sm_10x 227 KiB; an
// unknown or missing target gets 227 KiB (the largest).
uint32_t max_shared_bytes_for_target(std::string_view target);

// Decodes PTX text (parse + resolve) into a Program. Throws DeviceError (ModuleLoad) with
// "source:line: what" for anything unsupported.
// allocate_global(size, align) places a .global/.const variable in device memory.
using GlobalAllocator = std::function<uint64_t(uint64_t size, uint32_t align)>;
std::unique_ptr<Program> load_program(std::string_view ptx, std::string_view source_name,
                                      const GlobalAllocator &allocate_global);

} // namespace tcjit::emu
