// Warp collectives: shfl.sync, vote.sync, activemask, redux.sync, match.sync. The sanitizer
// checks that every lane named in the member mask executes the collective together.
#include <bit>

#include "runtime/emu/exec_context.h"
#include "runtime/emu/exec_families.h"
#include "runtime/emu/instruction_decode.h"

namespace tcjit::emu {

namespace {

std::string mask_hex(uint32_t m) {
  return hex_address(m);
}

uint32_t check_members(ExecContext &ctx, Warp &w, const Instr &in, uint32_t mask,
                       const Operand &member_op) {
  uint32_t first = static_cast<uint32_t>(std::countr_zero(mask));
  uint32_t member = static_cast<uint32_t>(read_operand(ctx, w, member_op, first));
  for_each_lane(mask, [&](uint32_t l) {
    if (static_cast<uint32_t>(read_operand(ctx, w, member_op, l)) != member)
      fault(ctx, w, in, static_cast<int>(l),
            "lanes of one warp-collective pass different member masks (" + mask_hex(member) +
                " and " + mask_hex(static_cast<uint32_t>(read_operand(ctx, w, member_op, l))) +
                ")");
  });
  uint32_t missing = member & w.exists & ~mask;
  if (missing) {
    bool exited = (missing & ~w.live) != 0;
    fault(ctx, w, in, -1,
          "warp collective with member mask " + mask_hex(member) + " executed by lanes " +
              mask_hex(mask) + " only: lanes " + mask_hex(missing) +
              (exited ? " have exited" : " are elsewhere (divergent)") +
              "; every lane in the member mask must execute the same collective");
  }
  uint32_t extra = mask & ~member;
  if (extra)
    fault(ctx, w, in, -1,
          "lanes " + mask_hex(extra) + " executed a warp collective whose member mask " +
              mask_hex(member) + " does not include them");
  return member;
}

} // namespace

void exec_warp(ExecContext &ctx, Warp &w, const Instr &in, uint32_t mask) {
  if (in.op == Op::Shfl) {
    check_members(ctx, w, in, mask, in.src[3]);
    uint64_t value[32];
    for (uint32_t l = 0; l < 32; ++l)
      value[l] = (mask >> l & 1)
                     ? read_operand(ctx, w, in.src[0], l)
                     : (in.src[0].kind == OperandKind::Reg ? w.regs[size_t{in.src[0].reg} * 32 + l]
                                                           : in.src[0].imm);
    const ShflMode mode = static_cast<ShflMode>(in.mode);
    for_each_lane(mask, [&](uint32_t l) {
      uint32_t b = static_cast<uint32_t>(read_operand(ctx, w, in.src[1], l)) & 31;
      uint32_t c = static_cast<uint32_t>(read_operand(ctx, w, in.src[2], l));
      uint32_t clamp = c & 31, seg = (c >> 8) & 31;
      int max_lane = static_cast<int>((l & seg) | (clamp & ~seg));
      int min_lane = static_cast<int>(l & seg);
      int j = 0;
      bool pval = false;
      switch (mode) {
      case ShflMode::Up:
        j = static_cast<int>(l) - static_cast<int>(b);
        pval = j >= max_lane;
        break;
      case ShflMode::Down:
        j = static_cast<int>(l + b);
        pval = j <= max_lane;
        break;
      case ShflMode::Bfly:
        j = static_cast<int>(l ^ b);
        pval = j <= max_lane;
        break;
      case ShflMode::Idx:
        j = min_lane | static_cast<int>(b & ~seg);
        pval = j <= max_lane;
        break;
      }
      if (!pval)
        j = static_cast<int>(l);
      write_reg(w, in.dst.reg, l, value[j & 31] & 0xffffffffu);
      if (in.dst2.kind == OperandKind::Reg)
        write_reg(w, in.dst2.reg, l, pval ? 1 : 0);
    });
    return;
  }
  if (in.op == Op::Vote) {
    uint32_t member = check_members(ctx, w, in, mask, in.src[1]);
    uint32_t ballot = 0;
    for_each_lane(mask & member,
                  [&](uint32_t l) { ballot |= uint32_t(read_pred(ctx, w, in.src[0], l)) << l; });
    const uint32_t voters = mask & member;
    const VoteMode mode = static_cast<VoteMode>(in.mode);
    for_each_lane(mask, [&](uint32_t l) {
      uint64_t r = 0;
      switch (mode) {
      case VoteMode::All: r = (ballot & voters) == voters; break;
      case VoteMode::Any: r = ballot != 0; break;
      case VoteMode::Uni: r = ballot == 0 || ballot == voters; break;
      case VoteMode::Ballot: r = ballot; break;
      }
      write_reg(w, in.dst.reg, l, r);
    });
    return;
  }
  if (in.op == Op::Activemask) {
    for_each_lane(mask, [&](uint32_t l) { write_reg(w, in.dst.reg, l, mask); });
    return;
  }
  if (in.op == Op::Redux) {
    uint32_t member = check_members(ctx, w, in, mask, in.src[1]);
    const bool is_signed = in.type == DType::S32;
    const AtomOp op = static_cast<AtomOp>(in.mode);
    uint32_t acc = 0;
    bool first = true;
    for_each_lane(mask & member, [&](uint32_t l) {
      uint32_t v = static_cast<uint32_t>(read_operand(ctx, w, in.src[0], l));
      if (first) {
        acc = v;
        first = false;
        return;
      }
      switch (op) {
      case AtomOp::Add: acc += v; break;
      case AtomOp::Min:
        acc = is_signed ? uint32_t(std::min(int32_t(acc), int32_t(v))) : std::min(acc, v);
        break;
      case AtomOp::Max:
        acc = is_signed ? uint32_t(std::max(int32_t(acc), int32_t(v))) : std::max(acc, v);
        break;
      case AtomOp::And: acc &= v; break;
      case AtomOp::Or: acc |= v; break;
      case AtomOp::Xor: acc ^= v; break;
      case AtomOp::Exch:
      case AtomOp::Cas:
      case AtomOp::Inc:
      case AtomOp::Dec: break;
      }
    });
    for_each_lane(mask, [&](uint32_t l) { write_reg(w, in.dst.reg, l, acc); });
    return;
  }
  if (in.op == Op::MatchAny || in.op == Op::MatchAll) {
    uint32_t member = check_members(ctx, w, in, mask, in.src[1]);
    const uint32_t bytes = dtype_bytes(in.type);
    const uint32_t group = mask & member;
    for_each_lane(mask, [&](uint32_t l) {
      uint64_t v = mask_to_bytes(read_operand(ctx, w, in.src[0], l), bytes);
      uint32_t same = 0;
      for_each_lane(group, [&](uint32_t k) {
        same |= uint32_t(mask_to_bytes(read_operand(ctx, w, in.src[0], k), bytes) == v) << k;
      });
      if (in.op == Op::MatchAny) {
        write_reg(w, in.dst.reg, l, same);
      } else {
        bool all = same == group;
        write_reg(w, in.dst.reg, l, all ? group : 0);
        if (in.dst2.kind == OperandKind::Reg)
          write_reg(w, in.dst2.reg, l, all ? 1 : 0);
      }
    });
    return;
  }
  fault(ctx, w, in, -1, "internal error: not a warp collective");
}

void decode_shfl(DecodeState &s) {
  Instr &in = s.in;
  Modifiers &m = s.mods;
  const auto &ops = s.ai.operands;
  if (!m.take("sync"))
    decode_fail(s, "only shfl.sync is supported (the non-.sync shfl was removed in sm_70)");
  in.op = Op::Shfl;
  in.cls = InstrClass::Warp;
  in.exec = exec_warp;
  if (m.take("up"))
    in.mode = static_cast<uint8_t>(ShflMode::Up);
  else if (m.take("down"))
    in.mode = static_cast<uint8_t>(ShflMode::Down);
  else if (m.take("bfly"))
    in.mode = static_cast<uint8_t>(ShflMode::Bfly);
  else if (m.take("idx"))
    in.mode = static_cast<uint8_t>(ShflMode::Idx);
  else
    decode_fail(s, "shfl.sync needs a mode (.up .down .bfly .idx)");
  in.type = take_one_type(s);
  expect_no_modifiers_left(s);
  if (ops[0].kind == AstOperand::Kind::Pair) {
    in.dst = dest_operand(s, ops[0].elements[0], in.type);
    in.dst2 = dest_operand(s, ops[0].elements[1], DType::Pred);
  } else {
    in.dst = dest_operand(s, ops[0], in.type);
  }
  for (int i = 0; i < 4; ++i)
    in.src[i] = source_operand(s, i + 1, DType::U32);
}

void decode_vote(DecodeState &s) {
  Instr &in = s.in;
  Modifiers &m = s.mods;
  if (!m.take("sync"))
    decode_fail(s, "only vote.sync is supported");
  in.op = Op::Vote;
  in.cls = InstrClass::Warp;
  in.exec = exec_warp;
  if (m.take("all"))
    in.mode = static_cast<uint8_t>(VoteMode::All);
  else if (m.take("any"))
    in.mode = static_cast<uint8_t>(VoteMode::Any);
  else if (m.take("uni"))
    in.mode = static_cast<uint8_t>(VoteMode::Uni);
  else if (m.take("ballot"))
    in.mode = static_cast<uint8_t>(VoteMode::Ballot);
  else
    decode_fail(s, "vote.sync needs a mode (.all .any .uni .ballot)");
  in.type = take_one_type(s);
  expect_no_modifiers_left(s);
  in.dst = dest_operand(s, s.ai.operands[0], in.type);
  in.src[0] = source_operand(s, 1, DType::Pred);
  in.src[1] = source_operand(s, 2, DType::U32);
}

void decode_activemask(DecodeState &s) {
  Instr &in = s.in;
  in.op = Op::Activemask;
  in.cls = InstrClass::Warp;
  in.exec = exec_warp;
  in.type = take_one_type(s);
  expect_no_modifiers_left(s);
  in.dst = dest_operand(s, s.ai.operands[0], in.type);
}

void decode_redux(DecodeState &s) {
  Instr &in = s.in;
  if (!s.mods.take("sync"))
    decode_unsupported(s);
  in.op = Op::Redux;
  in.cls = InstrClass::Warp;
  in.exec = exec_warp;
  static const std::pair<const char *, AtomOp> kOps[] = {
      {"add", AtomOp::Add}, {"min", AtomOp::Min}, {"max", AtomOp::Max},
      {"and", AtomOp::And}, {"or", AtomOp::Or},   {"xor", AtomOp::Xor}};
  bool found = false;
  for (const auto &[name, op] : kOps) {
    if (s.mods.take(name)) {
      in.mode = static_cast<uint8_t>(op);
      found = true;
    }
  }
  if (!found)
    decode_unsupported(s);
  in.type = take_one_type(s);
  expect_no_modifiers_left(s);
  if (dtype_bytes(in.type) != 4 || dtype_is_float(in.type))
    decode_unsupported(s);
  in.dst = dest_operand(s, s.ai.operands[0], in.type);
  in.src[0] = source_operand(s, 1, in.type);
  in.src[1] = source_operand(s, 2, DType::U32);
}

void decode_match(DecodeState &s) {
  Instr &in = s.in;
  const auto &ops = s.ai.operands;
  if (!s.mods.take("sync"))
    decode_unsupported(s);
  in.cls = InstrClass::Warp;
  in.exec = exec_warp;
  if (s.mods.take("any"))
    in.op = Op::MatchAny;
  else if (s.mods.take("all"))
    in.op = Op::MatchAll;
  else
    decode_unsupported(s);
  in.type = take_one_type(s);
  expect_no_modifiers_left(s);
  if (ops[0].kind == AstOperand::Kind::Pair) {
    in.dst = dest_operand(s, ops[0].elements[0], DType::B32);
    in.dst2 = dest_operand(s, ops[0].elements[1], DType::Pred);
  } else {
    in.dst = dest_operand(s, ops[0], DType::B32);
  }
  in.src[0] = source_operand(s, 1, in.type);
  in.src[1] = source_operand(s, 2, DType::U32);
}

} // namespace tcjit::emu
