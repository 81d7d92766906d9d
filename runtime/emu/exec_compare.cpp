// setp (every comparison, ordered and unordered, with .and/.or/.xor combine), selp, slct.
#include <cmath>

#include "runtime/emu/exec_context.h"
#include "runtime/emu/exec_families.h"
#include "runtime/emu/float_format.h"
#include "runtime/emu/instruction_decode.h"

namespace tcjit::emu {

namespace {

template <typename T> bool compare_int(CmpOp op, T a, T b) {
  switch (op) {
  case CmpOp::Eq: return a == b;
  case CmpOp::Ne: return a != b;
  case CmpOp::Lt:
  case CmpOp::Lo: return a < b;
  case CmpOp::Le:
  case CmpOp::Ls: return a <= b;
  case CmpOp::Gt:
  case CmpOp::Hi: return a > b;
  case CmpOp::Ge:
  case CmpOp::Hs: return a >= b;
  case CmpOp::Equ: return a == b;
  case CmpOp::Neu: return a != b;
  case CmpOp::Ltu: return a < b;
  case CmpOp::Leu: return a <= b;
  case CmpOp::Gtu: return a > b;
  case CmpOp::Geu: return a >= b;
  case CmpOp::Num: return true;
  case CmpOp::Nan: return false;
  case CmpOp::None: return false;
  }
  return false;
}

bool compare_float(CmpOp op, double a, double b) {
  const bool unordered = std::isnan(a) || std::isnan(b);
  switch (op) {
  case CmpOp::Eq: return !unordered && a == b;
  case CmpOp::Ne: return !unordered && a != b;
  case CmpOp::Lt:
  case CmpOp::Lo: return !unordered && a < b;
  case CmpOp::Le:
  case CmpOp::Ls: return !unordered && a <= b;
  case CmpOp::Gt:
  case CmpOp::Hi: return !unordered && a > b;
  case CmpOp::Ge:
  case CmpOp::Hs: return !unordered && a >= b;
  case CmpOp::Equ: return unordered || a == b;
  case CmpOp::Neu: return unordered || a != b;
  case CmpOp::Ltu: return unordered || a < b;
  case CmpOp::Leu: return unordered || a <= b;
  case CmpOp::Gtu: return unordered || a > b;
  case CmpOp::Geu: return unordered || a >= b;
  case CmpOp::Num: return !unordered;
  case CmpOp::Nan: return unordered;
  case CmpOp::None: return false;
  }
  return false;
}

// Compares two raw operand values of `type` (one element; packed types compare the low half).
inline bool compare(CmpOp op, DType type, uint64_t a, uint64_t b, bool ftz) {
  switch (type) {
  case DType::S8: return compare_int<int8_t>(op, int8_t(a), int8_t(b));
  case DType::S16: return compare_int<int16_t>(op, int16_t(a), int16_t(b));
  case DType::S32: return compare_int<int32_t>(op, int32_t(a), int32_t(b));
  case DType::S64: return compare_int<int64_t>(op, int64_t(a), int64_t(b));
  case DType::U8:
  case DType::B8: return compare_int<uint8_t>(op, uint8_t(a), uint8_t(b));
  case DType::U16:
  case DType::B16: return compare_int<uint16_t>(op, uint16_t(a), uint16_t(b));
  case DType::U32:
  case DType::B32: return compare_int<uint32_t>(op, uint32_t(a), uint32_t(b));
  case DType::U64:
  case DType::B64: return compare_int<uint64_t>(op, a, b);
  case DType::F32: {
    float x = f32_of(a), y = f32_of(b);
    if (ftz) {
      x = flush_subnormal(x);
      y = flush_subnormal(y);
    }
    return compare_float(op, x, y);
  }
  case DType::F64: return compare_float(op, f64_of(a), f64_of(b));
  case DType::F16:
  case DType::F16x2:
    return compare_float(op, f16_bits_to_f32(uint16_t(a)), f16_bits_to_f32(uint16_t(b)));
  case DType::BF16:
  case DType::BF16x2:
    return compare_float(op, bf16_bits_to_f32(uint16_t(a)), bf16_bits_to_f32(uint16_t(b)));
  case DType::None:
  case DType::B128:
  case DType::TF32:
  case DType::Pred:
  case DType::S4:
  case DType::U4:
  case DType::E4M3:
  case DType::E5M2:
  case DType::B1: break;
  }
  return false;
}

template <typename T> T as(uint64_t v) {
  if constexpr (std::is_same_v<T, float>)
    return f32_of(v);
  else
    return static_cast<T>(v);
}

// setp with an integer or f32 type and no combine: the comparison hoisted out of the lane loop.
template <typename T>
bool setp_typed(uint64_t *d, LaneValues v0, LaneValues v1, uint32_t mask, CmpOp op) {
  auto loop = [&](auto f) {
    for_each_lane(mask, [&](uint32_t l) { d[l] = f(as<T>(v0[l]), as<T>(v1[l])) ? 1 : 0; });
    return true;
  };
  // for floats the ordered comparisons are false on NaN, exactly as C++ comparisons
  if (op == CmpOp::Eq)
    return loop([](T a, T b) { return a == b; });
  if (op == CmpOp::Ne && !std::is_floating_point_v<T>)
    return loop([](T a, T b) { return a != b; });
  if (op == CmpOp::Lt || op == CmpOp::Lo)
    return loop([](T a, T b) { return a < b; });
  if (op == CmpOp::Le || op == CmpOp::Ls)
    return loop([](T a, T b) { return a <= b; });
  if (op == CmpOp::Gt || op == CmpOp::Hi)
    return loop([](T a, T b) { return a > b; });
  if (op == CmpOp::Ge || op == CmpOp::Hs)
    return loop([](T a, T b) { return a >= b; });
  return false;
}

bool setp_fast(ExecContext &ctx, Warp &w, const Instr &in, uint32_t mask) {
  LaneScratch k0, k1;
  const LaneValues v0 = lane_values(ctx, w, in.src[0], k0), v1 = lane_values(ctx, w, in.src[1], k1);
  uint64_t *d = w.regs + size_t{in.dst.reg} * 32;
  switch (in.type2) {
  case DType::S32: return setp_typed<int32_t>(d, v0, v1, mask, in.cmp);
  case DType::U32:
  case DType::B32: return setp_typed<uint32_t>(d, v0, v1, mask, in.cmp);
  case DType::S64: return setp_typed<int64_t>(d, v0, v1, mask, in.cmp);
  case DType::U64:
  case DType::B64: return setp_typed<uint64_t>(d, v0, v1, mask, in.cmp);
  case DType::F32: return !in.ftz && setp_typed<float>(d, v0, v1, mask, in.cmp);
  case DType::None:
  case DType::B8:
  case DType::B16:
  case DType::B128:
  case DType::U8:
  case DType::U16:
  case DType::S8:
  case DType::S16:
  case DType::F16:
  case DType::F16x2:
  case DType::BF16:
  case DType::BF16x2:
  case DType::TF32:
  case DType::F64:
  case DType::Pred:
  case DType::S4:
  case DType::U4:
  case DType::E4M3:
  case DType::E5M2:
  case DType::B1: return false;
  }
  return false;
}

} // namespace

void exec_compare(ExecContext &ctx, Warp &w, const Instr &in, uint32_t mask) {
  if (in.op == Op::Setp && in.bop == BoolOp::None && in.dst2.kind != OperandKind::Reg &&
      setp_fast(ctx, w, in, mask))
    return;
  if (in.op == Op::Setp) {
    LaneScratch k0, k1;
    const LaneValues v0 = lane_values(ctx, w, in.src[0], k0),
                     v1 = lane_values(ctx, w, in.src[1], k1);
    for_each_lane(mask, [&](uint32_t l) {
      bool r = compare(in.cmp, in.type2, v0[l], v1[l], in.ftz);
      bool q = !r;
      if (in.bop != BoolOp::None) {
        bool c = read_pred(ctx, w, in.src[2], l);
        switch (in.bop) {
        case BoolOp::And:
          r = r && c;
          q = q && c;
          break;
        case BoolOp::Or:
          r = r || c;
          q = q || c;
          break;
        case BoolOp::Xor:
          r = r != c;
          q = q != c;
          break;
        case BoolOp::None: break;
        }
      }
      write_reg(w, in.dst.reg, l, r ? 1 : 0);
      if (in.dst2.kind == OperandKind::Reg)
        write_reg(w, in.dst2.reg, l, q ? 1 : 0);
    });
    return;
  }
  if (in.op == Op::Selp) {
    LaneScratch k0, k1, k2;
    const LaneValues a = lane_values(ctx, w, in.src[0], k0), b = lane_values(ctx, w, in.src[1], k1),
                     p = lane_values(ctx, w, in.src[2], k2);
    const uint32_t bytes = dtype_bytes(in.type);
    const uint64_t keep = bytes >= 8 ? ~uint64_t{0} : (uint64_t{1} << (bytes * 8)) - 1;
    const bool negated = in.src[2].negated;
    store_lanes(mask, w.regs + size_t{in.dst.reg} * 32,
                [&](uint32_t l) { return (((p[l] != 0) != negated) ? a[l] : b[l]) & keep; });
    return;
  }
  if (in.op == Op::Slct) {
    for_each_lane(mask, [&](uint32_t l) {
      uint64_t c = read_operand(ctx, w, in.src[2], l);
      bool take_a;
      if (in.type2 == DType::F32) {
        float f = f32_of(c);
        if (in.ftz)
          f = flush_subnormal(f);
        take_a = f >= 0.0f || (f == 0.0f); // -0.0 >= 0 is true
        if (std::isnan(f))
          take_a = false;
      } else {
        take_a = static_cast<int32_t>(c) >= 0;
      }
      write_reg(
          w, in.dst.reg, l,
          mask_to_bytes(read_operand(ctx, w, in.src[take_a ? 0 : 1], l), dtype_bytes(in.type)));
    });
    return;
  }
  fault(ctx, w, in, -1, "internal error: not a compare instruction");
}

void decode_setp(DecodeState &s) {
  Instr &in = s.in;
  const auto &ops = s.ai.operands;
  in.op = Op::Setp;
  in.cls = InstrClass::Integer;
  in.cmp = take_comparison(s.mods);
  if (in.cmp == CmpOp::None)
    decode_fail(s, "setp needs a comparison");
  if (s.mods.take("and"))
    in.bop = BoolOp::And;
  else if (s.mods.take("or"))
    in.bop = BoolOp::Or;
  else if (s.mods.take("xor"))
    in.bop = BoolOp::Xor;
  in.ftz = s.mods.take("ftz");
  in.type2 = take_one_type(s);
  if (dtype_is_float(in.type2))
    in.cls = InstrClass::Float;
  expect_no_modifiers_left(s);
  in.exec = exec_compare;
  if (ops[0].kind == AstOperand::Kind::Pair) {
    in.dst = dest_operand(s, ops[0].elements[0], DType::Pred);
    in.dst2 = dest_operand(s, ops[0].elements[1], DType::Pred);
  } else {
    in.dst = dest_operand(s, ops[0], DType::Pred);
  }
  in.src[0] = source_operand(s, 1, in.type2);
  in.src[1] = source_operand(s, 2, in.type2);
  if (in.bop != BoolOp::None)
    in.src[2] = source_operand(s, 3, DType::Pred);
}

void decode_selp(DecodeState &s) {
  Instr &in = s.in;
  in.op = Op::Selp;
  in.type = take_one_type(s);
  expect_no_modifiers_left(s);
  in.exec = exec_compare;
  in.dst = dest_operand(s, s.ai.operands[0], in.type);
  in.src[0] = source_operand(s, 1, in.type);
  in.src[1] = source_operand(s, 2, in.type);
  in.src[2] = source_operand(s, 3, DType::Pred);
}

void decode_slct(DecodeState &s) {
  Instr &in = s.in;
  in.op = Op::Slct;
  in.ftz = s.mods.take("ftz");
  auto ts = s.mods.take_types();
  if (ts.size() != 2)
    decode_fail(s, "slct needs two types");
  in.type = ts[0];
  in.type2 = ts[1];
  expect_no_modifiers_left(s);
  in.exec = exec_compare;
  in.dst = dest_operand(s, s.ai.operands[0], in.type);
  in.src[0] = source_operand(s, 1, in.type);
  in.src[1] = source_operand(s, 2, in.type);
  in.src[2] = source_operand(s, 3, in.type2);
}

} // namespace tcjit::emu
