#include "runtime/emu/register_compaction.h"

#include <algorithm>
#include <functional>
#include <queue>
#include <vector>

namespace tcjit::emu {

namespace {

constexpr uint32_t kNone = ~0u;

struct Interval {
  uint32_t lo = kNone, hi = 0;
  bool read_first = false; // the first access (in index order) may read the register
};

// Calls f(reg, is_write) for each register operand of `in` (vector elements included).
template <typename F> void for_each_register(const Program &prog, const Instr &in, F f) {
  auto operand = [&](const Operand &o, bool is_write) {
    if (o.kind == OperandKind::Reg) {
      f(o.reg, is_write);
    } else if (o.kind == OperandKind::Vector) {
      for (uint32_t i = 0; i < o.count; ++i)
        f(prog.vector_regs[o.reg + i], is_write);
    }
  };
  if (in.has_guard)
    f(in.guard, false);
  for (const Operand &o : in.src)
    operand(o, false);
  // a predicated write leaves the register as it was in the lanes whose guard is false
  operand(in.dst, !in.has_guard);
  operand(in.dst2, !in.has_guard);
}

} // namespace

void compact_registers(Program &prog) {
  for (const Instr &in : prog.code)
    if (in.op == Op::Call)
      return;
  const uint32_t n = prog.num_regs;
  std::vector<Interval> iv(n);
  for (uint32_t pc = 0; pc < prog.code.size(); ++pc) {
    // reads of an instruction come before its writes
    for_each_register(prog, prog.code[pc], [&](uint32_t r, bool is_write) {
      Interval &v = iv[r];
      if (v.lo == kNone) {
        v.lo = pc;
        v.read_first = !is_write;
      } else if (v.lo == pc && !is_write) {
        v.read_first = true; // read and written by its first instruction
      }
      v.hi = pc;
    });
  }
  for (const auto &[reg, value] : prog.constant_regs)
    iv[reg].read_first = true;                      // set when a block starts
  std::vector<std::pair<uint32_t, uint32_t>> loops; // [target, branch]
  for (uint32_t pc = 0; pc < prog.code.size(); ++pc) {
    const Instr &in = prog.code[pc];
    if (in.is_control && in.op == Op::Bra && in.target <= pc)
      loops.push_back({in.target, pc});
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (Interval &v : iv) {
      if (v.lo == kNone)
        continue;
      for (const auto &[t, b] : loops) {
        if (v.lo <= b && t <= v.hi && (t < v.lo || b > v.hi)) {
          v.lo = std::min(v.lo, t);
          v.hi = std::max(v.hi, b);
          changed = true;
        }
      }
    }
  }
  // Linear scan over the intervals in order of their start.
  std::vector<uint32_t> slot(n, kNone), order;
  for (uint32_t r = kReservedRegs; r < n; ++r)
    if (iv[r].lo != kNone)
      order.push_back(r);
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return iv[a].lo < iv[b].lo; });
  uint32_t next_slot = kReservedRegs;
  std::vector<uint32_t> free_slots;
  using Active = std::pair<uint32_t, uint32_t>; // (hi, slot)
  std::priority_queue<Active, std::vector<Active>, std::greater<Active>> active;
  for (uint32_t r : order) {
    const Interval &v = iv[r];
    if (v.read_first) {
      slot[r] = next_slot++; // its own, never shared
      continue;
    }
    while (!active.empty() && active.top().first < v.lo) {
      free_slots.push_back(active.top().second);
      active.pop();
    }
    if (free_slots.empty()) {
      slot[r] = next_slot++;
    } else {
      slot[r] = free_slots.back();
      free_slots.pop_back();
    }
    active.push({v.hi, slot[r]});
  }
  for (uint32_t r = 0; r < kReservedRegs && r < n; ++r)
    slot[r] = r;
  auto remap = [&](uint32_t r) { return slot[r] == kNone ? kSinkReg : slot[r]; };
  for (Instr &in : prog.code) {
    if (in.has_guard)
      in.guard = remap(in.guard);
    for (Operand *o :
         {&in.dst, &in.dst2, &in.src[0], &in.src[1], &in.src[2], &in.src[3], &in.src[4]})
      if (o->kind == OperandKind::Reg)
        o->reg = remap(o->reg);
  }
  for (uint32_t &r : prog.vector_regs)
    r = remap(r);
  for (auto &[reg, value] : prog.constant_regs)
    reg = remap(reg);
  prog.num_regs = next_slot;
}

} // namespace tcjit::emu
