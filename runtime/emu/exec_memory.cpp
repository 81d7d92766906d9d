// ld, st (all state spaces, scalars and .v2/.v4), isspacep, and the no-op hints.
#include <cstring>

#include "runtime/emu/exec_context.h"
#include "runtime/emu/exec_families.h"
#include "runtime/emu/instruction_decode.h"
#include "runtime/emu/memory_access.h"
#include "runtime/emu/memory_layout.h"

namespace tcjit::emu {

namespace {

inline uint64_t load_element(const uint8_t *p, bool is_signed, uint32_t bytes) {
  switch (bytes) {
  case 1: {
    uint8_t v;
    std::memcpy(&v, p, 1);
    return is_signed ? static_cast<uint64_t>(static_cast<int64_t>(static_cast<int8_t>(v))) : v;
  }
  case 2: {
    uint16_t v;
    std::memcpy(&v, p, 2);
    return is_signed ? static_cast<uint64_t>(static_cast<int64_t>(static_cast<int16_t>(v))) : v;
  }
  case 4: {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return is_signed ? static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(v))) : v;
  }
  default: {
    uint64_t v;
    std::memcpy(&v, p, 8);
    return v;
  }
  }
}

// The low `bytes` (1, 2, 4 or 8) bytes of a register value stored at p: fixed-size copies, which
// the compiler turns into one move (a memcpy of a variable size is a call).
inline void store_element(uint8_t *p, uint64_t v, uint32_t bytes) {
  switch (bytes) {
  case 1: {
    const auto x = static_cast<uint8_t>(v);
    std::memcpy(p, &x, 1);
    return;
  }
  case 2: {
    const auto x = static_cast<uint16_t>(v);
    std::memcpy(p, &x, 2);
    return;
  }
  case 4: {
    const auto x = static_cast<uint32_t>(v);
    std::memcpy(p, &x, 4);
    return;
  }
  default: std::memcpy(p, &v, 8);
  }
}

void record_request(ExecContext &ctx, const Space *spaces, const uint64_t *addresses, uint32_t mask,
                    uint32_t size, bool is_store) {
  uint32_t shared = 0, global = 0;
  for_each_lane(mask, [&](uint32_t l) {
    if (spaces[l] == Space::Shared)
      shared |= 1u << l;
    else if (spaces[l] == Space::Global || spaces[l] == Space::Const)
      global |= 1u << l;
  });
  if (shared)
    count_shared_request(ctx, addresses, shared, size, is_store);
  if (global)
    count_global_request(ctx, addresses, global, size, is_store);
  uint32_t local = 0;
  for_each_lane(mask & ~shared & ~global,
                [&](uint32_t l) { local |= uint32_t(spaces[l] == Space::Local) << l; });
  if (local)
    ++ctx.counters.local_requests;
}

} // namespace

void exec_nop(ExecContext &, Warp &, const Instr &, uint32_t) {}

void exec_memory(ExecContext &ctx, Warp &w, const Instr &in, uint32_t mask) {
  if (in.op == Op::Isspacep) {
    for_each_lane(mask, [&](uint32_t l) {
      uint64_t a = read_operand(ctx, w, in.src[0], l);
      bool r = false;
      switch (in.space) {
      case Space::Shared: r = in_shared_window(a); break;
      case Space::Local: r = in_local_window(a); break;
      case Space::Global:
      case Space::Const: r = !in_shared_window(a) && !in_local_window(a); break;
      case Space::ParamKernel:
      case Space::ParamThread:
      case Space::Generic: r = false; break;
      }
      write_reg(w, in.dst.reg, l, r ? 1 : 0);
    });
    return;
  }
  const bool is_store = in.op == Op::St;
  if (in.vec == 1 && !is_store && in.dst.kind == OperandKind::Reg &&
      (in.space == Space::ParamKernel || in.space == Space::Shared || in.space == Space::Global)) {
    // fast path: scalar loads from a known space
    const uint32_t elem = in.access_bytes;
    const bool is_signed = dtype_is_signed(in.type);
    uint64_t addresses[32];
    uint64_t *d = w.regs + size_t{in.dst.reg} * 32;
    LaneScratch k0;
    const LaneValues base = lane_values(ctx, w, in.src[0], k0);
    const uint64_t offset = static_cast<uint64_t>(in.src[0].offset);
    if (in.space == Space::Shared && elem == 4) {
      // all lanes in bounds, aligned and not reading a cp.async destination in flight: one
      // check pass, one load pass
      const Cta &cta = *ctx.cta;
      const uint64_t limit = cta.shared.size();
      bool ok = true;
      for_each_lane(mask, [&](uint32_t l) {
        const uint64_t a = base[l] + offset;
        addresses[l] = a;
        ok &= (a & 3) == 0 && a < limit && a + 4 <= limit;
      });
      if (ok && cta.async_pending_words) {
        const uint8_t *pending = cta.async_pending.data();
        for_each_lane(mask, [&](uint32_t l) { ok &= pending[addresses[l] >> 2] == 0; });
      }
      if (ok) {
        if (cta.racecheck)
          for_each_lane(mask, [&](uint32_t l) {
            check_shared_race(ctx, w, in, l, addresses[l], 4, AccessKind::Read);
          });
        const uint8_t *sh = ctx.cta->shared.data();
        for_each_lane(mask, [&](uint32_t l) {
          uint32_t v;
          std::memcpy(&v, sh + addresses[l], 4);
          d[l] =
              is_signed ? static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(v))) : v;
        });
        count_shared_request(ctx, addresses, mask, elem, false);
        return;
      }
    }
    for_each_lane(mask, [&](uint32_t l) {
      uint64_t addr = base[l] + offset;
      LaneAccess a =
          translate_access_fast(ctx, w, in, l, in.space, addr, elem, elem, AccessKind::Read);
      addresses[l] = a.address;
      d[l] = load_element(a.host, is_signed, elem);
    });
    if (in.space == Space::Shared)
      count_shared_request(ctx, addresses, mask, elem, false);
    else if (in.space == Space::Global)
      count_global_request(ctx, addresses, mask, elem, false);
    return;
  }
  if (in.vec == 1 && is_store && in.src[1].kind != OperandKind::Vector &&
      (in.space == Space::Shared || in.space == Space::Global)) {
    // fast path: scalar stores to a known space
    const uint32_t elem = in.access_bytes;
    uint64_t addresses[32];
    LaneScratch k0, k1;
    const LaneValues base = lane_values(ctx, w, in.src[0], k0);
    const LaneValues value = lane_values(ctx, w, in.src[1], k1);
    const uint64_t offset = static_cast<uint64_t>(in.src[0].offset);
    for_each_lane(mask, [&](uint32_t l) {
      LaneAccess a = translate_access_fast(ctx, w, in, l, in.space, base[l] + offset, elem, elem,
                                           AccessKind::Write);
      addresses[l] = a.address;
      store_element(a.host, value[l], elem);
    });
    if (in.space == Space::Shared)
      count_shared_request(ctx, addresses, mask, elem, true);
    else
      count_global_request(ctx, addresses, mask, elem, true);
    return;
  }
  const uint32_t elem = in.access_bytes;
  const uint32_t total = elem * in.vec;
  uint64_t addresses[32];
  Space spaces[32];
  const Operand &data = is_store ? in.src[1] : in.dst;
  const bool is_signed = dtype_is_signed(in.type);
  if (data.kind == OperandKind::Vector &&
      (in.space == Space::Shared || in.space == Space::Global)) {
    // fast path: vectors from or to a known space, the element registers looked up once
    uint64_t *elems[4];
    for (uint32_t i = 0; i < in.vec; ++i)
      elems[i] = w.regs + size_t{vector_reg(ctx, data, i)} * 32;
    LaneScratch k0;
    const LaneValues base = lane_values(ctx, w, in.src[0], k0);
    const uint64_t offset = static_cast<uint64_t>(in.src[0].offset);
    for_each_lane(mask, [&](uint32_t l) {
      LaneAccess a = translate_access_fast(ctx, w, in, l, in.space, base[l] + offset, total, total,
                                           is_store ? AccessKind::Write : AccessKind::Read);
      addresses[l] = a.address;
      if (is_store) {
        for (uint32_t i = 0; i < in.vec; ++i)
          store_element(a.host + i * elem, elems[i][l], elem);
      } else {
        for (uint32_t i = 0; i < in.vec; ++i)
          elems[i][l] = load_element(a.host + i * elem, is_signed, elem);
      }
    });
    if (in.space == Space::Shared)
      count_shared_request(ctx, addresses, mask, total, is_store);
    else
      count_global_request(ctx, addresses, mask, total, is_store);
    return;
  }
  for_each_lane(mask, [&](uint32_t l) {
    uint64_t addr = read_operand(ctx, w, in.src[0], l) + static_cast<uint64_t>(in.src[0].offset);
    LaneAccess a = translate_access_fast(ctx, w, in, l, in.space, addr, total, total,
                                         is_store ? AccessKind::Write : AccessKind::Read);
    addresses[l] = a.address;
    spaces[l] = a.space;
    if (in.vec == 1 && data.kind != OperandKind::Vector) {
      if (is_store) {
        store_element(a.host, read_operand(ctx, w, data, l), elem);
      } else {
        write_reg(w, data.reg, l, load_element(a.host, is_signed, elem));
      }
      return;
    }
    for (uint32_t i = 0; i < in.vec; ++i) {
      uint32_t reg = vector_reg(ctx, data, i);
      if (is_store) {
        store_element(a.host + i * elem, w.regs[size_t{reg} * 32 + l], elem);
      } else {
        write_reg(w, reg, l, load_element(a.host + i * elem, is_signed, elem));
      }
    }
  });
  record_request(ctx, spaces, addresses, mask, total, is_store);
}

void decode_load_store(DecodeState &s) {
  Instr &in = s.in;
  Modifiers &m = s.mods;
  const bool is_store = s.base == "st";
  in.op = is_store ? Op::St : Op::Ld;
  in.cls = InstrClass::Memory;
  in.exec = exec_memory;
  drop_memory_hints(m);
  in.space = take_space(m);
  if (m.take("v2"))
    in.vec = 2;
  else if (m.take("v4"))
    in.vec = 4;
  else if (m.take("v8"))
    in.vec = 8;
  in.type = take_one_type(s);
  expect_no_modifiers_left(s);
  in.access_bytes = static_cast<uint8_t>(dtype_bytes(in.type));
  if (in.access_bytes == 0)
    decode_unsupported(s);
  const AstOperand &data = is_store ? s.ai.operands[1] : s.ai.operands[0];
  const AstOperand &addr = is_store ? s.ai.operands[0] : s.ai.operands[1];
  in.src[0] = address_operand(s, addr, in.space); // arity: checked against the table
  if (is_store)
    in.src[1] = value_operand(s, data, in.type, Space::Generic);
  else
    in.dst = dest_operand(s, data, in.type);
}

void decode_isspacep(DecodeState &s) {
  Instr &in = s.in;
  in.op = Op::Isspacep;
  in.cls = InstrClass::Memory;
  in.exec = exec_memory;
  in.space = take_space(s.mods);
  expect_no_modifiers_left(s);
  in.dst = dest_operand(s, s.ai.operands[0], DType::Pred);
  in.src[0] = source_operand(s, 1, DType::U64);
}

void decode_prefetch(DecodeState &s) {
  s.in.op = Op::Prefetch;
  s.in.cls = InstrClass::Memory;
  s.in.exec = exec_nop;
}

// prefetchu, discard, applypriority: cache hints without an emulated effect
void decode_cache_hint(DecodeState &s) {
  s.in.op = Op::Fence;
  s.in.cls = InstrClass::Memory;
  s.in.exec = exec_nop;
}

// The policy value is never inspected: createpolicy writes 0.
void decode_createpolicy(DecodeState &s) {
  Instr &in = s.in;
  in.op = Op::Mov;
  in.cls = InstrClass::Memory;
  in.type = DType::B64;
  in.exec = exec_move;
  in.dst = dest_operand(s, s.ai.operands.at(0), DType::B64);
  in.src[0] = immediate_operand(0);
}

} // namespace tcjit::emu
