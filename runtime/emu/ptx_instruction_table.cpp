// The instruction forms the emulator supports, with the operand rules ptxas -arch=sm_80 applies
// (each confirmed on small PTX files; see docs/emulator.md, "PTX checker").
#include "runtime/emu/ptx_instruction_table.h"

#include "runtime/emu/exec_families.h"

#include <algorithm>
#include <array>

namespace tcjit::emu {

namespace {

using enum DType;
using types::kBits;
using types::kFloat;
using types::kInt;
using types::kSigned;
using types::kUnsigned;

constexpr TypeSet kInt32_64 = {U32, U64, S32, S64};
constexpr TypeSet kHalf = {F16, F16x2, BF16, BF16x2};
constexpr TypeSet kBf16 = {BF16, BF16x2};
constexpr TypeSet kMemTypes = {B8, B16, B32, B64, U8, U16, U32, U64, S8, S16, S32, S64, F32, F64};
constexpr TypeSet kCvtTypes = {U8, U16, U32, U64, S8, S16, S32, S64, F16, BF16, F32, F64};
constexpr TypeSet kMovTypes = kBits | kInt | kFloat | TypeSet{Pred};
constexpr TypeSet kCompareTypes = kBits | kInt | kFloat;

constexpr OperandSpec d{ArgKind::Dest, TypeRule::Type, "destination"};
constexpr OperandSpec a{ArgKind::Src, TypeRule::Type, "a"};
constexpr OperandSpec b{ArgKind::Src, TypeRule::Type, "b"};
constexpr OperandSpec c{ArgKind::Src, TypeRule::Type, "c"};
constexpr OperandSpec pred_d{ArgKind::Dest, TypeRule::Pred, "destination"};
constexpr OperandSpec u32_d{ArgKind::Dest, TypeRule::U32, "destination"};
constexpr OperandSpec mask{ArgKind::Src, TypeRule::U32, "membermask"};

constexpr OperandSpec src(const char *role, TypeRule rule = TypeRule::Type) {
  return {ArgKind::Src, rule, role};
}

constexpr InstructionForm form(std::string_view opcode, Op op, DecodeFn decode, TypeSet types,
                               std::initializer_list<OperandSpec> operands,
                               Requires req = Requires::Nothing, TypeSet sm90 = {}) {
  InstructionForm f;
  f.opcode = opcode;
  f.op = op;
  f.decode = decode;
  f.types = types;
  f.sm90_types = sm90;
  f.requires_mod = req;
  uint8_t n = 0;
  for (const OperandSpec &o : operands)
    f.operands[n++] = o;
  f.min_operands = n;
  f.max_operands = n;
  return f;
}

constexpr InstructionForm when(std::string_view modifier, InstructionForm f) {
  f.when = modifier;
  return f;
}

constexpr InstructionForm optional_from(uint8_t min_operands, InstructionForm f) {
  f.min_operands = min_operands;
  return f;
}

constexpr InstructionForm two_types(TypeSet types2, InstructionForm f) {
  f.type_count = 2;
  f.types2 = types2;
  return f;
}

constexpr InstructionForm no_type(InstructionForm f) {
  f.type_count = 0;
  return f;
}

constexpr InstructionForm allow(uint16_t m, InstructionForm f) {
  f.mods = m;
  return f;
}

constexpr InstructionForm in_spaces(std::initializer_list<Space> spaces, InstructionForm f) {
  f.mods |= mods::kSpace;
  for (Space s : spaces)
    f.spaces |= space_bit(s);
  return f;
}

// mma.sync.aligned.<shape>.row.col{.satfinite}.<d>.<a>.<b>.<c> {D}, {A}, {B}, {C}, selected by
// `shape_and_type` ("m16n8k16.f16"): per thread, `a_values` elements of A, `b_values` of B and
// `cd_values` of C and D.
constexpr InstructionForm mma(std::string_view shape_and_type, TypeSet d, TypeSet ab, TypeSet c,
                              uint8_t a_values, uint8_t b_values, uint8_t cd_values,
                              Requires req = Requires::Nothing) {
  InstructionForm f = form("mma", Op::Mma, decode_mma, d,
                           {{ArgKind::DestFragment, TypeRule::Type, "D", cd_values},
                            {ArgKind::Fragment, TypeRule::Type2, "A", a_values},
                            {ArgKind::Fragment, TypeRule::Type3, "B", b_values},
                            {ArgKind::Fragment, TypeRule::Type4, "C", cd_values}},
                           req);
  f.when = shape_and_type;
  f.type_count = 4;
  f.types2 = ab;
  f.types3 = ab;
  f.types4 = c;
  return f;
}

// mma.sp{::ordered_metadata}.sync.aligned.<shape>.row.col{.satfinite}.<d>.<a>.<b>.<c> {D}, {A},
// {B}, {C}, E, selector, selected by `when` ("sp.m16n8k16.f16"): A's `a_values` are the kept
// (compressed) elements per thread; ptxas takes selectors 0..`max_selector` (CUDA 13: 0..3 for
// m16n8k32 .f16, where the PTX ISA defines 0 and 1 only; the emulator faults on 2 and 3).
constexpr InstructionForm mma_sp(std::string_view when, TypeSet d, TypeSet ab, TypeSet c,
                                 uint8_t a_values, uint8_t b_values, uint8_t cd_values,
                                 uint8_t max_selector, Requires req = Requires::Nothing) {
  InstructionForm f =
      form("mma", Op::Mma, decode_mma_sparse, d,
           {{ArgKind::DestFragment, TypeRule::Type, "D", cd_values},
            {ArgKind::Fragment, TypeRule::Type2, "A", a_values},
            {ArgKind::Fragment, TypeRule::Type3, "B", b_values},
            {ArgKind::Fragment, TypeRule::Type4, "C", cd_values},
            {ArgKind::SparseMetadata, TypeRule::None, "metadata"},
            {ArgKind::SparsitySelector, TypeRule::None, "sparsity selector", max_selector}},
           req);
  f.when = when;
  f.type_count = 4;
  f.types2 = ab;
  f.types3 = ab;
  f.types4 = c;
  return f;
}

// ldmatrix.sync.aligned.m8n8.<num>{.trans}{.shared}.b16 {d..}, [a]: `values` b16 elements per
// thread (two per register).
constexpr InstructionForm ldmatrix(std::string_view num, uint8_t values) {
  InstructionForm f = form("ldmatrix", Op::Ldmatrix, decode_ldmatrix, {DType::B16},
                           {{ArgKind::DestFragment, TypeRule::Type, "destination", values},
                            {ArgKind::Address, TypeRule::None, "address"}});
  f.when = num;
  f.mods |= mods::kSpace;
  f.spaces = space_bit(Space::Generic) | space_bit(Space::Shared);
  return f;
}

using namespace mods;
constexpr uint16_t kArith = kRound | kFtz | kFtzHalf | kSat;
constexpr TypeSet kSetpTypes = kCompareTypes | TypeSet{F16, F16x2, BF16, BF16x2};
constexpr OperandSpec pair_d{ArgKind::DestPair, TypeRule::Pred, "destination"};
constexpr OperandSpec address{ArgKind::Address, TypeRule::None, "address"};
constexpr std::initializer_list<Space> kAllSpaces = {
    Space::Generic, Space::Global, Space::Shared, Space::Local, Space::Const, Space::ParamKernel};

// clang-format off
const InstructionForm kForms[] = {
    // data movement and selection
    form("mov", Op::Mov, decode_move, kMovTypes,
         {{ArgKind::MovDest, TypeRule::Type, "destination"},
          {ArgKind::MovSrc, TypeRule::Type, "source"}}),
    when("and", allow(kFtz | kFtzHalf, form("setp", Op::Setp, decode_setp, kSetpTypes, {pair_d, a, b, src("c", TypeRule::Pred)}))),
    when("or", allow(kFtz | kFtzHalf, form("setp", Op::Setp, decode_setp, kSetpTypes, {pair_d, a, b, src("c", TypeRule::Pred)}))),
    when("xor", allow(kFtz | kFtzHalf, form("setp", Op::Setp, decode_setp, kSetpTypes, {pair_d, a, b, src("c", TypeRule::Pred)}))),
    allow(kFtz | kFtzHalf, form("setp", Op::Setp, decode_setp, kSetpTypes, {pair_d, a, b})),
    form("selp", Op::Selp, decode_selp, kCompareTypes, {d, a, b, src("c", TypeRule::Pred)}),
    allow(kFtz, two_types({S32, F32}, form("slct", Op::Slct, decode_slct, kCompareTypes, {d, a, b, src("c", TypeRule::Type2)}))),

    // integer and floating-point arithmetic
    allow(kArith | kSatS32 | kCc, form("add", Op::Add, decode_arithmetic, kInt | kFloat | kHalf, {d, a, b}, Requires::Nothing, kBf16)),
    allow(kArith | kSatS32 | kCc, form("sub", Op::Sub, decode_arithmetic, kInt | kFloat | kHalf, {d, a, b}, Requires::Nothing, kBf16)),
    allow(kCc, form("addc", Op::Add, decode_arithmetic, kInt32_64, {d, a, b})),
    allow(kCc, form("subc", Op::Sub, decode_arithmetic, kInt32_64, {d, a, b})),
    when("wide", form("mul", Op::Mul, decode_arithmetic, {U16, U32, S16, S32}, {{ArgKind::Dest, TypeRule::Wide, "destination"}, a, b})),
    allow(kArith | kLoHi, form("mul", Op::Mul, decode_arithmetic, kInt | kFloat | kHalf, {d, a, b}, Requires::IntMulMode, kBf16)),
    when("wide", form("mad", Op::Mad, decode_arithmetic, {U16, U32, S16, S32}, {{ArgKind::Dest, TypeRule::Wide, "destination"}, a, b, src("c", TypeRule::Wide)})),
    allow(kRound | kFtz | kSat | kSatS32 | kLoHi | kCc, form("mad", Op::Mad, decode_arithmetic, kInt | kFloat, {d, a, b, c}, Requires::IntMulMode)),
    allow(kLoHi | kCc, form("madc", Op::Mad, decode_arithmetic, kInt32_64, {d, a, b, c}, Requires::IntMulMode)),
    allow(kLoHi, form("mul24", Op::Mul24, decode_arithmetic, {U32, S32}, {d, a, b}, Requires::IntHalfMode)),
    allow(kLoHi | kSat, form("mad24", Op::Mad24, decode_arithmetic, {U32, S32}, {d, a, b, c}, Requires::IntHalfMode)),
    allow(kRound | kFtz | kApprox | kFull, form("div", Op::Div, decode_arithmetic, kInt | kFloat, {d, a, b}, Requires::RoundOrApprox)),
    form("rem", Op::Rem, decode_arithmetic, kInt, {d, a, b}),
    allow(kFtz | kFtzHalf | kNaN | kRelu, form("min", Op::Min, decode_arithmetic, kInt | kFloat | kHalf, {d, a, b})),
    allow(kFtz | kFtzHalf | kNaN | kRelu, form("max", Op::Max, decode_arithmetic, kInt | kFloat | kHalf, {d, a, b})),
    allow(kFtz | kFtzHalf, form("abs", Op::Abs, decode_arithmetic, kSigned | kFloat | kHalf, {d, a})),
    allow(kFtz | kFtzHalf, form("neg", Op::Neg, decode_arithmetic, kSigned | kFloat | kHalf, {d, a})),
    form("sad", Op::Sad, decode_arithmetic, kInt, {d, a, b, c}),
    allow(kArith, form("fma", Op::Fma, decode_arithmetic, kFloat | kHalf, {d, a, b, c}, Requires::FloatRounding)),
    allow(kRound | kFtz | kApprox, form("rcp", Op::Rcp, decode_arithmetic, kFloat, {d, a}, Requires::RoundOrApprox)),
    allow(kRound | kFtz | kApprox, form("sqrt", Op::Sqrt, decode_arithmetic, kFloat, {d, a}, Requires::RoundOrApprox)),
    allow(kFtz | kApprox, form("rsqrt", Op::Rsqrt, decode_arithmetic, kFloat, {d, a}, Requires::Approx)),
    allow(kFtz | kApprox, form("ex2", Op::Ex2, decode_arithmetic, TypeSet{F32} | kHalf, {d, a}, Requires::Approx, kBf16)),
    allow(kFtz | kApprox, form("lg2", Op::Lg2, decode_arithmetic, {F32}, {d, a}, Requires::Approx)),
    allow(kFtz | kApprox, form("sin", Op::Sin, decode_arithmetic, {F32}, {d, a}, Requires::Approx)),
    allow(kFtz | kApprox, form("cos", Op::Cos, decode_arithmetic, {F32}, {d, a}, Requires::Approx)),
    allow(kApprox, form("tanh", Op::Tanh, decode_arithmetic, TypeSet{F32} | kHalf, {d, a}, Requires::Approx, kBf16)),
    form("copysign", Op::Copysign, decode_arithmetic, kFloat, {d, a, b}),
    allow(kFtz, form("testp", Op::Testp, decode_testp, kFloat, {pred_d, a})),

    // bit manipulation and logic
    form("shl", Op::Shl, decode_arithmetic, kBits, {d, a, src("b", TypeRule::U32)}),
    form("shr", Op::Shr, decode_arithmetic, kBits | kInt, {d, a, src("b", TypeRule::U32)}),
    form("shf", Op::Shf, decode_shf, {B32}, {d, a, b, src("c", TypeRule::U32)}),
    form("bfe", Op::Bfe, decode_arithmetic, kInt32_64, {d, a, src("b", TypeRule::U32), src("c", TypeRule::U32)}),
    form("bfi", Op::Bfi, decode_arithmetic, {B32, B64}, {d, a, b, src("c", TypeRule::U32), src("d", TypeRule::U32)}),
    form("prmt", Op::Prmt, decode_prmt, {B32}, {d, a, b, c}),
    form("popc", Op::Popc, decode_arithmetic, {B32, B64}, {u32_d, a}),
    form("clz", Op::Clz, decode_arithmetic, {B32, B64}, {u32_d, a}),
    form("bfind", Op::Bfind, decode_bfind, kInt32_64, {u32_d, a}),
    form("brev", Op::Brev, decode_arithmetic, {B32, B64}, {d, a}),
    form("lop3", Op::Lop3, decode_arithmetic, {B32}, {d, a, b, c, {ArgKind::Imm, TypeRule::None, "immLut"}}),
    form("and", Op::And, decode_arithmetic, kBits | TypeSet{Pred}, {d, a, b}),
    form("or", Op::Or, decode_arithmetic, kBits | TypeSet{Pred}, {d, a, b}),
    form("xor", Op::Xor, decode_arithmetic, kBits | TypeSet{Pred}, {d, a, b}),
    form("not", Op::Not, decode_arithmetic, kBits | TypeSet{Pred}, {d, a}),
    form("cnot", Op::Cnot, decode_arithmetic, kBits, {d, a}),

    // conversions
    when("f16x2", allow(kRound | kRelu, two_types({F32}, form("cvt", Op::Cvtpack, decode_cvt, {F16x2},
         {{ArgKind::Dest, TypeRule::Relaxed, "destination"}, src("a", TypeRule::Relaxed2), src("b", TypeRule::Relaxed2)}, Requires::FloatRounding)))),
    when("bf16x2", allow(kRound | kRelu, two_types({F32}, form("cvt", Op::Cvtpack, decode_cvt, {BF16x2},
         {{ArgKind::Dest, TypeRule::Relaxed, "destination"}, src("a", TypeRule::Relaxed2), src("b", TypeRule::Relaxed2)}, Requires::FloatRounding)))),
    allow(kRound | kIntRound | kFtz | kSat | kSatS32 | kRelu, two_types(kCvtTypes, form("cvt", Op::Cvt, decode_cvt, kCvtTypes | TypeSet{TF32},
         {{ArgKind::Dest, TypeRule::Relaxed, "destination"}, src("a", TypeRule::Relaxed2)}, Requires::CvtRounding))),
    in_spaces({Space::Global, Space::Shared, Space::Local, Space::Const, Space::ParamKernel},
         form("cvta", Op::Cvta, decode_cvta, {U32, U64}, {{ArgKind::Dest, TypeRule::AddressOf, "destination"},
                                             {ArgKind::CvtaSrc, TypeRule::AddressOf, "source"}})),

    // memory
    in_spaces(kAllSpaces, form("ld", Op::Ld, decode_load_store, kMemTypes, {{ArgKind::Data, TypeRule::Relaxed, "destination"}, address})),
    in_spaces({Space::Generic, Space::Global}, form("ldu", Op::Ld, decode_load_store, kMemTypes, {{ArgKind::Data, TypeRule::Relaxed, "destination"}, address})),
    in_spaces({Space::Generic, Space::Global, Space::Shared, Space::Local, Space::ParamKernel},
         form("st", Op::St, decode_load_store, kMemTypes, {address, {ArgKind::Data, TypeRule::Relaxed, "source"}})),
    when("cas", in_spaces({Space::Generic, Space::Global, Space::Shared},
         form("atom", Op::Atom, decode_atomic, {B32, B64, U32, U64, S32, S64, F32, F64}, {d, address, b, c}))),
    in_spaces({Space::Generic, Space::Global, Space::Shared},
         form("atom", Op::Atom, decode_atomic, {B32, B64, U32, U64, S32, S64, F32, F64}, {d, address, b})),
    in_spaces({Space::Generic, Space::Global, Space::Shared},
         form("red", Op::Red, decode_atomic, {B32, B64, U32, U64, S32, S64, F32, F64}, {address, b})),
    in_spaces({Space::Global, Space::Shared, Space::Local, Space::Const, Space::ParamKernel},
         no_type(form("isspacep", Op::Isspacep, decode_isspacep, {}, {pred_d, src("a", TypeRule::U64)}))),

    // control and synchronization
    no_type(form("bra", Op::Bra, decode_branch, {}, {{ArgKind::Label, TypeRule::None, "target"}})),
    when("warp", no_type(form("bar", Op::BarWarpSync, decode_barrier, {}, {mask}))),
    optional_from(1, no_type(form("bar", Op::BarSync, decode_barrier, {}, {src("barrier", TypeRule::U32), src("thread count", TypeRule::U32)}))),
    optional_from(1, no_type(form("barrier", Op::BarSync, decode_barrier, {}, {src("barrier", TypeRule::U32), src("thread count", TypeRule::U32)}))),

    // warp collectives
    form("shfl", Op::Shfl, decode_shfl, {B32}, {{ArgKind::DestPair, TypeRule::Type, "destination"}, a, src("b", TypeRule::B32), src("c", TypeRule::B32), mask}),
    form("vote", Op::Vote, decode_vote, {Pred, B32}, {d, src("a", TypeRule::Pred), mask}),
    form("activemask", Op::Activemask, decode_activemask, {B32}, {d}),
    form("redux", Op::Redux, decode_redux, {B32, U32, S32}, {d, a, mask}),
    form("match", Op::MatchAny, decode_match, {B32, B64}, {{ArgKind::DestPair, TypeRule::B32, "destination"}, a, mask}),

    // 2:4-sparse tensor cores (mma.sp, before the dense forms: their `when` is a subset)
    mma_sp("sp.m16n8k16.f16", {F16, F32}, {F16}, {F16, F32}, 4, 4, 4, 3, Requires::SameAccumulatorType),
    mma_sp("sp.m16n8k32.f16", {F16, F32}, {F16}, {F16, F32}, 8, 8, 4, 3, Requires::SameAccumulatorType),
    mma_sp("sp.m16n8k16.bf16", {F32}, {BF16}, {F32}, 4, 4, 4, 3),
    mma_sp("sp.m16n8k32.bf16", {F32}, {BF16}, {F32}, 8, 8, 4, 1),
    mma_sp("sp.m16n8k8.tf32", {F32}, {TF32}, {F32}, 2, 2, 4, 3),
    mma_sp("sp.m16n8k16.tf32", {F32}, {TF32}, {F32}, 4, 4, 4, 1),
    mma_sp("sp.m16n8k32.s8", {S32}, {S8, U8}, {S32}, 8, 8, 4, 1),
    mma_sp("sp.m16n8k32.u8", {S32}, {S8, U8}, {S32}, 8, 8, 4, 1),
    mma_sp("sp.m16n8k64.s8", {S32}, {S8, U8}, {S32}, 16, 16, 4, 0),
    mma_sp("sp.m16n8k64.u8", {S32}, {S8, U8}, {S32}, 16, 16, 4, 0),
    mma_sp("sp.m16n8k64.s4", {S32}, {S4, U4}, {S32}, 16, 16, 4, 1),
    mma_sp("sp.m16n8k64.u4", {S32}, {S4, U4}, {S32}, 16, 16, 4, 1),
    mma_sp("sp.m16n8k128.s4", {S32}, {S4, U4}, {S32}, 32, 32, 4, 0),
    mma_sp("sp.m16n8k128.u4", {S32}, {S4, U4}, {S32}, 32, 32, 4, 0),
    mma_sp("sp::ordered_metadata.m16n8k16.f16", {F16, F32}, {F16}, {F16, F32}, 4, 4, 4, 3, Requires::SameAccumulatorType),
    mma_sp("sp::ordered_metadata.m16n8k32.f16", {F16, F32}, {F16}, {F16, F32}, 8, 8, 4, 3, Requires::SameAccumulatorType),
    mma_sp("sp::ordered_metadata.m16n8k16.bf16", {F32}, {BF16}, {F32}, 4, 4, 4, 3),
    mma_sp("sp::ordered_metadata.m16n8k32.bf16", {F32}, {BF16}, {F32}, 8, 8, 4, 1),
    mma_sp("sp::ordered_metadata.m16n8k8.tf32", {F32}, {TF32}, {F32}, 2, 2, 4, 3),
    mma_sp("sp::ordered_metadata.m16n8k16.tf32", {F32}, {TF32}, {F32}, 4, 4, 4, 1),
    mma_sp("sp::ordered_metadata.m16n8k32.s8", {S32}, {S8, U8}, {S32}, 8, 8, 4, 1),
    mma_sp("sp::ordered_metadata.m16n8k32.u8", {S32}, {S8, U8}, {S32}, 8, 8, 4, 1),
    mma_sp("sp::ordered_metadata.m16n8k64.s8", {S32}, {S8, U8}, {S32}, 16, 16, 4, 0),
    mma_sp("sp::ordered_metadata.m16n8k64.u8", {S32}, {S8, U8}, {S32}, 16, 16, 4, 0),
    mma_sp("sp::ordered_metadata.m16n8k64.s4", {S32}, {S4, U4}, {S32}, 16, 16, 4, 1),
    mma_sp("sp::ordered_metadata.m16n8k64.u4", {S32}, {S4, U4}, {S32}, 16, 16, 4, 1),
    mma_sp("sp::ordered_metadata.m16n8k128.s4", {S32}, {S4, U4}, {S32}, 32, 32, 4, 0),
    mma_sp("sp::ordered_metadata.m16n8k128.u4", {S32}, {S4, U4}, {S32}, 32, 32, 4, 0),
    // tensor cores: the shapes and types of sm_80 the emulator runs
    mma("m16n8k16.f16", {F16, F32}, {F16}, {F16, F32}, 8, 4, 4, Requires::SameAccumulatorType),
    mma("m16n8k8.f16", {F16, F32}, {F16}, {F16, F32}, 4, 2, 4, Requires::SameAccumulatorType),
    mma("m16n8k16.bf16", {F32}, {BF16}, {F32}, 8, 4, 4),
    mma("m16n8k8.bf16", {F32}, {BF16}, {F32}, 4, 2, 4),
    mma("m16n8k8.tf32", {F32}, {TF32}, {F32}, 4, 2, 4),
    mma("m16n8k4.tf32", {F32}, {TF32}, {F32}, 2, 1, 4),
    mma("m16n8k32.s8", {S32}, {S8, U8}, {S32}, 16, 8, 4),
    mma("m16n8k32.u8", {S32}, {S8, U8}, {S32}, 16, 8, 4),
    mma("m16n8k16.s8", {S32}, {S8, U8}, {S32}, 8, 4, 4),
    mma("m16n8k16.u8", {S32}, {S8, U8}, {S32}, 8, 4, 4),
    mma("m16n8k64.s4", {S32}, {S4, U4}, {S32}, 32, 16, 4),
    mma("m16n8k64.u4", {S32}, {S4, U4}, {S32}, 32, 16, 4),
    mma("m16n8k32.s4", {S32}, {S4, U4}, {S32}, 16, 8, 4),
    mma("m16n8k32.u4", {S32}, {S4, U4}, {S32}, 16, 8, 4),
    allow(kRound, mma("m8n8k4.f64", {F64}, {F64}, {F64}, 1, 1, 2)),
    ldmatrix("x1", 2),
    ldmatrix("x2", 4),
    ldmatrix("x4", 8),

    // asynchronous copies to shared memory
    when("commit_group", no_type(form("cp", Op::CpAsyncCommit, decode_cp_async, {}, {}))),
    when("wait_group", no_type(form("cp", Op::CpAsyncWait, decode_cp_async, {}, {{ArgKind::Imm, TypeRule::None, "pending groups"}}))),
    when("wait_all", no_type(form("cp", Op::CpAsyncWaitAll, decode_cp_async, {}, {}))),
    optional_from(3, in_spaces({Space::Shared, Space::Global}, no_type(form("cp", Op::CpAsync, decode_cp_async, {},
         {{ArgKind::SharedAddress, TypeRule::None, "destination"}, {ArgKind::GlobalAddress, TypeRule::None, "source"},
          {ArgKind::Imm, TypeRule::None, "cp-size"}, {ArgKind::Src, TypeRule::SizeOrIgnoreSrc, "src-size or ignore-src"}})))),
};
// clang-format on

} // namespace

std::span<const InstructionForm> instruction_forms(std::string_view opcode) {
  const InstructionForm *first = std::find_if(std::begin(kForms), std::end(kForms),
                                              [&](const auto &f) { return f.opcode == opcode; });
  const InstructionForm *last =
      std::find_if(first, std::end(kForms), [&](const auto &f) { return f.opcode != opcode; });
  return {first, last};
}

bool form_selected_by(std::string_view when, std::string_view modifier) {
  while (!when.empty()) {
    const size_t dot = when.find('.');
    if (when.substr(0, dot) == modifier)
      return true;
    when = dot == std::string_view::npos ? std::string_view() : when.substr(dot + 1);
  }
  return false;
}

const InstructionForm *select_form(std::string_view opcode,
                                   std::span<const std::string_view> modifiers) {
  const InstructionForm *fallback = nullptr;
  for (const InstructionForm &f : instruction_forms(opcode)) {
    if (f.when.empty()) {
      fallback = fallback ? fallback : &f;
      continue;
    }
    bool all = true;
    for (std::string_view w = f.when; !w.empty();) {
      const size_t dot = w.find('.');
      all &= std::find(modifiers.begin(), modifiers.end(), w.substr(0, dot)) != modifiers.end();
      w = dot == std::string_view::npos ? std::string_view() : w.substr(dot + 1);
    }
    if (all)
      return &f;
  }
  return fallback;
}

TypeSet fragment_registers(DType element) {
  switch (element) {
  case F16: return {F16x2, B32};
  case BF16:
  case TF32: return {B32};
  case F32: return {F32, B32};
  case S32: return {S32, U32, B32};
  case F64: return {F64, B64, U64, S64};
  case S8:
  case U8:
  case S4:
  case U4:
  case B16: return {B32, U32, S32, F32, F16x2, Pred}; // any 32-bit register, .pred too
  default: return {};
  }
}

TypeSet sparse_fragment_registers(DType element) {
  if (element == BF16 || element == TF32 || element == F32)
    return fragment_registers(S8);
  return fragment_registers(element);
}

const UncheckedInstruction *unchecked_instruction(std::string_view opcode) {
  static constexpr UncheckedInstruction kUnchecked[] = {
      {"prefetch", decode_prefetch},
      {"prefetchu", decode_cache_hint},
      {"discard", decode_cache_hint},
      {"applypriority", decode_cache_hint},
      {"createpolicy", decode_createpolicy},
      {"membar", decode_fence},
      {"fence", decode_fence},
      {"nanosleep", decode_nanosleep},
      {"griddepcontrol", decode_griddepcontrol},
      {"call", decode_call},
      {"ret", decode_return},
      {"exit", decode_return},
      {"trap", decode_return},
      {"brkpt", decode_return},
  };
  for (const UncheckedInstruction &u : kUnchecked) {
    if (u.opcode == opcode)
      return &u;
  }
  return nullptr;
}

const TypeSet *atomic_operation_types(std::string_view operation) {
  static constexpr std::pair<std::string_view, TypeSet> kOps[] = {
      {"add", {U32, S32, U64, F32, F64}},
      {"min", {U32, S32, U64, S64}},
      {"max", {U32, S32, U64, S64}},
      {"inc", {U32}},
      {"dec", {U32}},
      {"and", {B32, B64}},
      {"or", {B32, B64}},
      {"xor", {B32, B64}},
      {"exch", {B32, B64}},
      {"cas", {B32, B64}}};
  for (const auto &[name, types] : kOps) {
    if (name == operation)
      return &types;
  }
  return nullptr;
}

std::optional<DType> dtype_from_name(std::string_view m) {
  static constexpr std::pair<std::string_view, DType> kTypes[] = {
      {"b8", B8},     {"b16", B16},       {"b32", B32},   {"b64", B64},   {"b128", B128},
      {"u8", U8},     {"u16", U16},       {"u32", U32},   {"u64", U64},   {"s8", S8},
      {"s16", S16},   {"s32", S32},       {"s64", S64},   {"f16", F16},   {"f16x2", F16x2},
      {"bf16", BF16}, {"bf16x2", BF16x2}, {"tf32", TF32}, {"f32", F32},   {"f64", F64},
      {"pred", Pred}, {"s4", S4},         {"u4", U4},     {"e4m3", E4M3}, {"e5m2", E5M2}};
  for (const auto &[name, t] : kTypes) {
    if (m == name)
      return t;
  }
  return std::nullopt;
}

} // namespace tcjit::emu
