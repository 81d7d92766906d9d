// atom and red on global, shared and generic addresses: add/min/max/exch/cas/and/or/xor/inc/dec
// on 32- and 64-bit integers and f32/f64 add (plus min/max for floats). Global atomics are real
// host atomics (CTAs run on several host threads); shared ones need none (one CTA, one thread).
#include <atomic>
#include <bit>
#include <cstring>

#include "runtime/emu/exec_context.h"
#include "runtime/emu/exec_families.h"
#include "runtime/emu/instruction_decode.h"
#include "runtime/emu/memory_access.h"

namespace tcjit::emu {

namespace {

template <typename T> T apply(AtomOp op, T old, T b, T c) {
  switch (op) {
  case AtomOp::Add: return static_cast<T>(old + b);
  case AtomOp::Min: return b < old ? b : old;
  case AtomOp::Max: return b > old ? b : old;
  case AtomOp::Exch: return b;
  case AtomOp::Cas: return old == b ? c : old;
  case AtomOp::And:
    if constexpr (std::is_integral_v<T>)
      return old & b;
    break;
  case AtomOp::Or:
    if constexpr (std::is_integral_v<T>)
      return old | b;
    break;
  case AtomOp::Xor:
    if constexpr (std::is_integral_v<T>)
      return old ^ b;
    break;
  case AtomOp::Inc:
    if constexpr (std::is_integral_v<T>)
      return (old >= b) ? T(0) : static_cast<T>(old + 1);
    break;
  case AtomOp::Dec:
    if constexpr (std::is_integral_v<T>)
      return (old == 0 || old > b) ? b : static_cast<T>(old - 1);
    break;
  }
  return old;
}

template <typename T> T from_bits(uint64_t v) {
  if constexpr (std::is_same_v<T, float>)
    return f32_of(v);
  else if constexpr (std::is_same_v<T, double>)
    return f64_of(v);
  else
    return static_cast<T>(v);
}

template <typename T> uint64_t to_bits(T v) {
  if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>)
    return bits_of(v);
  else
    return static_cast<uint64_t>(static_cast<std::make_unsigned_t<T>>(v));
}

// Atomically updates *p; returns the old value. `shared` skips host atomics.
template <typename T> T update(uint8_t *p, bool host_atomic, AtomOp op, T b, T c) {
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  Bits *bp = reinterpret_cast<Bits *>(p);
  if (!host_atomic) {
    T old = std::bit_cast<T>(*bp);
    *bp = std::bit_cast<Bits>(apply(op, old, b, c));
    return old;
  }
  std::atomic_ref<Bits> ref(*bp);
  Bits expected = ref.load(std::memory_order_relaxed);
  for (;;) {
    T old = std::bit_cast<T>(expected);
    Bits desired = std::bit_cast<Bits>(apply(op, old, b, c));
    if (ref.compare_exchange_weak(expected, desired, std::memory_order_relaxed))
      return old;
  }
}

template <typename T> void run(ExecContext &ctx, Warp &w, const Instr &in, uint32_t mask) {
  const AtomOp op = static_cast<AtomOp>(in.mode);
  uint64_t addresses[32];
  uint32_t global_mask = 0;
  for_each_lane(mask, [&](uint32_t l) {
    uint64_t addr = read_operand(ctx, w, in.src[0], l) + static_cast<uint64_t>(in.src[0].offset);
    LaneAccess a = translate_access_fast(ctx, w, in, l, in.space, addr, sizeof(T), sizeof(T),
                                         AccessKind::Atomic);
    addresses[l] = a.address;
    const bool global = a.space == Space::Global;
    if (global)
      global_mask |= 1u << l;
    T b = from_bits<T>(read_operand(ctx, w, in.src[1], l));
    T c = op == AtomOp::Cas ? from_bits<T>(read_operand(ctx, w, in.src[2], l)) : T{};
    T old = update<T>(a.host, global, op, b, c);
    if (in.op == Op::Atom)
      write_reg(w, in.dst.reg, l, to_bits(old));
  });
  if (global_mask)
    ++ctx.counters.global_atomic_requests;
}

} // namespace

void exec_atomic(ExecContext &ctx, Warp &w, const Instr &in, uint32_t mask) {
  switch (in.type) {
  case DType::F32: return run<float>(ctx, w, in, mask);
  case DType::F64: return run<double>(ctx, w, in, mask);
  case DType::S32: return run<int32_t>(ctx, w, in, mask);
  case DType::S64: return run<int64_t>(ctx, w, in, mask);
  case DType::U32:
  case DType::B32: return run<uint32_t>(ctx, w, in, mask);
  case DType::U64:
  case DType::B64: return run<uint64_t>(ctx, w, in, mask);
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
  case DType::Pred:
  case DType::S4:
  case DType::U4:
  case DType::E4M3:
  case DType::E5M2:
  case DType::B1: break;
  }
  fault(ctx, w, in, -1, "unsupported atomic type");
}

void decode_atomic(DecodeState &s) {
  Instr &in = s.in;
  Modifiers &m = s.mods;
  in.op = s.base == "atom" ? Op::Atom : Op::Red;
  in.cls = InstrClass::Memory;
  in.exec = exec_atomic;
  drop_memory_hints(m);
  in.space = take_space(m);
  static const std::pair<const char *, AtomOp> kOps[] = {
      {"add", AtomOp::Add}, {"min", AtomOp::Min}, {"max", AtomOp::Max}, {"exch", AtomOp::Exch},
      {"cas", AtomOp::Cas}, {"and", AtomOp::And}, {"or", AtomOp::Or},   {"xor", AtomOp::Xor},
      {"inc", AtomOp::Inc}, {"dec", AtomOp::Dec}};
  bool found = false;
  for (const auto &[name, op] : kOps) {
    if (m.take(name)) {
      in.mode = static_cast<uint8_t>(op);
      found = true;
    }
  }
  if (!found)
    decode_fail(s, "'" + s.ai.opcode + "' needs an operation (.add, .cas, ...)");
  m.take("noftz");
  in.type = take_one_type(s);
  expect_no_modifiers_left(s);
  in.access_bytes = static_cast<uint8_t>(dtype_bytes(in.type));
  if (!(in.access_bytes == 4 || in.access_bytes == 8) || in.type == DType::F16x2 ||
      in.type == DType::BF16x2)
    decode_unsupported(s);
  size_t first = 0;
  if (in.op == Op::Atom) {
    in.dst = dest_operand(s, s.ai.operands.at(0), in.type);
    first = 1;
  }
  in.src[0] = address_operand(s, s.ai.operands[first], in.space);
  in.src[1] = source_operand(s, first + 1, in.type);
  if (static_cast<AtomOp>(in.mode) == AtomOp::Cas)
    in.src[2] = source_operand(s, first + 2, in.type);
}

} // namespace tcjit::emu
