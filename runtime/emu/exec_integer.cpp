// Integer and bitwise instructions on 16/32/64-bit (and .pred for the logic ops).
#include <bit>
#include <type_traits>

#include "runtime/emu/exec_context.h"
#include "runtime/emu/exec_families.h"
#include "runtime/emu/instruction_decode.h"

namespace tcjit::emu {

namespace {

template <typename T> struct Wider;
template <> struct Wider<int16_t> { using type = int32_t; };
template <> struct Wider<uint16_t> { using type = uint32_t; };
template <> struct Wider<int32_t> { using type = int64_t; };
template <> struct Wider<uint32_t> { using type = uint64_t; };
template <> struct Wider<int64_t> { using type = __int128; };
template <> struct Wider<uint64_t> { using type = unsigned __int128; };

template <typename T> uint64_t bits(T v) {
  return static_cast<uint64_t>(static_cast<std::make_unsigned_t<T>>(v));
}

template <typename T> T bfe(T a, uint32_t pos, uint32_t len) {
  using U = std::make_unsigned_t<T>;
  constexpr uint32_t msb = sizeof(T) * 8 - 1;
  U ua = static_cast<U>(a);
  bool sbit = false;
  if (std::is_signed_v<T> && len != 0)
    sbit = (ua >> std::min(pos + len - 1, msb)) & 1;
  U d = 0;
  for (uint32_t i = 0; i <= msb; ++i) {
    bool bit = (i < len && pos + i <= msb) ? ((ua >> (pos + i)) & 1) : sbit;
    d |= static_cast<U>(bit) << i;
  }
  return static_cast<T>(d);
}

template <typename T> T bfi(T a, T b, uint32_t pos, uint32_t len) {
  using U = std::make_unsigned_t<T>;
  constexpr uint32_t msb = sizeof(T) * 8 - 1;
  U f = static_cast<U>(b), ua = static_cast<U>(a);
  for (uint32_t i = 0; i < len && pos + i <= msb; ++i) {
    U bit = static_cast<U>(U(1) << (pos + i));
    f = static_cast<U>(((ua >> i) & 1) ? (f | bit) : (f & ~bit));
  }
  return static_cast<T>(f);
}

uint32_t prmt(uint32_t a, uint32_t b, uint32_t c, uint8_t mode, bool &ok) {
  uint64_t src = uint64_t{a} | (uint64_t{b} << 32);
  auto byte = [&](uint32_t i) { return static_cast<uint32_t>((src >> (8 * (i & 7))) & 0xff); };
  uint32_t d = 0;
  switch (mode) {
  case 0: // default: four 4-bit selectors, bit 3 replicates the sign
    for (uint32_t i = 0; i < 4; ++i) {
      uint32_t sel = (c >> (4 * i)) & 0xf;
      uint32_t v = byte(sel & 7);
      if (sel & 8)
        v = (v & 0x80) ? 0xff : 0;
      d |= v << (8 * i);
    }
    return d;
  case 1: // f4e
    for (uint32_t i = 0; i < 4; ++i)
      d |= byte((c & 3) + i) << (8 * i);
    return d;
  case 3: { // rc8
    uint32_t v = byte(c & 3);
    return v * 0x01010101u;
  }
  case 6: { // rc16
    uint32_t lo = (c & 1) ? (a >> 16) : (a & 0xffff);
    return lo | (lo << 16);
  }
  default: ok = false; return 0;
  }
}

uint32_t lop3(uint32_t a, uint32_t b, uint32_t c, uint32_t lut) {
  uint32_t r = 0;
  for (uint32_t i = 0; i < 8; ++i) {
    if (lut >> i & 1)
      r |= ((i & 4) ? a : ~a) & ((i & 2) ? b : ~b) & ((i & 1) ? c : ~c);
  }
  return r;
}

// The most common converged forms, one tight loop each; false when `in` is none of them.
template <typename T>
bool run_common_form(const Instr &in, uint32_t mask, uint64_t *d, const LaneValues &v0,
                     const LaneValues &v1, const LaneValues &v2) {
  using U = std::make_unsigned_t<T>;
  using W = typename Wider<T>::type;
  constexpr uint32_t nbits = sizeof(T) * 8;
  if (in.op == Op::Add && !in.carry_in && !in.carry_out && !in.sat) {
    store_lanes(mask, d, [&](uint32_t l) {
      return bits(static_cast<T>(static_cast<U>(v0[l]) + static_cast<U>(v1[l])));
    });
    return true;
  }
  const bool plain = !in.carry_in && !in.carry_out && !in.sat;
  if (!plain)
    return false;
  auto binary = [&](auto f) {
    store_lanes(mask, d, [&](uint32_t l) {
      return bits(static_cast<T>(f(static_cast<U>(v0[l]), static_cast<U>(v1[l]))));
    });
    return true;
  };
  if (in.op == Op::Sub)
    return binary([](U a, U b) { return static_cast<U>(a - b); });
  if (in.op == Op::Mul && in.mul == MulMode::Lo)
    return binary([](U a, U b) { return static_cast<U>(a * b); });
  if (in.op == Op::And)
    return binary([](U a, U b) { return static_cast<U>(a & b); });
  if (in.op == Op::Or)
    return binary([](U a, U b) { return static_cast<U>(a | b); });
  if (in.op == Op::Xor)
    return binary([](U a, U b) { return static_cast<U>(a ^ b); });
  if (in.op == Op::Shl) {
    return binary([](U a, U b) {
      const uint32_t n = static_cast<uint32_t>(b);
      return n >= nbits ? U(0) : static_cast<U>(a << n);
    });
  }
  if (in.op == Op::Shr && !std::is_signed_v<T>) {
    return binary([](U a, U b) {
      const uint32_t n = static_cast<uint32_t>(b);
      return n >= nbits ? U(0) : static_cast<U>(a >> n);
    });
  }
  if ((in.op == Op::Min || in.op == Op::Max) && !in.relu) {
    const bool is_min = in.op == Op::Min;
    return binary([is_min](U ua, U ub) {
      const T a = static_cast<T>(ua), b = static_cast<T>(ub);
      return static_cast<U>(is_min ? (a < b ? a : b) : (a > b ? a : b));
    });
  }
  if (in.op == Op::Mul && in.mul == MulMode::Wide && sizeof(T) <= 4) {
    for_each_lane(mask, [&](uint32_t l) {
      d[l] = static_cast<uint64_t>(static_cast<W>(static_cast<T>(v0[l])) *
                                   static_cast<W>(static_cast<T>(v1[l])));
    });
    return true;
  }
  if (in.op == Op::Mad && in.mul == MulMode::Lo) {
    for_each_lane(mask, [&](uint32_t l) {
      d[l] = bits(static_cast<T>(static_cast<U>(static_cast<U>(v0[l]) * static_cast<U>(v1[l])) +
                                 static_cast<U>(v2[l])));
    });
    return true;
  }
  return false;
}

// add/sub of lane `l`, with carry in and out (the warp's carry flags) and .sat.
template <typename T> uint64_t add_sub_lane(Warp &w, const Instr &in, uint32_t l, T a, T b) {
  using U = std::make_unsigned_t<T>;
  using W = typename Wider<T>::type;
  const U ua = static_cast<U>(a), ub = static_cast<U>(b);
  U rhs = in.op == Op::Sub ? static_cast<U>(~ub) : ub;
  U cin = in.carry_in ? ((w.carry >> l) & 1) : (in.op == Op::Sub ? 1 : 0);
  if (in.sat && std::is_signed_v<T>) {
    W x = in.op == Op::Add ? W(a) + W(b) : W(a) - W(b);
    if (x > W(std::numeric_limits<T>::max()))
      x = std::numeric_limits<T>::max();
    if (x < W(std::numeric_limits<T>::min()))
      x = std::numeric_limits<T>::min();
    return bits(static_cast<T>(x));
  }
  U sum = static_cast<U>(ua + rhs);
  bool carry = sum < ua;
  U sum2 = static_cast<U>(sum + cin);
  carry |= sum2 < sum;
  if (in.carry_out)
    w.carry = (w.carry & ~(1u << l)) | (uint32_t(carry) << l);
  return bits(static_cast<T>(sum2));
}

// mul/mad of lane `l` (.lo .hi .wide, carry in and out, mad.hi.sat).
template <typename T>
uint64_t mul_mad_lane(ExecContext &ctx, Warp &w, const Instr &in, uint32_t l, T a, T b,
                      uint64_t raw_c) {
  using U = std::make_unsigned_t<T>;
  using W = typename Wider<T>::type;
  constexpr uint32_t nbits = sizeof(T) * 8;
  const T c = static_cast<T>(raw_c);
  const U ua = static_cast<U>(a), ub = static_cast<U>(b), uc = static_cast<U>(c);
  W p = W(a) * W(b);
  if (in.mul == MulMode::Wide) {
    if constexpr (sizeof(T) <= 4) {
      uint64_t x = static_cast<uint64_t>(static_cast<int64_t>(p));
      if (in.op == Op::Mad)
        x += raw_c; // mad.wide: c has the wide type
      return x;
    } else {
      fault(ctx, w, in, static_cast<int>(l), ".wide is not defined for 64-bit types");
    }
  }
  U v = in.mul == MulMode::Hi ? static_cast<U>(p >> nbits) : static_cast<U>(ua * ub);
  if (in.op == Op::Mad) {
    if (in.sat && std::is_signed_v<T> && in.mul == MulMode::Hi) {
      W x = W(static_cast<T>(v)) + W(c);
      x = std::min<W>(std::max<W>(x, std::numeric_limits<T>::min()), std::numeric_limits<T>::max());
      v = static_cast<U>(static_cast<T>(x));
    } else {
      U cin = in.carry_in ? ((w.carry >> l) & 1) : 0;
      U sum = static_cast<U>(v + uc);
      bool carry = sum < v;
      U sum2 = static_cast<U>(sum + cin);
      carry |= sum2 < sum;
      if (in.carry_out)
        w.carry = (w.carry & ~(1u << l)) | (uint32_t(carry) << l);
      v = sum2;
    }
  }
  return bits(static_cast<T>(v));
}

// mul24/mad24 of lane `l`.
template <typename T> uint64_t mul24_lane(const Instr &in, T a, T b, T c) {
  using U = std::make_unsigned_t<T>;
  const U ua = static_cast<U>(a), ub = static_cast<U>(b), uc = static_cast<U>(c);
  int64_t x = std::is_signed_v<T> ? (int64_t(uint64_t(ua) << 40) >> 40) : int64_t(ua & 0xffffff);
  int64_t y = std::is_signed_v<T> ? (int64_t(uint64_t(ub) << 40) >> 40) : int64_t(ub & 0xffffff);
  int64_t p = x * y;
  uint32_t v = in.mul == MulMode::Hi ? uint32_t(uint64_t(p) >> 16) : uint32_t(p);
  if (in.op == Op::Mad24)
    v += static_cast<uint32_t>(uc);
  return v;
}

// The result of `in` in lane `l` from the raw source values (any form, converged or not).
template <typename T>
uint64_t lane_result(ExecContext &ctx, Warp &w, const Instr &in, uint32_t l, uint64_t raw_a,
                     uint64_t raw_b, uint64_t raw_c) {
  using U = std::make_unsigned_t<T>;
  constexpr uint32_t nbits = sizeof(T) * 8;
  const T a = static_cast<T>(raw_a);
  const T b = static_cast<T>(raw_b);
  const T c = static_cast<T>(raw_c);
  const U ua = static_cast<U>(a), ub = static_cast<U>(b), uc = static_cast<U>(c);
  switch (in.op) {
  case Op::Add:
  case Op::Sub: return add_sub_lane<T>(w, in, l, a, b);
  case Op::Mul:
  case Op::Mad: return mul_mad_lane<T>(ctx, w, in, l, a, b, raw_c);
  case Op::Mul24:
  case Op::Mad24: return mul24_lane<T>(in, a, b, c);
  case Op::Div:
    if (b == 0)
      return bits(static_cast<T>(~U(0)));
    if (std::is_signed_v<T> && a == std::numeric_limits<T>::min() && b == T(-1))
      return bits(a);
    return bits(static_cast<T>(a / b));
  case Op::Rem:
    if (b == 0)
      return bits(a);
    if (std::is_signed_v<T> && b == T(-1))
      return 0;
    return bits(static_cast<T>(a % b));
  case Op::Min:
  case Op::Max: {
    const uint64_t r = in.op == Op::Min ? bits(a < b ? a : b) : bits(a > b ? a : b);
    return in.relu && std::is_signed_v<T> && static_cast<T>(r) < 0 ? 0 : r;
  }
  case Op::Abs: return bits(static_cast<T>(a < 0 ? static_cast<U>(0) - ua : ua));
  case Op::Neg: return bits(static_cast<T>(static_cast<U>(0) - ua));
  case Op::Shl: {
    uint32_t n = static_cast<uint32_t>(raw_b);
    return n >= nbits ? 0 : bits(static_cast<T>(static_cast<U>(ua << n)));
  }
  case Op::Shr: {
    uint32_t n = static_cast<uint32_t>(raw_b);
    if constexpr (std::is_signed_v<T>)
      return bits(static_cast<T>(a >> std::min(n, nbits - 1)));
    else
      return n >= nbits ? 0 : bits(static_cast<T>(ua >> n));
  }
  case Op::Shf: {
    uint64_t lo = static_cast<uint32_t>(ua), hi = static_cast<uint32_t>(ub);
    uint32_t n = static_cast<uint32_t>(raw_c);
    n = (in.mode & 2) ? (n & 31) : std::min(n, 32u);
    uint64_t v = (hi << 32) | lo;
    return (in.mode & 1) ? static_cast<uint32_t>(v >> n) : static_cast<uint32_t>((v << n) >> 32);
  }
  case Op::Bfe:
    return bits(
        bfe<T>(a, static_cast<uint32_t>(raw_b) & 0xff, static_cast<uint32_t>(raw_c) & 0xff));
  case Op::Bfi:
    return bits(bfi<T>(a, b, static_cast<uint32_t>(raw_c) & 0xff,
                       static_cast<uint32_t>(read_operand(ctx, w, in.src[3], l)) & 0xff));
  case Op::Prmt: {
    bool ok = true;
    const uint64_t r = prmt(static_cast<uint32_t>(ua), static_cast<uint32_t>(ub),
                            static_cast<uint32_t>(uc), in.mode, ok);
    if (!ok)
      fault(ctx, w, in, static_cast<int>(l), "this prmt mode is not supported by the emulator");
    return r;
  }
  case Op::Popc: return static_cast<uint64_t>(std::popcount(ua));
  case Op::Clz: return static_cast<uint64_t>(std::countl_zero(ua));
  case Op::Brev: {
    U v = 0;
    for (uint32_t i = 0; i < nbits; ++i)
      v |= static_cast<U>(((ua >> i) & 1)) << (nbits - 1 - i);
    return bits(v);
  }
  case Op::Bfind: {
    U v = ua;
    if (std::is_signed_v<T> && a < 0)
      v = static_cast<U>(~ua);
    if (v == 0)
      return 0xffffffffu;
    uint32_t pos = nbits - 1 - static_cast<uint32_t>(std::countl_zero(v));
    return in.mode ? (nbits - 1 - pos) : pos;
  }
  case Op::Lop3:
    return lop3(static_cast<uint32_t>(ua), static_cast<uint32_t>(ub), static_cast<uint32_t>(uc),
                static_cast<uint32_t>(read_operand(ctx, w, in.src[3], l)) & 0xff);
  case Op::And: return bits(static_cast<T>(ua & ub));
  case Op::Or: return bits(static_cast<T>(ua | ub));
  case Op::Xor: return bits(static_cast<T>(ua ^ ub));
  case Op::Not: return bits(static_cast<T>(~ua));
  case Op::Cnot: return a == 0 ? 1 : 0;
  case Op::Sad:
    return bits(static_cast<T>(uc + (a > b ? static_cast<U>(ua - ub) : static_cast<U>(ub - ua))));
  case Op::Mov:
  case Op::Setp:
  case Op::Selp:
  case Op::Slct:
  case Op::Fma:
  case Op::Rcp:
  case Op::Sqrt:
  case Op::Rsqrt:
  case Op::Ex2:
  case Op::Lg2:
  case Op::Sin:
  case Op::Cos:
  case Op::Tanh:
  case Op::Copysign:
  case Op::Testp:
  case Op::Cvt:
  case Op::Cvta:
  case Op::Cvtpack:
  case Op::Ld:
  case Op::St:
  case Op::Prefetch:
  case Op::Fence:
  case Op::Isspacep:
  case Op::Atom:
  case Op::Red:
  case Op::Bra:
  case Op::Call:
  case Op::Ret:
  case Op::Exit:
  case Op::Trap:
  case Op::BarSync:
  case Op::BarArrive:
  case Op::BarWarpSync:
  case Op::Nanosleep:
  case Op::Shfl:
  case Op::Vote:
  case Op::Activemask:
  case Op::Redux:
  case Op::MatchAny:
  case Op::MatchAll:
  case Op::Mma:
  case Op::Ldmatrix:
  case Op::CpAsync:
  case Op::CpAsyncCommit:
  case Op::CpAsyncWait:
  case Op::CpAsyncWaitAll: break;
  }
  fault(ctx, w, in, static_cast<int>(l), "internal error: not an integer instruction");
}

template <typename T> void run(ExecContext &ctx, Warp &w, const Instr &in, uint32_t mask) {
  uint64_t *d = w.regs + size_t{in.dst.reg} * 32;
  LaneScratch k0, k1, k2;
  const LaneValues v0 = lane_values(ctx, w, in.src[0], k0), v1 = lane_values(ctx, w, in.src[1], k1),
                   v2 = lane_values(ctx, w, in.src[2], k2);
  if (run_common_form<T>(in, mask, d, v0, v1, v2))
    return;
  for_each_lane(mask,
                [&](uint32_t l) { d[l] = lane_result<T>(ctx, w, in, l, v0[l], v1[l], v2[l]); });
}

void run_pred(ExecContext &ctx, Warp &w, const Instr &in, uint32_t mask) {
  if (in.op == Op::And || in.op == Op::Or || in.op == Op::Xor || in.op == Op::Not) {
    // over lane arrays: a predicate register holds 0 or 1 (any non-zero value reads as true)
    LaneScratch k0, k1;
    const LaneValues a = lane_values(ctx, w, in.src[0], k0), b = lane_values(ctx, w, in.src[1], k1);
    const bool na = in.src[0].negated, nb = in.src[1].negated;
    uint64_t *d = w.regs + size_t{in.dst.reg} * 32;
    auto pa = [&](uint32_t l) { return (a[l] != 0) != na; };
    auto pb = [&](uint32_t l) { return (b[l] != 0) != nb; }; // absent: 0, false
    switch (in.op) {
    case Op::And: store_lanes(mask, d, [&](uint32_t l) { return uint64_t{pa(l) && pb(l)}; }); break;
    case Op::Or: store_lanes(mask, d, [&](uint32_t l) { return uint64_t{pa(l) || pb(l)}; }); break;
    case Op::Xor: store_lanes(mask, d, [&](uint32_t l) { return uint64_t{pa(l) != pb(l)}; }); break;
    default: store_lanes(mask, d, [&](uint32_t l) { return uint64_t{!pa(l)}; }); break;
    }
    return;
  }
  for_each_lane(mask, [&](uint32_t l) {
    bool a = read_pred(ctx, w, in.src[0], l);
    bool b = in.src[1].kind == OperandKind::None ? false : read_pred(ctx, w, in.src[1], l);
    bool r = false;
    if (in.op == Op::And)
      r = a && b;
    else if (in.op == Op::Or)
      r = a || b;
    else if (in.op == Op::Xor)
      r = a != b;
    else if (in.op == Op::Not)
      r = !a;
    else
      fault(ctx, w, in, static_cast<int>(l), "this instruction does not accept .pred");
    write_reg(w, in.dst.reg, l, r ? 1 : 0);
  });
}

} // namespace

void exec_integer(ExecContext &ctx, Warp &w, const Instr &in, uint32_t mask) {
  const bool wide16 = in.mul == MulMode::Wide;
  (void)wide16;
  switch (in.type) {
  case DType::Pred: return run_pred(ctx, w, in, mask);
  case DType::S16: return run<int16_t>(ctx, w, in, mask);
  case DType::U16:
  case DType::B16: return run<uint16_t>(ctx, w, in, mask);
  case DType::S32: return run<int32_t>(ctx, w, in, mask);
  case DType::U32:
  case DType::B32: return run<uint32_t>(ctx, w, in, mask);
  case DType::S64: return run<int64_t>(ctx, w, in, mask);
  case DType::U64:
  case DType::B64: return run<uint64_t>(ctx, w, in, mask);
  case DType::None:
  case DType::B8:
  case DType::B128:
  case DType::U8:
  case DType::S8:
  case DType::F16:
  case DType::F16x2:
  case DType::BF16:
  case DType::BF16x2:
  case DType::TF32:
  case DType::F32:
  case DType::F64:
  case DType::S4:
  case DType::U4:
  case DType::E4M3:
  case DType::E5M2:
  case DType::B1: break;
  }
  fault(ctx, w, in, -1,
        std::string("integer instruction with unsupported type .") + dtype_name(in.type));
}

// The integer, float and half arithmetic instructions share their modifiers; the instruction
// type picks the family that runs them (exec_integer, exec_float, exec_half).
void decode_arithmetic_modifiers(DecodeState &s) {
  Instr &in = s.in;
  Modifiers &m = s.mods;
  in.op = s.form->op;
  in.carry_in = s.base == "addc" || s.base == "subc" || s.base == "madc";
  in.carry_out = m.take("cc");
  if (m.take("hi"))
    in.mul = MulMode::Hi;
  else if (m.take("wide"))
    in.mul = MulMode::Wide;
  else
    m.take("lo");
  in.rnd = take_rounding(m);
  in.ftz = m.take("ftz");
  in.sat = m.take("sat");
  in.approx = m.take("approx");
  if (m.take("full"))
    in.approx = false;
  in.relu = m.take("relu");
  if (m.take("NaN"))
    in.mode = 1; // min/max.NaN: propagate NaN
  in.type = take_one_type(s);
  expect_no_modifiers_left(s);
  if (in.type == DType::F32 || in.type == DType::F64)
    in.exec = exec_float;
  else if (in.type == DType::F16 || in.type == DType::F16x2 || in.type == DType::BF16 ||
           in.type == DType::BF16x2)
    in.exec = exec_half;
  else
    in.exec = exec_integer;
  in.cls = dtype_is_float(in.type) ? InstrClass::Float : InstrClass::Integer;
}

void decode_arithmetic(DecodeState &s) {
  decode_arithmetic_modifiers(s);
  Instr &in = s.in;
  const auto &ops = s.ai.operands;
  // the table's type sets keep float-only operations off integer types and the reverse; the
  // checker held the operand count to the table's form
  in.dst = dest_operand(s, ops[0], in.type);
  for (size_t i = 1; i < ops.size(); ++i) {
    if (i - 1 >= in.src.size())
      decode_fail(s, "too many operands");
    in.src[i - 1] = source_operand(s, i, in.type);
  }
}

void decode_shf(DecodeState &s) {
  Instr &in = s.in;
  in.mode = s.mods.take("r") ? 1 : (s.mods.take("l") ? 0 : 2);
  if (in.mode == 2)
    decode_fail(s, "shf needs .l or .r");
  if (s.mods.take("wrap"))
    in.mode |= 2;
  else if (!s.mods.take("clamp"))
    decode_fail(s, "shf needs .wrap or .clamp");
  decode_arithmetic(s);
}

void decode_prmt(DecodeState &s) {
  static const char *const kModes[] = {"f4e", "b4e", "rc8", "ecl", "ecr", "rc16"};
  for (int i = 0; i < 6; ++i) {
    if (s.mods.take(kModes[i]))
      s.in.mode = static_cast<uint8_t>(i + 1);
  }
  decode_arithmetic(s);
}

void decode_bfind(DecodeState &s) {
  s.in.mode = s.mods.take("shiftamt") ? 1 : 0;
  decode_arithmetic(s);
}

} // namespace tcjit::emu
