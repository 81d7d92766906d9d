// Validates instructions against the instruction table with ptxas's rules (docs/emulator.md,
// "PTX checker"). Each rule below was confirmed with ptxas -arch=sm_80 on small PTX files.
#include "runtime/emu/ptx_checker.h"

#include <algorithm>
#include <vector>

#include "runtime/emu/ptx_error.h"

namespace tcjit::emu {

namespace {

using Kind = AstOperand::Kind;

bool is_bits(DType t) {
  return t == DType::B8 || t == DType::B16 || t == DType::B32 || t == DType::B64 ||
         t == DType::B128;
}
bool is_int(DType t) {
  switch (t) {
  case DType::U8:
  case DType::U16:
  case DType::U32:
  case DType::U64:
  case DType::S8:
  case DType::S16:
  case DType::S32:
  case DType::S64: return true;
  default: return false;
  }
}
bool is_real(DType t) {
  return t == DType::F32 || t == DType::F64;
}
uint32_t bits_of(DType t) {
  return t == DType::Pred ? 1 : dtype_bytes(t) * 8;
}

DType bits_type(uint32_t bits) {
  switch (bits) {
  case 8: return DType::B8;
  case 16: return DType::B16;
  case 32: return DType::B32;
  case 64: return DType::B64;
  default: return DType::None;
  }
}
DType unsigned_type(uint32_t bits) {
  switch (bits) {
  case 16: return DType::U16;
  case 32: return DType::U32;
  case 64: return DType::U64;
  default: return DType::None;
  }
}

std::string dot(DType t) {
  return std::string(".") + dtype_name(t);
}

// The PTX ISA's type-checking rule ("Type Checking Rules"): an operand of the same size as the
// instruction type; a .bN register fits any type of size N, a .bN instruction any register of
// size N, signed and unsigned integers of one size fit each other, floats only their own type.
bool strict_fits(DType inst, DType reg, bool f16x2_as_int = false) {
  if (inst == DType::Pred || reg == DType::Pred)
    return inst == reg;
  if (bits_of(inst) != bits_of(reg))
    return false;
  // where the instruction type is a 32-bit integer, ptxas also takes a .f16x2 register (not
  // the reverse, nor where an operand's type is fixed, e.g. a shift amount)
  return inst == reg || is_bits(inst) || is_bits(reg) || (is_int(inst) && is_int(reg)) ||
         (f16x2_as_int && is_int(inst) && reg == DType::F16x2);
}

// "Operand Size Exceeding Instruction-Type Size" (ld, st, cvt): integer and bit-size instruction
// types accept wider integer/bit registers (a .bN instruction type any wider register); float
// types (.f32 .f64 .f16 .f16x2) their own type or a .bN register of their size or wider; .bf16,
// .bf16x2 and .tf32 only the .bN register of their size (ptxas -arch=sm_80).
bool relaxed_fits(DType inst, DType reg, bool f16x2_as_int) {
  if (reg == DType::Pred || inst == DType::Pred)
    return false;
  const uint32_t ib = bits_of(inst), rb = bits_of(reg);
  if (is_bits(inst))
    return rb >= ib;
  if (is_int(inst))
    return (is_int(reg) || is_bits(reg) || (f16x2_as_int && reg == DType::F16x2)) && rb >= ib;
  if (is_real(inst) || inst == DType::F16 || inst == DType::F16x2)
    return reg == inst || (is_bits(reg) && rb >= ib);
  return is_bits(reg) && rb == ib; // bf16, bf16x2, tf32
}

// What a register of `inst` may be, for the messages.
std::string strict_need(DType inst) {
  if (inst == DType::Pred)
    return "a .pred register";
  const uint32_t n = bits_of(inst);
  if (is_bits(inst))
    return "a " + std::to_string(n) + "-bit register of any type";
  if (is_int(inst))
    return "a " + std::to_string(n) + "-bit .b, .u or .s register";
  return "a " + dot(inst) + " or " + dot(bits_type(n)) + " register";
}
std::string relaxed_need(DType inst) {
  const uint32_t n = bits_of(inst);
  if (is_bits(inst))
    return "a register of " + std::to_string(n) + " bits or more";
  if (is_int(inst))
    return "a .b, .u or .s register of " + std::to_string(n) + " bits or more";
  if (is_real(inst) || inst == DType::F16 || inst == DType::F16x2)
    return "a " + dot(inst) + " register or a .b register of " + std::to_string(n) +
           " bits or more";
  return "a " + dot(bits_type(n)) + " register";
}

bool special_is_legacy_16bit(const std::string &name) {
  for (const char *p : {"%tid.", "%ntid.", "%ctaid.", "%nctaid."}) {
    if (name.rfind(p, 0) == 0)
      return true;
  }
  return false;
}

class Checker {
public:
  Checker(const AstInstruction &ai, const CheckContext &ctx) : ai_(ai), ctx_(ctx) {
    size_t start = 0;
    const std::string &op = ai.opcode;
    while (start <= op.size()) {
      size_t dotp = op.find('.', start);
      if (dotp == std::string::npos)
        dotp = op.size();
      parts_.push_back(std::string_view(op).substr(start, dotp - start));
      start = dotp + 1;
    }
    base_ = parts_[0];
    mods_.assign(parts_.begin() + 1, parts_.end());
  }

  const InstructionForm *run() {
    check_guard();
    form_ = select_form(base_, mods_);
    if (!form_)
      return nullptr;
    collect_types();
    if (types_.size() != form_->type_count)
      fail_plain("Unexpected instruction types specified for '" + std::string(base_) + "'" +
                 count_text());
    if (form_->type_count >= 1 && !form_->types.empty() && !form_->types.has(types_[0]))
      fail_plain("Unexpected instruction types specified for '" + std::string(base_) +
                 "': " + dot(types_[0]) + " is not a type of '" + std::string(base_) + "'");
    if (form_->type_count == 2 && !form_->types2.empty() && !form_->types2.has(types_[1]))
      fail_plain("Unexpected instruction types specified for '" + std::string(base_) +
                 "': " + dot(types_[1]) + " is not a source type of '" + std::string(base_) + "'");
    for (size_t k = 2; k < 4 && k < types_.size(); ++k) {
      const TypeSet &allowed = k == 2 ? form_->types3 : form_->types4;
      if (!allowed.empty() && !allowed.has(types_[k]))
        fail_plain("Unexpected instruction types specified for '" + std::string(base_) +
                   "': " + dot(types_[k]) + " is not type " + std::to_string(k + 1) + " of '" +
                   ai_.opcode + "'");
    }
    if (form_->type_count >= 1 && form_->sm90_types.has(type()) && ctx_.sm_version < 90)
      fail_plain("Feature '" + std::string(base_) + dot(type()) +
                 "' requires .target sm_90 or higher");
    check_modifiers();
    check_modifier_order();
    check_instruction_rules();
    const size_t n = ai_.operands.size();
    if (n < form_->min_operands || n > form_->max_operands)
      fail_plain("Arguments mismatch for instruction '" + std::string(base_) + "': '" + ai_.opcode +
                 "' takes " + operand_count_text() + ", got " + std::to_string(n));
    for (size_t i = 0; i < n; ++i)
      check_operand(i, form_->operands[i], ai_.operands[i]);
    return form_;
  }

private:
  const AstInstruction &ai_;
  const CheckContext &ctx_;
  std::vector<std::string_view> parts_;
  std::string_view base_;
  std::vector<std::string_view> mods_;
  std::vector<DType> types_;
  const InstructionForm *form_ = nullptr;
  Space space_ = Space::Generic;
  uint32_t vec_ = 1;
  bool vec_given_ = false;

  DType type() const { return types_.empty() ? DType::None : types_[0]; }
  DType type2() const { return types_.size() > 1 ? types_[1] : DType::None; }
  bool has(std::string_view m) const {
    return std::find(mods_.begin(), mods_.end(), m) != mods_.end();
  }

  [[noreturn]] void fail_plain(const std::string &what) const {
    throw_load_error(ctx_.source_name, ai_.line, what);
  }
  [[noreturn]] void mismatch(size_t i, const OperandSpec &spec, const std::string &detail) const {
    fail_plain("Arguments mismatch for instruction '" + std::string(base_) + "': operand " +
               std::to_string(i + 1) + " (" + spec.role + ") of '" + ai_.opcode + "' " + detail);
  }

  std::string count_text() const {
    return ": '" + ai_.opcode + "' has " + std::to_string(types_.size()) + " type" +
           (types_.size() == 1 ? "" : "s") + ", the instruction takes " +
           std::to_string(form_->type_count);
  }
  std::string operand_count_text() const {
    if (form_->min_operands == form_->max_operands)
      return std::to_string(form_->max_operands) + " operands";
    return std::to_string(form_->min_operands) + " to " + std::to_string(form_->max_operands) +
           " operands";
  }

  void check_guard() const {
    if (ai_.guard.empty())
      return;
    CheckedName g = ctx_.lookup(ai_.guard);
    if (g.kind == CheckedName::Kind::Register && g.type != DType::Pred)
      fail_plain("Predicate expression expected for instruction '" + std::string(base_) +
                 "': the guard '@" + ai_.guard + "' is a " + dot(g.type) +
                 " register; a guard must be .pred");
  }

  void collect_types() {
    for (std::string_view m : mods_) {
      if (auto t = dtype_from_name(m))
        types_.push_back(*t);
      else if (auto sp = space_of(m))
        space_ = *sp;
      else if (m == "v2" || m == "v4" || m == "v8") {
        vec_ = static_cast<uint32_t>(m[1] - '0');
        vec_given_ = true;
      }
    }
  }

  bool has_rounding() const {
    for (const char *r : {"rn", "rz", "rm", "rp"}) {
      if (has(r))
        return true;
    }
    return false;
  }
  bool has_int_rounding() const {
    for (const char *r : {"rni", "rzi", "rmi", "rpi"}) {
      if (has(r))
        return true;
    }
    return false;
  }

  // Each modifier against the form's allowed classes and the class's type rule.
  void check_modifiers() const {
    using namespace mods;
    const std::string name(base_);
    const uint16_t allowed = form_->mods;
    const DType t = type();
    const bool is_cvt = name == "cvt";
    auto illegal = [&](std::string_view m) {
      fail_plain("Illegal modifier '." + std::string(m) + "' for instruction '" + name + "' ('" +
                 ai_.opcode + "')");
    };
    for (std::string_view m : mods_) {
      if (dtype_from_name(m) || form_selected_by(form_->when, m))
        continue;
      if (m == "rn" || m == "rz" || m == "rm" || m == "rp" || m == "rna") {
        const bool ok =
            (allowed & kRound) && (is_cvt || dtype_is_float(t)) &&
            (m != "rna" || (is_cvt && t == DType::TF32)) &&
            (is_cvt || !(t == DType::F16 || t == DType::F16x2) || m == "rn"); // f16: .rn only
        if (!ok)
          fail_plain("Illegal rounding modifier for instruction '" + name + "': '" + ai_.opcode +
                     "' takes no ." + std::string(m) + " (rounding applies to float types)");
      } else if (m == "rni" || m == "rzi" || m == "rmi" || m == "rpi") {
        if (!(allowed & kIntRound))
          fail_plain("Illegal rounding modifier for instruction '" + name + "': '" + ai_.opcode +
                     "' takes no ." + std::string(m) + " (integer rounding is cvt's)");
      } else if (m == "ftz") {
        const bool half = t == DType::F16 || t == DType::F16x2;
        const bool ok =
            (allowed & kFtz) &&
            (is_cvt
                 ? (t == DType::F32 || type2() == DType::F32) && t != DType::TF32 &&
                       (ctx_.sm_version >= 90 || (t != DType::BF16 && type2() != DType::BF16))
                 : t == DType::F32 || (half && (allowed & kFtzHalf)) ||
                       (t == DType::F64 && (name == "rcp" || (name == "rsqrt" && has("approx")))));
        if (!ok)
          illegal(m);
      } else if (m == "sat") {
        if (!(allowed & kSat))
          illegal(m);
        if (is_cvt && is_int(t) && is_int(type2()) && int_range_contains(t, type2()))
          illegal(m); // the source always fits: nothing to saturate
        if (is_cvt && (t == DType::TF32 || t == DType::BF16 || type2() == DType::BF16))
          illegal(m); // no saturation in conversions to .tf32 or from/to .bf16 (sm_80)
        const bool ok = is_cvt || t == DType::F32 || t == DType::F16 || t == DType::F16x2 ||
                        (t == DType::S32 && (allowed & kSatS32));
        if (!ok)
          fail_plain("Modifier '.sat' does not apply to '" + dot(t) + "' type ('" + ai_.opcode +
                     "')");
      } else if (m == "cc") {
        if (!(allowed & kCc))
          illegal(m);
        if (!is_int(t) || bits_of(t) < 32)
          fail_plain("Modifier '.cc' applies only to add integer types: '" + ai_.opcode + "' has " +
                     dot(t));
      } else if (m == "approx") {
        const bool ok =
            (allowed & kApprox) &&
            (t == DType::F32 || (types::kHalf.has(t) && (name == "ex2" || name == "tanh")) ||
             (t == DType::F64 && (name == "rcp" || name == "rsqrt")));
        if (!ok)
          illegal(m);
        if (t == DType::F64 && name == "rcp" && !has("ftz"))
          fail_plain("'.ftz' modifier required for instruction 'rcp.approx.f64' ('" + ai_.opcode +
                     "')");
      } else if (m == "full") {
        if (!(allowed & kFull) || t != DType::F32)
          illegal(m);
      } else if (m == "NaN") {
        if (!(allowed & kNaN) || !(t == DType::F32 || types::kHalf.has(t)))
          illegal(m);
      } else if (m == "relu") {
        const bool ok = (allowed & kRelu) && types::kHalf.has(t);
        if (!ok)
          illegal(m);
      } else if (m == "lo" || m == "hi") {
        if ((allowed & kLoHi) && is_int(t))
          continue;
        if (name != "setp")
          fail_plain("Comparison qualifier is not allowed for instruction '" + name + "': '" +
                     ai_.opcode + "' takes no ." + std::string(m));
      } else if (m == "wide") {
        fail_plain("Unknown modifier '.wide' in '" + ai_.opcode +
                   "' (only mul and mad of "
                   "16/32-bit integers are .wide)");
      } else if (is_comparison(m)) {
        if (name != "setp")
          fail_plain("Comparison qualifier is not allowed for instruction '" + name + "': '" +
                     ai_.opcode + "' takes no ." + std::string(m));
      } else if (m == "nc") {
        if (space_ != Space::Global)
          fail_plain("Modifier '.nc' requires .global space ('" + ai_.opcode + "')");
      } else if (auto sp = space_of(m)) {
        if (!(allowed & kSpace) || !(form_->spaces & space_bit(*sp)))
          fail_plain("State space incorrect for instruction '" + name + "': '" + ai_.opcode +
                     "' cannot use ." + std::string(m));
      }
    }
    if ((allowed & kSpace) && !(form_->spaces & space_bit(space_)))
      fail_plain("State space incorrect for instruction '" + name + "': '" + ai_.opcode +
                 "' needs a state space");
  }

  // mma.sp needs PTX ISA 7.1, its ::ordered_metadata spelling 8.5 (ptxas, CUDA 13).
  void check_sparse_mma_version() const {
    if (ctx_.ptx_version == 0)
      return;
    if (ctx_.ptx_version < 71)
      fail_plain("Feature 'Sparse MMA' requires PTX ISA .version 7.1 or later ('" + ai_.opcode +
                 "')");
    if (has("sp::ordered_metadata") && ctx_.ptx_version < 85)
      fail_plain("Feature '.sp::ordered_metadata' requires PTX ISA .version 8.5 or later ('" +
                 ai_.opcode + "'; write mma.sp for older versions)");
  }

  // atom/red: each operation takes its own types (.and/.or/.xor/.exch/.cas bit types, .inc/.dec
  // .u32, .min/.max integers, .add integers and floats; ptxas -arch=sm_80).
  void check_atomic_operation() const {
    for (std::string_view m : mods_) {
      const TypeSet *allowed = atomic_operation_types(m);
      if (!allowed || allowed->has(type()))
        continue;
      std::string list;
      for (DType t : {DType::B32, DType::B64, DType::U32, DType::S32, DType::U64, DType::S64,
                      DType::F32, DType::F64}) {
        if (allowed->has(t))
          list += (list.empty() ? "" : " or ") + dot(t);
      }
      fail_plain("Operation ." + std::string(m) + " requires " + list + " type for instruction '" +
                 std::string(base_) + "' ('" + ai_.opcode + "' has " + dot(type()) + ")");
    }
  }

  // Every value of integer type `src` is a value of `dst`.
  static bool int_range_contains(DType dst, DType src) {
    const bool ds = dtype_is_signed(dst), ss = dtype_is_signed(src);
    if (ds == ss)
      return bits_of(dst) >= bits_of(src);
    return ds && bits_of(dst) > bits_of(src);
  }

  static bool is_comparison(std::string_view m) {
    for (const char *c : {"eq", "ne", "lt", "le", "gt", "ge", "ls", "hs", "equ", "neu", "ltu",
                          "leu", "gtu", "geu", "num", "nan"}) {
      if (m == c)
        return true;
    }
    return false;
  }

  static std::optional<Space> space_of(std::string_view m) {
    if (m == "global")
      return Space::Global;
    if (m == "shared" || m == "shared::cta")
      return Space::Shared;
    if (m == "local")
      return Space::Local;
    if (m == "const")
      return Space::Const;
    if (m == "param" || m == "param::entry" || m == "param::func")
      return Space::ParamKernel;
    return std::nullopt;
  }

  // Modifiers that are part of the instruction's name come right after the opcode (mul.lo.cc,
  // not mul.cc.lo; cvta.to.shared, not cvta.shared.to), as ptxas's grammar has them.
  void check_modifier_order() const {
    const std::string name(base_);
    for (const char *m : {"lo", "hi", "wide", "to"}) {
      const bool names_it = m == std::string_view("to")     ? name == "cvta"
                            : m == std::string_view("wide") ? (name == "mul" || name == "mad")
                                                            : (form_->mods & mods::kLoHi) != 0;
      if (!names_it || !has(m) || mods_.front() == m)
        continue;
      fail_plain("Unexpected instruction types specified for '" + name + "': ." + m +
                 " must follow '" + name + "' directly ('" + ai_.opcode + "')");
    }
  }

  // Modifiers the instruction cannot go without, and the comparison of setp.
  void check_instruction_rules() const {
    const std::string name(base_);
    const DType t = type();
    switch (form_->requires_mod) {
    case Requires::Nothing: break;
    case Requires::IntMulMode:
      if ((is_int(t) || is_bits(t)) && !has("lo") && !has("hi") && !has("wide"))
        fail_plain("Unexpected instruction types specified for '" + name + "': '" + ai_.opcode +
                   "' needs .lo, .hi or .wide for an integer type");
      break;
    case Requires::IntHalfMode:
      if (!has("lo") && !has("hi"))
        fail_plain("Not a name of any known instruction: '" + name + "': '" + ai_.opcode +
                   "' needs .lo or .hi");
      break;
    case Requires::FloatRounding:
      if (!is_int(t) && !is_bits(t) && !has_rounding())
        fail_plain("Rounding modifier required for instruction '" + name + "': '" + ai_.opcode +
                   "' needs .rn, .rz, .rm or .rp");
      break;
    case Requires::RoundOrApprox:
      if (is_real(t) &&
          ((has_rounding() && (has("approx") || has("full"))) || (has("approx") && has("full"))))
        fail_plain("Rounding modifier or '.approx' modifier required for instruction '" + name +
                   "': '" + ai_.opcode + "' names both; use one");
      if (is_real(t) && !has_rounding() && !has("approx") && !(name == "div" && has("full")))
        fail_plain("Rounding modifier or '.approx' modifier required for instruction '" + name +
                   "': '" + ai_.opcode + "' needs .rn, .rz, .rm, .rp or .approx");
      break;
    case Requires::Approx:
      if (!has("approx"))
        fail_plain(".approx modifier required for instruction '" + name + "': '" + ai_.opcode +
                   "' needs .approx");
      break;
    case Requires::CvtRounding: check_cvt_rounding(); break;
    case Requires::SameAccumulatorType:
      if (types_.size() == 4 && types_[0] != types_[3])
        fail_plain(".dtype must be '" + dot(types_[3]) + "' when .ctype is '" + dot(types_[3]) +
                   "' for '" + name + "' ('" + ai_.opcode + "')");
      break;
    }
    if (name == "mma" && (has("sp") || has("sp::ordered_metadata")))
      check_sparse_mma_version();
    if (name == "abs" && !is_int(t) && !is_real(t) && t != DType::None && !types::kHalf.has(t))
      fail_plain("Instruction 'abs' applies only to signed numeric types");
    if (name == "setp")
      check_comparison();
    if (name == "atom" || name == "red")
      check_atomic_operation();
    if (name == "cvta" && t == DType::U32)
      fail_plain("Arguments mismatch for instruction 'cvta': '" + ai_.opcode +
                 "' converts 32-bit addresses, which need .address_size 32 (32-bit compilation, "
                 "no longer supported by ptxas); use .u64");
  }

  // cvt's rounding: required for int -> float (.rn .rz .rm .rp), float -> int (.rni .rzi .rmi
  // .rpi) and narrowing float conversions (.rn ...; .rna for .tf32); an integer rounding is
  // allowed between floats of one size; any other rounding is illegal (ptxas -arch=sm_80).
  void check_cvt_rounding() const {
    const DType dst = type(), src = type2();
    const bool dst_float = dtype_is_float(dst), src_float = dtype_is_float(src);
    const std::string required = "Rounding modifier required for instruction 'cvt': '" + ai_.opcode;
    const std::string illegal = "Illegal rounding modifier for instruction 'cvt': '" + ai_.opcode;
    const bool fp_round = has_rounding() || has("rna");
    const bool int_round = has_int_rounding();
    // sm_80 converts .bf16 only from and to .f32, and to .tf32 only by .rna from .f32
    const bool bf16 = dst == DType::BF16 || src == DType::BF16;
    if (bf16 && (dst == DType::BF16 ? src : dst) != DType::F32 && ctx_.sm_version < 90)
      fail_plain("Feature 'cvt with " + dot(dst) + dot(src) +
                 "' requires .target sm_90 or higher ('" + ai_.opcode + "')");
    if (dst == DType::F32 && src == DType::BF16 && ctx_.ptx_version != 0 && ctx_.ptx_version < 71)
      fail_plain("Feature 'cvt with .f32.bf16' requires PTX ISA .version 7.1 or later ('" +
                 ai_.opcode + "': raise the .version)");
    if (dst == DType::TF32 && src != DType::F32)
      fail_plain("Unexpected instruction types specified for 'cvt': '" + ai_.opcode +
                 "' converts to .tf32 from .f32 only");
    if (dst == DType::TF32 && !has("rna") && ctx_.sm_version < 90)
      fail_plain("Feature 'cvt with .tf32.f32" +
                 std::string(has_rounding() ? "" : " without .rna") +
                 "' requires .target sm_90 or higher ('" + ai_.opcode + "': use .rna)");
    if (dst_float && !src_float) {
      if (int_round)
        fail_plain(illegal + "' converts an integer to a float: use .rn, .rz, .rm or .rp");
      if (!fp_round)
        fail_plain(required + "' converts an integer to a float and needs .rn, .rz, .rm or .rp");
      return;
    }
    if (!dst_float && src_float) {
      if (fp_round)
        fail_plain(illegal + "' converts a float to an integer: use .rni, .rzi, .rmi or .rpi");
      if (!int_round)
        fail_plain(required + "' converts a float to an integer and needs .rni, .rzi, .rmi or "
                              ".rpi");
      return;
    }
    if (!dst_float) {
      if (fp_round || int_round)
        fail_plain(illegal + "' converts between integers, which takes no rounding");
      return;
    }
    if (bits_of(dst) < bits_of(src) || dst == DType::TF32) {
      if (int_round)
        fail_plain(illegal + "' narrows a float: use .rn, .rz, .rm or .rp");
      if (!fp_round)
        fail_plain(required + "' narrows a float and needs .rn, .rz, .rm or .rp");
      return;
    }
    // widening is exact: no rounding (ptxas lets .bf16 -> .f32 name a float rounding)
    if (bits_of(dst) > bits_of(src) && (int_round || (fp_round && src != DType::BF16)))
      fail_plain(illegal + "' widens a float, which is exact and takes no rounding");
    if (bits_of(dst) == bits_of(src) && fp_round)
      fail_plain(illegal + "' converts between floats of one size: only .rni, .rzi, .rmi or "
                           ".rpi (round to an integer value) apply");
  }

  void check_comparison() const {
    static const char *const kUnsigned[] = {"lo", "ls", "hi", "hs"};
    static const char *const kFloat[] = {"equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"};
    const DType t = type();
    auto any_of = [&](auto &list) {
      return std::any_of(std::begin(list), std::end(list), [&](const char *m) { return has(m); });
    };
    bool ok = true;
    if (is_bits(t))
      ok = !any_of(kUnsigned) && !any_of(kFloat) && !has("lt") && !has("le") && !has("gt") &&
           !has("ge");
    else if (is_int(t) && dtype_is_signed(t))
      ok = !any_of(kUnsigned) && !any_of(kFloat);
    else if (is_int(t))
      ok = !any_of(kFloat);
    else
      ok = !any_of(kUnsigned);
    if (!ok)
      fail_plain("Mismatch between instruction type and comparison qualifier in '" + ai_.opcode +
                 "'");
  }

  // ---- operands -----------------------------------------------------------------------------

  DType rule_type(TypeRule r) const {
    switch (r) {
    case TypeRule::Type:
    case TypeRule::Relaxed: return type();
    case TypeRule::Type2:
    case TypeRule::Relaxed2: return type2();
    case TypeRule::Type3: return types_.size() > 2 ? types_[2] : DType::None;
    case TypeRule::Type4: return types_.size() > 3 ? types_[3] : DType::None;
    case TypeRule::Wide: {
      const uint32_t n = bits_of(type()) * 2;
      return is_int(type()) && dtype_is_signed(type()) ? (n == 32 ? DType::S32 : DType::S64)
                                                       : unsigned_type(n);
    }
    case TypeRule::Pred: return DType::Pred;
    case TypeRule::U32:
    case TypeRule::SizeOrIgnoreSrc: return DType::U32;
    case TypeRule::U64: return DType::U64;
    case TypeRule::B32: return DType::B32;
    case TypeRule::AddressOf: return type();
    case TypeRule::None: return DType::None;
    }
    return DType::None;
  }
  static bool relaxed(TypeRule r) { return r == TypeRule::Relaxed || r == TypeRule::Relaxed2; }

  // Relaxed rules, except for cvt to or from .bf16, to .bf16x2 and to .tf32: ptxas takes those
  // operands strictly (no wider .b64)
  bool relaxed_here(TypeRule r) const {
    const bool strict_cvt = base_ == "cvt" && (type() == DType::TF32 || type() == DType::BF16 ||
                                               type() == DType::BF16x2 || type2() == DType::BF16);
    return relaxed(r) && !strict_cvt;
  }
  bool fits(TypeRule r, DType need, DType reg) const {
    const bool from_instruction_type = r == TypeRule::Type || r == TypeRule::Type2 ||
                                       r == TypeRule::Type3 || r == TypeRule::Type4 ||
                                       r == TypeRule::Relaxed || r == TypeRule::Relaxed2;
    return relaxed_here(r) ? relaxed_fits(need, reg, from_instruction_type)
                           : strict_fits(need, reg, from_instruction_type);
  }
  std::string need_text(TypeRule r, DType need) const {
    return relaxed_here(r) ? relaxed_need(need) : strict_need(need);
  }
  std::string want(TypeRule r, DType need) const {
    return "; '" + ai_.opcode + "' needs " + need_text(r, need) + " there (" + dot(need) +
           (relaxed_here(r) ? ", wider registers allowed" : "") + ")";
  }

  void check_register(size_t i, const OperandSpec &spec, const std::string &name, DType reg) const {
    const DType need = rule_type(spec.rule);
    if (need == DType::None)
      return;
    if (spec.rule == TypeRule::SizeOrIgnoreSrc && reg == DType::Pred) {
      if (ctx_.ptx_version != 0 && ctx_.ptx_version < 75)
        fail_plain("Feature 'ignore-src on cp.async' requires PTX ISA .version 7.5 or later: "
                   "operand " +
                   std::to_string(i + 1) + " of '" + ai_.opcode + "' is the .pred '" + name + "'");
      return;
    }
    if (!fits(spec.rule, need, reg))
      mismatch(i, spec, "'" + name + "' is a " + dot(reg) + " register" + want(spec.rule, need));
  }

  void check_special(size_t i, const OperandSpec &spec, const std::string &name, DType reg) const {
    const DType need = rule_type(spec.rule);
    if (need == DType::None)
      return;
    if (special_is_legacy_16bit(name) && bits_of(need) == 16 && (is_int(need) || is_bits(need)))
      return; // %tid.x as a 16-bit value: the legacy form, still accepted
    if (!fits(spec.rule, need, reg))
      mismatch(i, spec,
               "'" + name + "' is a " + dot(reg) + " special register" + want(spec.rule, need));
  }

  void check_immediate(size_t i, const OperandSpec &spec, const AstOperand &op) const {
    const DType need = rule_type(spec.rule);
    if (need == DType::None)
      return;
    // a floating-point constant has a type: 0fXXXXXXXX is .f32, 0d... and decimals are .f64;
    // float instructions take either, a .bN instruction one of its size (ptxas -arch=sm_80)
    const DType literal = op.kind == Kind::Integer ? DType::None
                          : op.float_is_f32_bits   ? DType::F32
                                                   : DType::F64;
    bool ok = false;
    std::string what;
    if (op.kind == Kind::Integer) {
      ok = is_int(need) || is_bits(need) || need == DType::Pred;
      what = "an integer constant";
    } else {
      ok = is_real(need) || (is_bits(need) && bits_of(need) == bits_of(literal));
      what = "a floating-point constant (" + dot(literal) + ")";
    }
    if (ok && base_ == "cvt" && type() == DType::TF32 && literal == DType::F64)
      mismatch(i, spec, "is " + what + "; '" + ai_.opcode + "' takes .f32 constants (0f...) only");
    if (!ok)
      mismatch(i, spec,
               "is " + what + "; " + dot(need) + " takes " +
                   (is_real(need)   ? std::string("floating-point constants only")
                    : is_int(need)  ? std::string("integer constants only")
                    : is_bits(need) ? "integer constants or floating-point ones of " +
                                          std::to_string(bits_of(need)) + " bits"
                                    : std::string("no constants: use a register")));
  }

  // A name as a value: register, special register or (where allowed) a variable.
  void check_name(size_t i, const OperandSpec &spec, const AstOperand &op, bool allow_variable) {
    CheckedName n = ctx_.lookup(op.name);
    switch (n.kind) {
    case CheckedName::Kind::Unknown: return; // the decoder reports unknown names
    case CheckedName::Kind::Register: check_register(i, spec, op.name, n.type); return;
    case CheckedName::Kind::Special:
      // ptxas reads special registers in mov and in integer-to-integer cvt only
      if (base_ != "mov" && !(base_ == "cvt" && is_int(type()) && is_int(type2())))
        fail_plain("Special register argument not allowed for instruction '" + std::string(base_) +
                   "': operand " + std::to_string(i + 1) + " (" + spec.role + ") is '" + op.name +
                   "'; read it with mov first");
      check_special(i, spec, op.name, n.type);
      return;
    case CheckedName::Kind::Variable:
      if (!allow_variable)
        fail_plain("Argument " + std::to_string(i) + " of instruction '" + std::string(base_) +
                   "': must be register; operand " + std::to_string(i + 1) + " (" + spec.role +
                   ") '" + op.name + "' is a variable (take its address with mov first)");
      return;
    }
  }

  void check_value(size_t i, const OperandSpec &spec, const AstOperand &op, bool allow_imm,
                   bool allow_variable) {
    switch (op.kind) {
    case Kind::Name: check_name(i, spec, op, allow_variable); return;
    case Kind::Integer:
    case Kind::Float:
      if (!allow_imm)
        fail_plain("Argument " + std::to_string(i) + " of instruction '" + std::string(base_) +
                   "': must be register; operand " + std::to_string(i + 1) + " (" + spec.role +
                   ") of '" + ai_.opcode + "' is a constant");
      check_immediate(i, spec, op);
      return;
    case Kind::Sink:
      if (spec.kind == ArgKind::Dest || spec.kind == ArgKind::DestPair ||
          spec.kind == ArgKind::Data)
        return;
      mismatch(i, spec, "is '_'; only destinations may be discarded");
    case Kind::Address:
      fail_plain("Argument " + std::to_string(i) + " of instruction '" + std::string(base_) +
                 "': must be register; operand " + std::to_string(i + 1) + " (" + spec.role +
                 ") of '" + ai_.opcode + "' is an address [..]");
    case Kind::Vector:
      if (spec.kind == ArgKind::Data && !vec_given_ && op.elements.size() != 1)
        fail_plain("Argument vector size mismatch for instruction '" + std::string(base_) + "': '" +
                   ai_.opcode + "' has no .v2/.v4 but operand " + std::to_string(i + 1) +
                   " is a vector of " + std::to_string(op.elements.size()));
      mismatch(i, spec, "is a {..} vector; it needs a scalar");
    case Kind::Pair:
    case Kind::List: mismatch(i, spec, "has an unexpected form");
    }
  }

  void check_dest(size_t i, const OperandSpec &spec, const AstOperand &op) {
    if (op.kind == Kind::Integer || op.kind == Kind::Float)
      fail_plain("Result register required for instruction '" + std::string(base_) + "': operand " +
                 std::to_string(i + 1) + " (" + spec.role + ") of '" + ai_.opcode +
                 "' is a constant");
    if (op.kind == Kind::Name && ctx_.lookup(op.name).kind == CheckedName::Kind::Variable)
      fail_plain("Result register required for instruction '" + std::string(base_) + "': operand " +
                 std::to_string(i + 1) + " (" + spec.role + ") '" + op.name + "' is a variable");
    check_value(i, spec, op, false, false);
  }

  void check_pair(size_t i, const OperandSpec &spec, const AstOperand &op) {
    if (op.kind != Kind::Pair) {
      check_dest(i, spec, op);
      return;
    }
    if (op.elements.size() != 2)
      mismatch(i, spec, "must be d|p");
    check_dest(i, spec, op.elements[0]);
    check_dest(i, {ArgKind::Dest, TypeRule::Pred, "predicate destination"}, op.elements[1]);
  }

  DType element_type(const AstOperand &e) const {
    if (e.kind != Kind::Name)
      return DType::None;
    CheckedName n = ctx_.lookup(e.name);
    return n.kind == CheckedName::Kind::Register || n.kind == CheckedName::Kind::Special
               ? n.type
               : DType::None;
  }

  // ld/st data: a scalar, or a {..} vector of the access's arity whose registers have one size
  // and compatible types (.bN mixes with anything of its size, .u and .s mix).
  void check_data(size_t i, const OperandSpec &spec, const AstOperand &op, bool is_store) {
    if (op.kind != Kind::Vector) {
      if (vec_given_ && vec_ > 1)
        fail_plain("Argument vector size mismatch for instruction '" + std::string(base_) + "': '" +
                   ai_.opcode + "' accesses a vector of " + std::to_string(vec_) + ", operand " +
                   std::to_string(i + 1) + " (" + spec.role + ") is not a {..} vector");
      if (is_store)
        check_value(i, spec, op, true, false);
      else
        check_dest(i, spec, op);
      return;
    }
    if (vec_ * bits_of(type()) > 128 && ctx_.sm_version < 100)
      fail_plain("Feature '256 bit wide load/store' requires .target sm_100 or higher ('" +
                 ai_.opcode + "')");
    if (op.elements.size() != vec_)
      fail_plain("Argument vector size mismatch for instruction '" + std::string(base_) + "': '" +
                 ai_.opcode + "' accesses " + std::to_string(vec_) + " element" +
                 (vec_ == 1 ? "" : "s") + ", operand " + std::to_string(i + 1) + " (" + spec.role +
                 ") has " + std::to_string(op.elements.size()));
    VectorMerge merged;
    for (const AstOperand &e : op.elements) {
      if (e.kind == Kind::Sink)
        continue;
      if (e.kind == Kind::Integer || e.kind == Kind::Float) {
        if (!is_store)
          fail_plain("Result register required for instruction '" + std::string(base_) +
                     "': an element of operand " + std::to_string(i + 1) + " is a constant");
        check_immediate(i, spec, e);
        continue;
      }
      // ptxas takes a .pred element of a vector as a 32-bit value (it mixes with .b32)
      const DType t = element_type(e);
      if (t == DType::None) {
        check_value(i, spec, e, false, false);
        continue;
      }
      merge_element(merged, t, e.name);
    }
    const DType common = merged.common;
    if (common != DType::None && !fits(spec.rule, rule_type(spec.rule), common))
      mismatch(i, spec,
               "is a vector of " + dot(common) + " registers" +
                   want(spec.rule, rule_type(spec.rule)));
  }

  static uint32_t vector_bits(DType t) { return t == DType::Pred ? 32 : bits_of(t); }

  // The elements of a {..} vector seen so far: their merged type (.bN once two differ) and the
  // last one.
  struct VectorMerge {
    DType common = DType::None;
    DType previous = DType::None;
    std::string previous_name;
  };

  // Adds element `name` of type `t`: it must suit the element before it (one size; the same type,
  // a .bN on either side, or two integers). ptxas compares neighbours: {%r, %f, %u} (.b32 .f32
  // .u32) is refused, {%f, %r, %u} taken.
  void merge_element(VectorMerge &v, DType t, const std::string &name) const {
    if (v.previous != DType::None) {
      if (vector_bits(t) != vector_bits(v.previous))
        fail_plain("Incompatible elements of vector expression in '" + ai_.opcode + "': '" +
                   v.previous_name + "' is " + dot(v.previous) + ", '" + name + "' is " + dot(t) +
                   " (the elements of a vector need one size)");
      const bool mix_ok =
          t == v.previous || is_bits(t) || is_bits(v.previous) || (is_int(t) && is_int(v.previous));
      if (!mix_ok)
        fail_plain("Vector with elements of different types are not allowed in " +
                   std::string(base_) + " instruction '" + ai_.opcode + "': '" + v.previous_name +
                   "' is " + dot(v.previous) + ", '" + name + "' is " + dot(t));
    }
    v.common = v.common == DType::None || v.common == t ? t : bits_type(vector_bits(t));
    v.previous = t;
    v.previous_name = name;
  }

  // An mma or ldmatrix fragment: a {..} of exactly the registers its elements take, whose types
  // merge into one (as ld/st data's do; an integer constant is an .s32 element) that may hold
  // the fragment (fragment_registers).
  void check_fragment(size_t i, const OperandSpec &spec, const AstOperand &op, bool is_dest) {
    const DType element = rule_type(spec.rule);
    if (op.kind != Kind::Vector)
      fail_plain("Vector expected for argument " + std::to_string(i) + " of '" + ai_.opcode +
                 "': operand " + std::to_string(i + 1) + " (" + spec.role + ") is not a {..}");
    const uint32_t bits = element == DType::S4 || element == DType::U4 ? 4 : bits_of(element);
    const size_t registers = bits >= 32 ? spec.values : spec.values * bits / 32;
    if (op.elements.size() != registers)
      fail_plain("Argument vector size mismatch for instruction '" + std::string(base_) + "': '" +
                 ai_.opcode + "' needs " + std::to_string(registers) + " registers in operand " +
                 std::to_string(i + 1) + " (" + spec.role + "), got " +
                 std::to_string(op.elements.size()));
    VectorMerge merged;
    for (const AstOperand &e : op.elements) {
      if (e.kind == Kind::Sink) {
        if (!is_dest)
          mismatch(i, spec, "has a '_' element; sinks are not allowed in a source operand");
        continue;
      }
      if ((e.kind == Kind::Integer || e.kind == Kind::Float) && is_dest)
        fail_plain("Result register required for instruction '" + std::string(base_) +
                   "': an element of operand " + std::to_string(i + 1) + " is a constant");
      if (e.kind == Kind::Float)
        continue; // a floating-point constant takes the vector's type
      DType t = e.kind == Kind::Integer ? DType::S32 : element_type(e);
      const std::string e_name = e.kind == Kind::Integer ? std::to_string(e.int_value) : e.name;
      if (t == DType::None) {
        check_value(i, spec, e, false, false);
        continue;
      }
      merge_element(merged, t, e_name);
    }
    const DType common = merged.common;
    if (common == DType::None && is_dest)
      fail_plain("Unable to infer type of vector elements in operand " + std::to_string(i + 1) +
                 " of '" + ai_.opcode + "'");
    const bool sparse = has("sp") || has("sp::ordered_metadata");
    const TypeSet allowed =
        sparse ? sparse_fragment_registers(element) : fragment_registers(element);
    if (common != DType::None && !allowed.has(common))
      mismatch(i, spec,
               "is a vector of " + dot(common) + " registers; " + dot(element) + " elements need " +
                   fragment_need(allowed) + " registers");
  }

  // mma.sp's metadata: one register of 32 bits (or a .pred), or a 0f constant, alone or as a {..}
  // of one; no integer constant, no sink (ptxas -arch=sm_80). ptxas also takes a {..} of several
  // registers, whose meaning the PTX ISA does not give: refused here.
  void check_sparse_metadata(size_t i, const OperandSpec &spec, const AstOperand &op) {
    const AstOperand *reg = &op;
    if (op.kind == Kind::Vector) {
      if (op.elements.size() != 1)
        mismatch(i, spec,
                 "is a vector of " + std::to_string(op.elements.size()) +
                     "; the metadata is one 32-bit register");
      reg = &op.elements[0];
    }
    if (reg->kind == Kind::Float && reg->float_is_f32_bits)
      return; // ptxas takes a 0fXXXXXXXX constant (its 32 bits), not an integer or 0d one
    if (reg->kind != Kind::Name)
      mismatch(i, spec,
               "must be a 32-bit register (or a 0f constant; the metadata is never an integer "
               "or 64-bit constant, nor '_')");
    const CheckedName n = ctx_.lookup(reg->name);
    if (n.kind == CheckedName::Kind::Unknown)
      return; // the decoder reports unknown names
    if (n.kind != CheckedName::Kind::Register)
      mismatch(i, spec, "'" + reg->name + "' is not a register; the metadata is a 32-bit register");
    if (!fragment_registers(DType::S8).has(n.type))
      mismatch(i, spec,
               "'" + reg->name + "' is a " + dot(n.type) +
                   " register; the metadata needs a 32-bit register (.b32, .u32, .s32, "
                   ".f32) or a .pred");
  }

  static std::string fragment_need(TypeSet allowed) {
    std::string list;
    for (DType t : {DType::B32, DType::U32, DType::S32, DType::F32, DType::F16x2, DType::B64,
                    DType::U64, DType::S64, DType::F64, DType::Pred}) {
      if (allowed.has(t))
        list += (list.empty() ? "" : " or ") + dot(t);
    }
    return list;
  }

  // mov's vector forms: {a, b} packs registers into (or splits a value across) a .bN value.
  void check_mov_vector(size_t i, const OperandSpec &spec, const AstOperand &op) {
    const DType t = type();
    if (!is_bits(t))
      mismatch(i, spec, "is a {..} vector; only mov.b16/.b32/.b64 packs or splits vectors");
    uint32_t total = 0;
    uint32_t size = 0;
    for (const AstOperand &e : op.elements) {
      DType et = element_type(e);
      if (e.kind == Kind::Sink && spec.kind == ArgKind::MovDest)
        continue;
      if (e.kind != Kind::Name || et == DType::None) {
        if (e.kind == Kind::Name && ctx_.lookup(e.name).kind == CheckedName::Kind::Unknown)
          return; // the decoder reports unknown names
        mismatch(i, spec, "has an element that is not a data register");
      }
      if (size && vector_bits(et) != size)
        fail_plain("Incompatible elements of vector expression in '" + ai_.opcode + "'");
      size = vector_bits(et);
    }
    total = size * static_cast<uint32_t>(op.elements.size());
    if ((op.elements.size() != 2 && op.elements.size() != 4) || total != bits_of(t))
      mismatch(i, spec,
               "is a vector of " + std::to_string(op.elements.size()) + " x " +
                   std::to_string(size) + " bits; '" + ai_.opcode + "' needs " +
                   std::to_string(bits_of(t)) + " bits in 2 or 4 elements");
  }

  // An address in `space`; `wide_register` asks for 64 bits where a .global or generic address
  // is in a register (ld, st, atom; cp.async's source takes any integer register).
  void check_address(size_t i, const OperandSpec &spec, const AstOperand &op, Space space,
                     bool wide_register = true) {
    const std::string name(base_);
    if (op.kind != Kind::Address)
      mismatch(i, spec, "is not an address: write [reg], [var] or [var+offset]");
    if (op.name.empty()) {
      if (space != Space::Local)
        fail_plain("Immediate addresses allowed only for .local state space: operand " +
                   std::to_string(i + 1) + " of '" + ai_.opcode + "' is [" +
                   std::to_string(op.int_value) + "]");
      return;
    }
    CheckedName n = ctx_.lookup(op.name);
    switch (n.kind) {
    case CheckedName::Kind::Unknown: return;
    case CheckedName::Kind::Special:
      fail_plain("Illegal operand type to instruction '" + name + "': the special register '" +
                 op.name + "' cannot be an address");
    case CheckedName::Kind::Register:
      if (!is_int(n.type) && !is_bits(n.type))
        fail_plain("Illegal to use symbol '" + op.name + "' of type " + dot(n.type) +
                   " as address operand. Use integer or bit only (in '" + ai_.opcode + "')");
      if (wide_register && bits_of(n.type) == 32 &&
          (space == Space::Global || space == Space::Generic))
        fail_plain("Program uses 32-bit address in '" + ai_.opcode + "': '" + op.name +
                   "' is a 32-bit register, and a " +
                   (space == Space::Global ? std::string(".global") : std::string("generic")) +
                   " address needs 64 bits with .address_size 64");
      return;
    case CheckedName::Kind::Variable: {
      const Space vs = n.space;
      const bool ok =
          vs == space || (space == Space::Generic &&
                          (vs == Space::Global || vs == Space::Shared || vs == Space::Local));
      if (!ok)
        fail_plain("State space mismatch between instruction and address in instruction '" + name +
                   "': '" + op.name + "' is in the ." + space_name(vs) + " state space, '" +
                   ai_.opcode + "' accesses " +
                   (space == Space::Generic ? std::string("the generic space (.global, .shared or "
                                                          ".local variables)")
                                            : "." + std::string(space_name(space))));
      return;
    }
    }
  }

  void check_cvta_source(size_t i, const OperandSpec &spec, const AstOperand &op) {
    if (op.kind == Kind::Name && ctx_.lookup(op.name).kind == CheckedName::Kind::Variable) {
      CheckedName n = ctx_.lookup(op.name);
      if (has("to"))
        fail_plain("Argument " + std::to_string(i) +
                   " of instruction 'cvta.to': must be "
                   "register; '" +
                   op.name + "' is a variable");
      if (n.space != space_)
        fail_plain("State space mismatch between instruction and address in instruction "
                   "'cvta': '" +
                   op.name + "' is in the ." + space_name(n.space) + " state space, '" +
                   ai_.opcode + "' converts ." + space_name(space_));
      return;
    }
    check_value(i, spec, op, true, false);
  }

  void check_operand(size_t i, const OperandSpec &spec, const AstOperand &op) {
    switch (spec.kind) {
    case ArgKind::Dest: check_dest(i, spec, op); return;
    case ArgKind::MovDest:
      if (op.kind == Kind::Vector)
        check_mov_vector(i, spec, op);
      else
        check_dest(i, spec, op);
      return;
    case ArgKind::DestPair: check_pair(i, spec, op); return;
    case ArgKind::Src: check_value(i, spec, op, true, false); return;
    case ArgKind::Imm:
      if (op.kind != Kind::Integer)
        mismatch(i, spec, "must be an integer constant");
      return;
    case ArgKind::Address: check_address(i, spec, op, space_); return;
    case ArgKind::SharedAddress: check_address(i, spec, op, Space::Shared); return;
    case ArgKind::GlobalAddress: check_address(i, spec, op, Space::Global, false); return;
    case ArgKind::Fragment: check_fragment(i, spec, op, false); return;
    case ArgKind::DestFragment: check_fragment(i, spec, op, true); return;
    case ArgKind::SparseMetadata: check_sparse_metadata(i, spec, op); return;
    case ArgKind::SparsitySelector:
      if (op.kind != Kind::Integer)
        mismatch(i, spec, "must be an integer constant");
      if (static_cast<int64_t>(op.int_value) < 0 || op.int_value > spec.values)
        fail_plain("Argument " + std::to_string(i + 1) + " of instruction 'Sparse mma': value '" +
                   std::to_string(static_cast<int64_t>(op.int_value)) +
                   "' out of range, expected to be in range [0.." + std::to_string(spec.values) +
                   "] ('" + ai_.opcode + "')");
      return;
    case ArgKind::Label:
      if (op.kind != Kind::Name)
        mismatch(i, spec, "must be a label");
      if (ctx_.lookup(op.name).kind != CheckedName::Kind::Unknown)
        mismatch(i, spec, "'" + op.name + "' is not a label");
      return;
    case ArgKind::MovSrc:
      if (op.kind == Kind::Vector) {
        check_mov_vector(i, spec, op);
        return;
      }
      if (op.kind == Kind::Name && ctx_.lookup(op.name).kind == CheckedName::Kind::Variable) {
        const DType t = type();
        if (!(is_int(t) || is_bits(t)) || bits_of(t) < 16)
          mismatch(i, spec,
                   "is the address of '" + op.name + "'; an address needs an " +
                       "integer type (mov.u64)");
        return;
      }
      check_value(i, spec, op, true, false);
      return;
    case ArgKind::CvtaSrc: check_cvta_source(i, spec, op); return;
    case ArgKind::Data: check_data(i, spec, op, base_ == "st"); return;
    }
  }
};

} // namespace

int sm_version_of(std::string_view target) {
  if (target.rfind("sm_", 0) != 0)
    return 0;
  // Saturates: a version of more digits than any real one (found by fuzzing: sm_8888...80)
  // must not overflow; it reads as a very new target.
  constexpr int kLargest = 1000000;
  int v = 0;
  for (size_t i = 3; i < target.size() && target[i] >= '0' && target[i] <= '9'; ++i)
    v = v >= kLargest ? kLargest : v * 10 + (target[i] - '0');
  return v;
}

const InstructionForm *check_instruction(const AstInstruction &ai, const CheckContext &ctx) {
  return Checker(ai, ctx).run();
}

} // namespace tcjit::emu
