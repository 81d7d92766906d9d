// cvt between f64/f32/f16/bf16/tf32 and 8..64-bit integers with every rounding, saturation,
// .ftz and .relu modifier; cvt.rn.{f16x2,bf16x2}.f32; cvta between generic and state-space
// addresses.
#include <bit>
#include <cmath>
#include <limits>

#include "runtime/emu/exec_context.h"
#include "runtime/emu/exec_families.h"
#include "runtime/emu/float_format.h"
#include "runtime/emu/instruction_decode.h"
#include "runtime/emu/memory_layout.h"

namespace tcjit::emu {

namespace {

constexpr FloatFormat kF64{11, 52};

bool is_int(DType t) {
  return !dtype_is_float(t);
}

// Integer value of raw bits of an integer type.
__int128 int_value(uint64_t raw, DType t) {
  uint32_t bytes = dtype_bytes(t);
  uint64_t v = mask_to_bytes(raw, bytes);
  if (dtype_is_signed(t) && bytes < 8) {
    uint32_t sh = 64 - bytes * 8;
    return static_cast<int64_t>(v << sh) >> sh;
  }
  if (dtype_is_signed(t))
    return static_cast<int64_t>(v);
  return static_cast<__int128>(v);
}

__int128 int_min(DType t) {
  if (!dtype_is_signed(t))
    return 0;
  return -(static_cast<__int128>(1) << (dtype_bytes(t) * 8 - 1));
}
__int128 int_max(DType t) {
  uint32_t b = dtype_bytes(t) * 8;
  if (dtype_is_signed(t))
    return (static_cast<__int128>(1) << (b - 1)) - 1;
  return (static_cast<__int128>(1) << b) - 1;
}

long double float_value(uint64_t raw, DType t, bool ftz) {
  switch (t) {
  case DType::F16: return decode_small_float(raw & 0xffff, kF16);
  case DType::BF16: return decode_small_float(raw & 0xffff, kBF16);
  case DType::F32:
  case DType::TF32: {
    float f = f32_of(raw);
    return ftz ? flush_subnormal(f) : f;
  }
  case DType::F64: return f64_of(raw);
  case DType::None:
  case DType::B8:
  case DType::B16:
  case DType::B32:
  case DType::B64:
  case DType::B128:
  case DType::U8:
  case DType::U16:
  case DType::U32:
  case DType::U64:
  case DType::S8:
  case DType::S16:
  case DType::S32:
  case DType::S64:
  case DType::F16x2:
  case DType::BF16x2:
  case DType::Pred:
  case DType::S4:
  case DType::U4:
  case DType::E4M3:
  case DType::E5M2:
  case DType::B1: break;
  }
  return 0;
}

FloatFormat format_of(DType t) {
  switch (t) {
  case DType::F16: return kF16;
  case DType::BF16: return kBF16;
  case DType::TF32: return kTF32;
  case DType::F64: return kF64;
  case DType::F32:
  case DType::None:
  case DType::B8:
  case DType::B16:
  case DType::B32:
  case DType::B64:
  case DType::B128:
  case DType::U8:
  case DType::U16:
  case DType::U32:
  case DType::U64:
  case DType::S8:
  case DType::S16:
  case DType::S32:
  case DType::S64:
  case DType::F16x2:
  case DType::BF16x2:
  case DType::Pred:
  case DType::S4:
  case DType::U4:
  case DType::E4M3:
  case DType::E5M2:
  case DType::B1: break;
  }
  return kF32;
}

bool is_integer_rounding(Round r) {
  return r == Round::Rni || r == Round::Rzi || r == Round::Rmi || r == Round::Rpi;
}

// Rounds and encodes x in float type t with the modifiers of `in`.
uint64_t to_float(long double x, DType t, const Instr &in) {
  const FloatFormat f = format_of(t);
  const Round mode = in.rnd == Round::None ? Round::Rn : in.rnd;
  long double r = is_integer_rounding(mode) ? round_to_integral(x, mode) : x;
  if (!is_integer_rounding(mode) || t != DType::F64)
    r = round_to_format(r, f, is_integer_rounding(mode) ? Round::Rn : mode);
  if (in.relu && !std::isnan(r) && r < 0)
    r = 0;
  if (in.satfinite && !std::isnan(r) && std::fabs(r) > max_finite(f))
    r = std::copysign(max_finite(f), r);
  if (in.sat)
    r = std::isnan(r) ? 0.0L : std::min(std::max(r, 0.0L), 1.0L);
  switch (t) {
  case DType::F16:
  case DType::BF16: return encode_small_float(r, f);
  case DType::F32:
  case DType::TF32: {
    float v = static_cast<float>(r);
    if (std::isnan(r))
      return 0x7fffffffu;
    if (in.ftz)
      v = flush_subnormal(v);
    return bits_of(v);
  }
  case DType::F64:
    if (std::isnan(r))
      return 0x7fffffffffffffffull;
    return bits_of(static_cast<double>(r));
  case DType::None:
  case DType::B8:
  case DType::B16:
  case DType::B32:
  case DType::B64:
  case DType::B128:
  case DType::U8:
  case DType::U16:
  case DType::U32:
  case DType::U64:
  case DType::S8:
  case DType::S16:
  case DType::S32:
  case DType::S64:
  case DType::F16x2:
  case DType::BF16x2:
  case DType::Pred:
  case DType::S4:
  case DType::U4:
  case DType::E4M3:
  case DType::E5M2:
  case DType::B1: break;
  }
  return 0;
}

uint64_t convert(uint64_t raw, const Instr &in) {
  const DType dt = in.type, st = in.type2;
  if (is_int(dt)) {
    __int128 v;
    if (is_int(st)) {
      v = int_value(raw, st);
      if (in.sat)
        v = std::min(std::max(v, int_min(dt)), int_max(dt));
    } else {
      long double x = float_value(raw, st, in.ftz);
      if (std::isnan(x))
        return 0;
      Round mode = in.rnd == Round::None ? Round::Rzi : in.rnd;
      long double r = round_to_integral(x, mode);
      // float-to-integer conversions always saturate
      if (r <= static_cast<long double>(int_min(dt)))
        v = int_min(dt);
      else if (r >= static_cast<long double>(int_max(dt)))
        v = int_max(dt);
      else
        v = static_cast<__int128>(r);
    }
    return mask_to_bytes(static_cast<uint64_t>(v), dtype_bytes(dt));
  }
  long double x;
  if (is_int(st))
    x = static_cast<long double>(int_value(raw, st));
  else
    x = float_value(raw, st, in.ftz);
  return to_float(x, dt, in);
}

// f32 input bits after .ftz (a subnormal becomes a signed zero)
inline uint32_t ftz_bits(uint32_t u, bool ftz) {
  return ftz && (u & 0x7f800000u) == 0 ? (u & 0x80000000u) : u;
}

// The conversions of generated GEMM kernels without long double, bit-identical to convert() (the
// f32 roundings are checked against round_to_format/encode_small_float for every input):
// cvt.rn.{f16,bf16}.f32, cvt.{rn,rna}.tf32.f32, cvt.f32.{f16,bf16}, cvt.rni.s32.f32 and
// cvt.rn.f32.{s32,u32}, without .relu/.sat/.satfinite. Returns false for anything else.
bool convert_fast(const Instr &in, const LaneValues v, uint64_t *d, uint32_t mask) {
  if (in.relu || in.sat || in.satfinite)
    return false;
  const DType dt = in.type, st = in.type2;
  const Round mode = in.rnd;
  const bool ftz = in.ftz;
  const bool rn = mode == Round::None || mode == Round::Rn;
  if (st == DType::F32 && rn && (dt == DType::F16 || dt == DType::BF16)) {
    if (dt == DType::F16)
      for_each_lane(mask, [&](uint32_t l) {
        d[l] = f32_to_f16_rn(ftz_bits(static_cast<uint32_t>(v[l]), ftz));
      });
    else
      for_each_lane(mask, [&](uint32_t l) {
        d[l] = f32_to_bf16_rn(ftz_bits(static_cast<uint32_t>(v[l]), ftz));
      });
    return true;
  }
  if (st == DType::F32 && dt == DType::TF32 && (rn || mode == Round::Rna)) {
    const bool away = mode == Round::Rna;
    for_each_lane(mask, [&](uint32_t l) {
      const uint32_t r = f32_to_tf32_bits(ftz_bits(static_cast<uint32_t>(v[l]), ftz), away);
      d[l] = r == 0x7fffffffu ? r : ftz_bits(r, ftz);
    });
    return true;
  }
  if (dt == DType::F32 && rn && (st == DType::F16 || st == DType::BF16)) {
    const float *table = st == DType::F16 ? f16_table() : bf16_table();
    for_each_lane(mask, [&](uint32_t l) {
      const uint32_t u = std::bit_cast<uint32_t>(table[v[l] & 0xffff]);
      d[l] = (u & 0x7fffffffu) > 0x7f800000u ? 0x7fffffffu : ftz_bits(u, ftz);
    });
    return true;
  }
  if (dt == DType::S32 && st == DType::F32 && mode == Round::Rni) {
    for_each_lane(mask, [&](uint32_t l) {
      const float x = std::bit_cast<float>(ftz_bits(static_cast<uint32_t>(v[l]), ftz));
      int32_t r;
      if (std::isnan(x)) {
        r = 0;
      } else if (x >= 2147483648.0f) {
        r = INT32_MAX;
      } else if (x <= -2147483648.0f) {
        r = INT32_MIN;
      } else {
        float t = std::trunc(x);
        const float frac = std::fabs(x - t); // exact
        if (frac > 0.5f || (frac == 0.5f && std::fmod(t, 2.0f) != 0))
          t += std::copysign(1.0f, x);
        r = static_cast<int32_t>(t);
      }
      d[l] = static_cast<uint64_t>(int64_t{r}); // sign-extended, as finish() does
    });
    return true;
  }
  if (dt == DType::F32 && rn && (st == DType::S32 || st == DType::U32)) {
    // int -> double is exact; double -> float rounds once, to nearest even (the host's default
    // mode, which exec_float restores after every directed-rounding instruction)
    if (st == DType::S32)
      for_each_lane(mask, [&](uint32_t l) {
        d[l] = bits_of(static_cast<float>(static_cast<int32_t>(v[l])));
      });
    else
      for_each_lane(mask, [&](uint32_t l) {
        d[l] = bits_of(static_cast<float>(static_cast<uint32_t>(v[l])));
      });
    return true;
  }
  return false;
}

} // namespace

void exec_convert(ExecContext &ctx, Warp &w, const Instr &in, uint32_t mask) {
  if (in.op == Op::Cvta) {
    const uint32_t bytes = dtype_bytes(in.type);
    for_each_lane(mask, [&](uint32_t l) {
      uint64_t a = read_operand(ctx, w, in.src[0], l);
      uint64_t r = a;
      if (in.space == Space::Shared)
        r = in.to_space ? a - kSharedWindow : a + kSharedWindow;
      else if (in.space == Space::Local)
        r = in.to_space ? a - kLocalWindow : a + kLocalWindow;
      write_reg(w, in.dst.reg, l, mask_to_bytes(r, bytes));
    });
    return;
  }
  if (in.op == Op::Cvtpack) {
    const DType elem = in.type == DType::F16x2 ? DType::F16 : DType::BF16;
    Instr one = in;
    one.type = elem;
    one.type2 = DType::F32;
    for_each_lane(mask, [&](uint32_t l) {
      uint64_t hi =
          to_float(float_value(read_operand(ctx, w, in.src[0], l), DType::F32, false), elem, one);
      uint64_t lo =
          to_float(float_value(read_operand(ctx, w, in.src[1], l), DType::F32, false), elem, one);
      write_reg(w, in.dst.reg, l, ((hi & 0xffff) << 16) | (lo & 0xffff));
    });
    return;
  }
  LaneScratch k0;
  const LaneValues v0 = lane_values(ctx, w, in.src[0], k0);
  uint64_t *d = w.regs + size_t{in.dst.reg} * 32;
  // A signed integer result narrower than its register is sign-extended to the register's size
  // (PTX ISA, "Operand Size Exceeding Instruction-Type Size"): cvt.s8.s32 into a .b16 register
  // leaves -16 as 0xfff0. Registers hold such values sign-extended to 64 bits, as ld.s8 does;
  // other results stay as convert() masks them (dshift 0).
  const bool sext = is_int(in.type) && dtype_is_signed(in.type) && dtype_bytes(in.type) < 8;
  const uint32_t dshift = sext ? 64 - dtype_bytes(in.type) * 8 : 0;
  auto finish = [dshift](uint64_t v) {
    return static_cast<uint64_t>(static_cast<int64_t>(v << dshift) >> dshift);
  };
  if (is_int(in.type) && is_int(in.type2) && !in.sat) {
    // integer to integer: extend by the source type, truncate to the destination
    const uint32_t sbytes = dtype_bytes(in.type2), dbytes = dtype_bytes(in.type);
    const uint32_t shift = 64 - sbytes * 8;
    const bool sign = dtype_is_signed(in.type2);
    const uint64_t keep = dbytes >= 8 ? ~uint64_t{0} : (uint64_t{1} << (dbytes * 8)) - 1;
    if (sign)
      store_lanes(mask, d, [&](uint32_t l) {
        return finish(static_cast<uint64_t>(static_cast<int64_t>(v0[l] << shift) >> shift) & keep);
      });
    else
      store_lanes(mask, d, [&](uint32_t l) { return finish(((v0[l] << shift) >> shift) & keep); });
    return;
  }
  if (convert_fast(in, v0, d, mask))
    return;
  if (sext) {
    for_each_lane(mask, [&](uint32_t l) { d[l] = finish(convert(v0[l], in)); });
    return;
  }
  for_each_lane(mask, [&](uint32_t l) { d[l] = convert(v0[l], in); });
}

void decode_cvt(DecodeState &s) {
  Instr &in = s.in;
  Modifiers &m = s.mods;
  in.op = Op::Cvt;
  in.cls = InstrClass::Convert;
  in.exec = exec_convert;
  in.rnd = take_rounding(m);
  in.ftz = m.take("ftz");
  in.sat = m.take("sat");
  in.satfinite = m.take("satfinite");
  in.relu = m.take("relu");
  auto ts = m.take_types();
  expect_no_modifiers_left(s);
  if (ts.size() != 2)
    decode_fail(s, "cvt needs a destination and a source type");
  in.type = ts[0];
  in.type2 = ts[1];
  if (in.type == DType::F16x2 || in.type == DType::BF16x2) {
    if (in.type2 != DType::F32)
      decode_unsupported(s);
    in.op = Op::Cvtpack;
    in.dst = dest_operand(s, s.ai.operands[0], in.type);
    in.src[0] = source_operand(s, 1, DType::F32);
    in.src[1] = source_operand(s, 2, DType::F32);
    return;
  }
  auto ok = [](DType t) {
    return t != DType::None && t != DType::B128 && t != DType::Pred && t != DType::S4 &&
           t != DType::U4 && t != DType::E4M3 && t != DType::E5M2 && t != DType::F16x2 &&
           t != DType::BF16x2 && t != DType::B1;
  };
  if (!ok(in.type) || !ok(in.type2))
    decode_unsupported(s);
  in.dst = dest_operand(s, s.ai.operands[0], in.type);
  in.src[0] = source_operand(s, 1, in.type2);
}

void decode_cvta(DecodeState &s) {
  Instr &in = s.in;
  in.op = Op::Cvta;
  in.cls = InstrClass::Convert;
  in.exec = exec_convert;
  in.to_space = s.mods.take("to");
  in.space = take_space(s.mods); // the checker required one
  in.type = take_one_type(s);
  expect_no_modifiers_left(s);
  in.dst = dest_operand(s, s.ai.operands[0], in.type);
  // cvta.shared.u64 %rd, sym: the symbol's own address
  in.src[0] = value_operand(s, s.ai.operands[1], in.type, in.space);
}

} // namespace tcjit::emu
