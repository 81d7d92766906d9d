// mov: registers, immediates, special registers, symbol addresses, and packing/unpacking of
// vectors ({%r1, %r2} <-> %rd).
#include "runtime/emu/exec_context.h"
#include "runtime/emu/exec_families.h"
#include "runtime/emu/instruction_decode.h"

namespace tcjit::emu {

void exec_move(ExecContext &ctx, Warp &w, const Instr &in, uint32_t mask) {
  const uint32_t bytes = in.type == DType::Pred ? 1 : dtype_bytes(in.type);
  if (in.dst.kind == OperandKind::Vector) {
    const uint32_t n = in.dst.count;
    const uint32_t bits = bytes * 8 / n;
    uint32_t regs[8];
    for (uint32_t i = 0; i < n && i < 8; ++i)
      regs[i] = vector_reg(ctx, in.dst, i);
    for_each_lane(mask, [&](uint32_t l) {
      uint64_t v = read_operand(ctx, w, in.src[0], l);
      for (uint32_t i = 0; i < n; ++i)
        write_reg(w, i < 8 ? regs[i] : vector_reg(ctx, in.dst, i), l,
                  mask_to_bytes(v >> (i * bits), bits / 8));
    });
    return;
  }
  if (in.src[0].kind == OperandKind::Vector) {
    const uint32_t n = in.src[0].count;
    const uint32_t bits = bytes * 8 / n;
    uint32_t regs[8];
    for (uint32_t i = 0; i < n && i < 8; ++i)
      regs[i] = vector_reg(ctx, in.src[0], i);
    for_each_lane(mask, [&](uint32_t l) {
      uint64_t v = 0;
      for (uint32_t i = 0; i < n; ++i)
        v |= mask_to_bytes(w.regs[size_t{i < 8 ? regs[i] : vector_reg(ctx, in.src[0], i)} * 32 + l],
                           bits / 8)
             << (i * bits);
      write_reg(w, in.dst.reg, l, v);
    });
    return;
  }
  uint64_t *d = w.regs + size_t{in.dst.reg} * 32;
  if (in.type == DType::Pred) {
    if (in.src[0].kind == OperandKind::Reg) {
      const uint64_t *s = w.regs + size_t{in.src[0].reg} * 32;
      const bool neg = in.src[0].negated;
      for_each_lane(mask, [&](uint32_t l) { d[l] = (s[l] != 0) != neg ? 1 : 0; });
      return;
    }
    for_each_lane(mask, [&](uint32_t l) { d[l] = read_pred(ctx, w, in.src[0], l) ? 1 : 0; });
    return;
  }
  const uint64_t keep = bytes >= 8 ? ~0ull : (1ull << (bytes * 8)) - 1;
  if (in.src[0].kind == OperandKind::Reg) {
    const uint64_t *s = w.regs + size_t{in.src[0].reg} * 32;
    store_lanes(mask, d, [&](uint32_t l) { return s[l] & keep; });
    return;
  }
  // an immediate or a special register: one value for every lane
  const uint64_t v = read_operand(ctx, w, in.src[0], 0) & keep;
  for_each_lane(mask, [&](uint32_t l) { d[l] = v; });
}

void decode_move(DecodeState &s) {
  Instr &in = s.in;
  in.op = Op::Mov;
  in.type = take_one_type(s);
  in.exec = exec_move;
  expect_no_modifiers_left(s);
  in.dst = dest_operand(s, s.ai.operands[0], in.type);
  in.src[0] = source_operand(s, 1, in.type);
}

} // namespace tcjit::emu
