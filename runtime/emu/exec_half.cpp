// f16/bf16 scalar and f16x2/bf16x2 packed arithmetic. Each element is computed exactly in
// double and rounded once to the element format (round-to-nearest-even unless .rz etc.).
#include <cmath>

#include "runtime/emu/exec_context.h"
#include "runtime/emu/exec_families.h"
#include "runtime/emu/float_format.h"

namespace tcjit::emu {

namespace {

long double element(const Instr &in, FloatFormat f, long double a, long double b, long double c) {
  const Op o = in.op;
  if (o == Op::Add)
    return a + b;
  if (o == Op::Sub)
    return a - b;
  if (o == Op::Mul)
    return a * b;
  if (o == Op::Fma)
    return std::fma(a, b, c);
  if (o == Op::Min || o == Op::Max) {
    if (std::isnan(a) || std::isnan(b))
      return std::isnan(a) && std::isnan(b) ? a : (std::isnan(a) ? b : a);
    return o == Op::Min ? std::fmin(a, b) : std::fmax(a, b);
  }
  if (o == Op::Abs)
    return std::fabs(a);
  if (o == Op::Neg)
    return -a;
  if (o == Op::Ex2)
    return std::exp2(a);
  if (o == Op::Tanh)
    return std::tanh(a);
  (void)f;
  return NAN;
}

} // namespace

void exec_half(ExecContext &ctx, Warp &w, const Instr &in, uint32_t mask) {
  const bool packed = in.type == DType::F16x2 || in.type == DType::BF16x2;
  const FloatFormat f = (in.type == DType::F16 || in.type == DType::F16x2) ? kF16 : kBF16;
  const Round mode = in.rnd == Round::None ? Round::Rn : in.rnd;
  const int lanes = packed ? 2 : 1;
  for_each_lane(mask, [&](uint32_t l) {
    uint64_t ra = read_operand(ctx, w, in.src[0], l);
    uint64_t rb = in.src[1].kind == OperandKind::None ? 0 : read_operand(ctx, w, in.src[1], l);
    uint64_t rc = in.src[2].kind == OperandKind::None ? 0 : read_operand(ctx, w, in.src[2], l);
    uint64_t out = 0;
    for (int e = 0; e < lanes; ++e) {
      uint32_t sh = 16 * e;
      long double a = decode_small_float((ra >> sh) & 0xffff, f);
      long double b = decode_small_float((rb >> sh) & 0xffff, f);
      long double c = decode_small_float((rc >> sh) & 0xffff, f);
      uint32_t bitsv;
      if (in.op == Op::Neg) {
        bitsv = static_cast<uint32_t>(((ra >> sh) & 0xffff) ^ 0x8000);
      } else if (in.op == Op::Abs) {
        bitsv = static_cast<uint32_t>(((ra >> sh) & 0xffff) & 0x7fff);
      } else {
        long double r = element(in, f, a, b, c);
        if (in.ftz && f.exponent_bits == 5 && std::fabs(r) < std::ldexp(1.0L, -14))
          r = std::copysign(0.0L, r);
        r = round_to_format(r, f, mode);
        if (in.sat)
          r = std::isnan(r) ? 0.0L : std::min(std::max(r, 0.0L), 1.0L);
        if (in.relu && (std::isnan(r) || r < 0))
          r = std::isnan(r) ? r : 0.0L;
        bitsv = encode_small_float(r, f);
      }
      out |= uint64_t{bitsv & 0xffff} << sh;
    }
    write_reg(w, in.dst.reg, l, out);
  });
}

} // namespace tcjit::emu
