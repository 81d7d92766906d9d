#include "runtime/emu/executor.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>

#include "runtime/emu/cp_async_state.h"
#include "runtime/emu/exec_context.h"
#include "runtime/emu/exec_families.h"
#include "runtime/emu/instruction_decode.h"

namespace tcjit::emu {

namespace {

constexpr uint32_t kSliceInstructions = 2048; // warp instructions before switching warps

// Instructions that write memory (any state space, the block's own param scratch of calls and
// returns included) or a barrier's arrival count: the spin detector's "progress".
constexpr std::array<bool, static_cast<size_t>(Op::CpAsyncWaitAll) + 1> kWritesMemory = [] {
  std::array<bool, static_cast<size_t>(Op::CpAsyncWaitAll) + 1> writes{};
  for (Op op : {Op::St, Op::Atom, Op::Red, Op::Call, Op::Ret, Op::BarArrive, Op::CpAsync,
                Op::CpAsyncWait, Op::CpAsyncWaitAll})
    writes[static_cast<size_t>(op)] = true;
  return writes;
}();

void release_barrier(Cta &cta, uint32_t id) {
  ++cta.race_epoch; // racecheck: a new barrier interval
  ++cta.barrier_releases;
  for (Warp &w : cta.warps) {
    if (w.state == WarpState::AtBarrier && w.barrier_id == id)
      w.state = WarpState::Running;
  }
  cta.barriers[id] = Barrier{};
}

void check_barriers(Cta &cta) {
  for (uint32_t id = 0; id < cta.barriers.size(); ++id) {
    Barrier &b = cta.barriers[id];
    if (b.arrived == 0)
      continue;
    uint32_t expected = b.expected ? b.expected : cta.live_threads;
    if (b.arrived >= expected)
      release_barrier(cta, id);
  }
}

// Sets the next PC of each lane in `active` (next[lane]) and tracks divergence.
void set_next_pcs(Warp &w, uint32_t active, const std::array<uint32_t, 32> &next) {
  if (!w.diverged) {
    if (active == 0)
      return;
    uint32_t first = next[std::countr_zero(active)];
    bool same = true;
    for_each_lane(active, [&](uint32_t l) { same &= next[l] == first; });
    if (same) {
      w.pc = first;
      return;
    }
    w.diverged = true;
    for_each_lane(w.live, [&](uint32_t l) { w.lane_pc[l] = w.pc; });
  }
  for_each_lane(active, [&](uint32_t l) { w.lane_pc[l] = next[l]; });
}

// After lane PCs changed: the next step re-selects the group (and notices reconvergence).
void try_reconverge(Warp &w) {
  w.group_valid = false;
}

// Picks the lanes at the lowest PC among the lanes not parked (lane_pc of non-live lanes is
// ~0u); parked lanes at that PC join the group. When every live lane is parked, all are released.
void select_group(Warp &w) {
  uint32_t candidates = w.live & ~w.parked;
  if (candidates == 0) {
    w.parked = 0;
    w.released = true;
    candidates = w.live;
  }
  uint32_t lo = ~0u;
  for (uint32_t l = 0; l < 32; ++l)
    lo = std::min(lo, (candidates >> l & 1) ? w.lane_pc[l] : ~0u);
  uint32_t mask = 0, next = ~0u;
  for (uint32_t l = 0; l < 32; ++l) {
    const uint32_t v = w.lane_pc[l];
    mask |= uint32_t(v == lo) << l;
    next = std::min(next, v == lo ? ~0u : v);
  }
  mask &= w.live;
  w.parked &= ~mask;
  w.group_pc = lo;
  w.group_mask = mask;
  w.next_group_pc = next;
  w.group_valid = true;
  if (w.group_mask == w.live) { // every live lane at one PC: converged again
    w.diverged = false;
    w.group_valid = false;
    w.parked = 0;
    w.pc = lo;
  }
}

void materialize_group(Warp &w) {
  if (w.diverged && w.group_valid)
    for_each_lane(w.group_mask, [&](uint32_t l) { w.lane_pc[l] = w.group_pc; });
}

void exit_lanes(ExecContext &ctx, Warp &w, uint32_t lanes) {
  complete_async_copies(ctx, w, lanes, 0, /*all=*/true);
  for_each_lane(lanes, [&](uint32_t l) {
    w.call_stack[l].clear();
    w.lane_pc[l] = ~0u;
  });
  w.live &= ~lanes;
  w.parked &= ~lanes;
  ctx.cta->live_threads -= static_cast<uint32_t>(std::popcount(lanes));
  if (w.live == 0)
    w.state = WarpState::Exited;
  check_barriers(*ctx.cta);
}

std::string lane_list(uint32_t mask) {
  std::string s;
  for (uint32_t l = 0; l < 32; ++l) {
    if (!(mask >> l & 1))
      continue;
    uint32_t e = l;
    while (e + 1 < 32 && (mask >> (e + 1) & 1))
      ++e;
    if (!s.empty())
      s += ",";
    s += std::to_string(l);
    if (e > l)
      s += "-" + std::to_string(e);
    l = e;
  }
  return s.empty() ? "none" : s;
}

// ret: back to the caller (copying the return values), or exit from the kernel
void exec_ret(ExecContext &ctx, Warp &w, uint32_t pc, uint32_t active, uint32_t exec) {
  const Program &prog = *ctx.program;
  std::array<uint32_t, 32> next;
  uint32_t exiting = 0;
  for_each_lane(active, [&](uint32_t l) {
    if (!(exec >> l & 1)) {
      next[l] = pc + 1;
      return;
    }
    auto &stack = w.call_stack[l];
    if (stack.empty()) {
      exiting |= 1u << l;
      next[l] = pc + 1;
      return;
    }
    uint32_t call_pc = stack.back();
    stack.pop_back();
    const Instr &call = prog.code[call_pc];
    const Function &callee = prog.functions[call.callee];
    uint8_t *scratch =
        ctx.cta->param_scratch.data() + size_t{thread_index(w, l)} * prog.param_scratch_bytes;
    for (uint32_t i = 0; i < call.dst.count; ++i) {
      std::memmove(scratch + vector_reg(ctx, call.dst, i), scratch + callee.return_offsets[i],
                   callee.return_sizes[i]);
    }
    next[l] = call_pc + 1;
  });
  set_next_pcs(w, active & ~exiting, next);
  if (exiting)
    exit_lanes(ctx, w, exiting);
  try_reconverge(w);
}

// call: pass the arguments through the thread's parameter scratch, push the return pc
void exec_call(ExecContext &ctx, Warp &w, const Instr &in, uint32_t pc, uint32_t active,
               uint32_t exec) {
  const Program &prog = *ctx.program;
  std::array<uint32_t, 32> next;
  const Function &callee = prog.functions[in.callee];
  for_each_lane(active, [&](uint32_t l) {
    if (!(exec >> l & 1)) {
      next[l] = pc + 1;
      return;
    }
    uint8_t *scratch =
        ctx.cta->param_scratch.data() + size_t{thread_index(w, l)} * prog.param_scratch_bytes;
    for (uint32_t i = 0; i < in.src[0].count; ++i) {
      std::memmove(scratch + callee.param_offsets[i], scratch + vector_reg(ctx, in.src[0], i),
                   callee.param_sizes[i]);
    }
    if (w.call_stack[l].size() > 64)
      fault(ctx, w, in, static_cast<int>(l), "call stack deeper than 64 frames");
    w.call_stack[l].push_back(pc);
    next[l] = in.target;
  });
  set_next_pcs(w, active, next);
  try_reconverge(w);
}

// bar.sync / bar.arrive (barrier.sync, barrier.arrive)
void exec_barrier(ExecContext &ctx, Warp &w, const Instr &in, uint32_t pc, uint32_t active,
                  uint32_t exec) {
  std::array<uint32_t, 32> next;
  for_each_lane(active, [&](uint32_t l) { next[l] = pc + 1; });
  set_next_pcs(w, active, next);
  if (exec == 0) {
    try_reconverge(w);
    return;
  }
  if (exec != w.live) {
    fault(ctx, w, in, -1,
          std::string("divergent barrier: ") + (in.op == Op::BarSync ? "bar.sync" : "bar.arrive") +
              " executed by lanes " + lane_list(exec) + " while lanes " +
              lane_list(w.live & ~exec) +
              " of the same warp have not exited and did not arrive (every thread of the "
              "block must reach the same barrier; move the barrier out of the divergent code)");
  }
  uint32_t lane0 = static_cast<uint32_t>(std::countr_zero(exec));
  uint64_t id = read_operand(ctx, w, in.src[0], lane0);
  if (id >= 16)
    fault(ctx, w, in, -1, "barrier id " + std::to_string(id) + " is out of range (0..15)");
  Barrier &b = ctx.cta->barriers[id];
  if (in.src[1].kind != OperandKind::None) {
    uint64_t count = read_operand(ctx, w, in.src[1], lane0);
    if (count == 0 || count % 32 != 0)
      fault(ctx, w, in, -1,
            "barrier thread count " + std::to_string(count) + " must be a non-zero multiple of 32");
    if (b.arrived != 0 && b.expected != count)
      fault(ctx, w, in, -1,
            "barrier " + std::to_string(id) + " used with thread counts " +
                std::to_string(b.expected) + " and " + std::to_string(count));
    b.expected = static_cast<uint32_t>(count);
  }
  b.arrived += static_cast<uint32_t>(std::popcount(exec));
  if (in.op == Op::BarSync) {
    ++ctx.counters.barriers;
    w.state = WarpState::AtBarrier;
    w.barrier_id = static_cast<uint32_t>(id);
    w.barrier_pc = pc;
    ++b.waiting_warps;
  }
  uint32_t expected = b.expected ? b.expected : ctx.cta->live_threads;
  if (b.arrived >= expected)
    release_barrier(*ctx.cta, static_cast<uint32_t>(id));
  try_reconverge(w);
}

void exec_control(ExecContext &ctx, Warp &w, const Instr &in, uint32_t pc, uint32_t active,
                  uint32_t exec) {
  std::array<uint32_t, 32> next;
  switch (in.op) {
  case Op::Bra: {
    if (!w.diverged) {
      if (exec == active) {
        w.pc = in.target;
        return;
      }
      if (exec == 0) {
        w.pc = pc + 1;
        return;
      }
      if (in.uni)
        fault(ctx, w, in, -1,
              "bra.uni taken by lanes " + lane_list(exec) + " but not by lanes " +
                  lane_list(active & ~exec) + " (.uni promises a non-divergent branch)");
    }
    for_each_lane(active, [&](uint32_t l) { next[l] = (exec >> l & 1) ? in.target : pc + 1; });
    set_next_pcs(w, active, next);
    try_reconverge(w);
    return;
  }
  case Op::Exit: {
    for_each_lane(active & ~exec, [&](uint32_t l) { next[l] = pc + 1; });
    set_next_pcs(w, active & ~exec, next);
    if (exec)
      exit_lanes(ctx, w, exec);
    try_reconverge(w);
    return;
  }
  case Op::Ret: exec_ret(ctx, w, pc, active, exec); return;
  case Op::Call: exec_call(ctx, w, in, pc, active, exec); return;
  case Op::Trap:
    if (exec)
      fault(ctx, w, in, std::countr_zero(exec), "trap executed (the kernel aborted itself)");
    for_each_lane(active, [&](uint32_t l) { next[l] = pc + 1; });
    set_next_pcs(w, active, next);
    return;
  case Op::BarSync:
  case Op::BarArrive: exec_barrier(ctx, w, in, pc, active, exec); return;
  case Op::BarWarpSync: {
    ++w.sync_epoch; // racecheck: the warp's lanes see each other's shared accesses from here
    for_each_lane(active, [&](uint32_t l) { next[l] = pc + 1; });
    set_next_pcs(w, active, next);
    if (exec) {
      uint32_t member = static_cast<uint32_t>(
          read_operand(ctx, w, in.src[0], static_cast<uint32_t>(std::countr_zero(exec))));
      uint32_t missing = member & w.exists & ~exec;
      if (missing)
        fault(ctx, w, in, -1,
              "bar.warp.sync: lanes " + lane_list(missing) +
                  " are named in the member mask but did not execute it with lanes " +
                  lane_list(exec));
    }
    try_reconverge(w);
    return;
  }
  case Op::Mov:
  case Op::Setp:
  case Op::Selp:
  case Op::Slct:
  case Op::Add:
  case Op::Sub:
  case Op::Mul:
  case Op::Mad:
  case Op::Mul24:
  case Op::Mad24:
  case Op::Div:
  case Op::Rem:
  case Op::Min:
  case Op::Max:
  case Op::Abs:
  case Op::Neg:
  case Op::Shl:
  case Op::Shr:
  case Op::Shf:
  case Op::Bfe:
  case Op::Bfi:
  case Op::Prmt:
  case Op::Popc:
  case Op::Clz:
  case Op::Brev:
  case Op::Bfind:
  case Op::Lop3:
  case Op::And:
  case Op::Or:
  case Op::Xor:
  case Op::Not:
  case Op::Cnot:
  case Op::Sad:
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
  fault(ctx, w, in, -1, "internal error: non-control instruction in the control path");
}

void run_warp(ExecContext &ctx, Warp &w, uint32_t budget) {
  const Instr *code = ctx.program->code.data();
  LaunchCounters &c = ctx.counters;
  while (budget-- > 0 && w.state == WarpState::Running) {
    uint32_t pc, active;
    if (w.diverged && !w.group_valid)
      select_group(w);
    if (!w.diverged) {
      pc = w.pc;
      active = w.live;
    } else {
      pc = w.group_pc;
      active = w.group_mask;
    }
    const Instr &in = code[pc];
    if (w.diverged && in.is_collective && !w.released && (w.live & ~w.parked & ~active) != 0) {
      // a collective reached by part of a diverged warp while other lanes still run elsewhere:
      // park these lanes here and run the others first
      materialize_group(w);
      w.parked |= active;
      w.group_valid = false;
      continue;
    }
    w.released = false;
    uint32_t exec = active;
    if (in.has_guard) {
      exec = 0;
      const uint64_t *g = w.regs + size_t{in.guard} * 32;
      for_each_lane(active,
                    [&](uint32_t l) { exec |= uint32_t((g[l] != 0) != in.guard_negated) << l; });
    }
    ++c.warp_instructions;
    ++c.warp_instructions_by_class[static_cast<size_t>(in.cls)];
    c.thread_instructions += static_cast<uint64_t>(std::popcount(exec));
    ++ctx.clock;
    // Writes are announced before they happen and counted again after (the spin detector of
    // another worker must never miss a write it could have read half of).
    LaunchState::WorkerProgress *writing = nullptr;
    if (exec && kWritesMemory[static_cast<size_t>(in.op)]) {
      writing = &ctx.launch->progress[ctx.worker];
      writing->writes_started.fetch_add(1, std::memory_order_seq_cst);
    }
    if (in.is_control) {
      materialize_group(w);
      exec_control(ctx, w, in, pc, active, exec);
      w.group_valid = false;
      if (writing)
        writing->writes_finished.fetch_add(1, std::memory_order_release);
      continue;
    }
    if (exec)
      in.exec(ctx, w, in, exec);
    if (writing)
      writing->writes_finished.fetch_add(1, std::memory_order_release);
    if (!w.diverged) {
      w.pc = pc + 1;
    } else {
      w.group_pc = pc + 1;
      if (w.group_pc >= w.next_group_pc) { // reached the next group: merge
        materialize_group(w);
        w.group_valid = false;
      }
    }
  }
}

void init_cta(ExecContext &ctx, const LaunchRequest &req, uint64_t linear_cta) {
  const Program &prog = *req.program;
  const Function &fn = prog.functions[req.function];
  const device::LaunchConfig &cfg = req.config;
  Cta &cta = *ctx.cta;
  cta.id.x = static_cast<uint32_t>(linear_cta % cfg.grid.x);
  cta.id.y = static_cast<uint32_t>(linear_cta / cfg.grid.x % cfg.grid.y);
  cta.id.z = static_cast<uint32_t>(linear_cta / (uint64_t{cfg.grid.x} * cfg.grid.y));
  const uint32_t threads = static_cast<uint32_t>(cfg.block.count());
  const uint32_t nwarps = (threads + 31) / 32;
  cta.threads = threads;
  cta.live_threads = threads;
  const uint64_t shared_bytes = uint64_t{fn.shared.dynamic_base} + cfg.dynamic_shared_bytes;
  cta.shared.assign(shared_bytes, 0);
  cta.async_pending.assign(shared_bytes / 4 + 1, 0);
  cta.async_pending_words = 0;
  cta.racecheck = req.racecheck == RaceCheck::All || racecheck_samples_block(cfg.grid, linear_cta);
  if (cta.racecheck) {
    const size_t words = shared_bytes / 4 + 1;
    if (cta.race_shadow.size() < words || cta.race_epoch > 0xf0000000u) {
      cta.race_shadow.assign(std::max(words, cta.race_shadow.size()), ShadowWord{});
      cta.race_epoch = 1;
    }
    ++cta.race_epoch; // a new interval: the accesses of earlier blocks never conflict
  }
  cta.local.assign(size_t{threads} * prog.local_bytes, 0);
  cta.param_scratch.assign(size_t{threads} * prog.param_scratch_bytes, 0);
  cta.regs.assign(size_t{nwarps} * prog.num_regs * 32, 0);
  cta.barriers.fill(Barrier{});
  cta.warps.resize(nwarps);
  const uint32_t smid = static_cast<uint32_t>(linear_cta % req.sm_count);
  for (uint32_t wi = 0; wi < nwarps; ++wi) {
    Warp &w = cta.warps[wi];
    w.index = wi;
    w.sync_epoch = 0;
    w.regs = cta.regs.data() + size_t{wi} * prog.num_regs * 32;
    uint32_t n = std::min<uint32_t>(32, threads - wi * 32);
    w.exists = n == 32 ? ~0u : ((1u << n) - 1);
    w.live = w.exists;
    w.diverged = false;
    w.group_valid = false;
    w.parked = 0;
    w.released = false;
    w.lane_pc.fill(~0u);
    w.pc = fn.entry_pc;
    w.state = WarpState::Running;
    w.carry = 0;
    for (auto &s : w.call_stack)
      s.clear();
    for (auto &q : w.async_copies) {
      q.copies.clear();
      q.head = 0;
    }
    w.async_lanes = 0;
    w.warp_async_copies.copies.clear();
    w.warp_async_copies.head = 0;
    w.async_committed.fill(0);
    for (uint32_t l = 0; l < 32; ++l) {
      uint32_t t = wi * 32 + l;
      auto set = [&](SpecialReg r, uint64_t v) { w.regs[static_cast<uint32_t>(r) * 32 + l] = v; };
      set(SpecialReg::TidX, t % cfg.block.x);
      set(SpecialReg::TidY, t / cfg.block.x % cfg.block.y);
      set(SpecialReg::TidZ, t / (cfg.block.x * cfg.block.y));
      set(SpecialReg::NtidX, cfg.block.x);
      set(SpecialReg::NtidY, cfg.block.y);
      set(SpecialReg::NtidZ, cfg.block.z);
      set(SpecialReg::CtaidX, cta.id.x);
      set(SpecialReg::CtaidY, cta.id.y);
      set(SpecialReg::CtaidZ, cta.id.z);
      set(SpecialReg::NctaidX, cfg.grid.x);
      set(SpecialReg::NctaidY, cfg.grid.y);
      set(SpecialReg::NctaidZ, cfg.grid.z);
      set(SpecialReg::LaneId, l);
      set(SpecialReg::WarpId, wi);
      set(SpecialReg::NwarpId, nwarps);
      set(SpecialReg::SmId, smid);
      set(SpecialReg::NsmId, req.sm_count);
      set(SpecialReg::GridId, 1);
      set(SpecialReg::LanemaskEq, 1u << l);
      set(SpecialReg::LanemaskLt, (1u << l) - 1);
      set(SpecialReg::LanemaskLe, l == 31 ? ~0u : (2u << l) - 1);
      set(SpecialReg::LanemaskGt, l == 31 ? 0u : ~((2u << l) - 1));
      set(SpecialReg::LanemaskGe, ~((1u << l) - 1));
      set(SpecialReg::DynamicSmemSize, cfg.dynamic_shared_bytes);
      set(SpecialReg::TotalSmemSize, shared_bytes);
      set(SpecialReg::Zero, 0);
      for (const auto &[reg, value] : prog.constant_regs)
        w.regs[size_t{reg} * 32 + l] = value;
    }
  }
}

std::string deadlock_message(const Program &prog, const Cta &cta) {
  std::string s = "barrier deadlock: no warp can make progress;";
  for (const Warp &w : cta.warps) {
    if (w.state == WarpState::AtBarrier) {
      const Barrier &b = cta.barriers[w.barrier_id];
      s += " warp " + std::to_string(w.index) + " waits at barrier " +
           std::to_string(w.barrier_id) + " (line " + std::to_string(prog.code[w.barrier_pc].line) +
           ", " + std::to_string(b.arrived) + " of " +
           std::to_string(b.expected ? b.expected : cta.live_threads) + " threads arrived);";
    }
  }
  s += " some threads of the block never reach the barrier (divergent __syncthreads or a wrong "
       "bar.sync thread count)";
  return s;
}

// --- spin without progress ----------------------------------------------------------------------
// Running warps that loop without writing memory while the block's other warps wait at a barrier
// would run until the instruction or time limit. The block is watched after each scheduling
// round in which some of its warps wait at a barrier, others run and no barrier was released,
// from the second such round in a row (a warp just late to the barrier costs nothing; in kernels
// with frequent barriers most rounds release one). A window opens when no write is in flight
// anywhere in the launch (every worker's writes_finished == writes_started) and closes when any
// worker starts one (a write by any block: global, shared, local, atomic, cp.async, call
// parameters, bar.arrive). In each watched round of an open window the block's state is hashed:
// the running warps' registers, PCs, divergence, call stacks and pending copies, the waiting
// warps and the barriers. A state seen twice within one window is a cycle: execution is
// deterministic and nothing the warps read has changed. Only another block still running could
// change it later by writing (inter-block polling), so the launch fails only when every other
// worker is idle or has found its own block spinning since this window opened. A spin-wait on a
// warp of the same block that is not at a barrier is never judged (that warp's registers change,
// or it writes), nor is a loop that reads %clock or %globaltimer (its registers change).
// docs/emulator.md, "Sanitizer".
constexpr size_t kMaxSpinStates = 4096; // a longer cycle without writes reopens the window

struct SpinWatch {
  bool open = false;
  uint32_t gated_rounds = 0;
  uint64_t barrier_releases = 0; // the block's count at the last round
  uint64_t my_checks = 0;
  std::vector<uint64_t> finished;      // each worker's writes_finished when the window opened
  std::vector<uint64_t> others_checks; // each worker's spin_checks when the window opened
  std::vector<uint64_t> states;        // the block states seen in the window
};

struct StateHash {
  uint64_t h = 0x9e3779b97f4a7c15ull;
  void add(uint64_t v) {
    h = (h ^ v) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
};

uint64_t block_state_hash(const Program &prog, const Cta &cta) {
  StateHash s;
  s.add(cta.live_threads);
  for (const Barrier &b : cta.barriers) {
    s.add(b.arrived);
    s.add(uint64_t{b.expected} << 32 | b.waiting_warps);
  }
  const size_t reg_words = size_t{prog.num_regs} * 32;
  for (const Warp &w : cta.warps) {
    s.add(static_cast<uint64_t>(w.state) | uint64_t{w.index} << 8);
    if (w.state != WarpState::Running) {
      s.add(uint64_t{w.barrier_id} << 32 | w.barrier_pc);
      continue;
    }
    s.add(uint64_t{w.live} << 32 | w.pc);
    s.add(uint64_t{w.parked} << 32 | uint64_t{w.released} << 1 | uint64_t{w.diverged});
    s.add(uint64_t{w.group_valid} << 32 | w.group_pc);
    s.add(uint64_t{w.group_mask} << 32 | w.next_group_pc);
    s.add(w.carry);
    if (w.diverged)
      for (uint32_t pc : w.lane_pc)
        s.add(pc);
    for (uint32_t l = 0; l < 32; ++l) {
      s.add(w.call_stack[l].size());
      for (uint32_t pc : w.call_stack[l])
        s.add(pc);
      s.add(pending_async_copies(w, l));
      s.add(w.async_committed[l]);
    }
    for (size_t i = 0; i < reg_words; ++i)
      s.add(w.regs[i]);
  }
  return s.h;
}

std::string spin_message(const Program &prog, const Cta &cta) {
  std::string spinning, waiting;
  for (const Warp &w : cta.warps) {
    if (w.state == WarpState::Running) {
      const uint32_t pc =
          std::min<size_t>(w.diverged && w.group_valid ? w.group_pc : w.pc, prog.code.size() - 1);
      spinning += std::string(spinning.empty() ? "" : ", ") + "warp " + std::to_string(w.index) +
                  " at line " + std::to_string(prog.code[pc].line) +
                  (pc < prog.opcode_text.size() ? " (" + prog.opcode_text[pc] + ")" : "");
    } else if (w.state == WarpState::AtBarrier) {
      const Barrier &b = cta.barriers[w.barrier_id];
      waiting += std::string(waiting.empty() ? "" : ", ") + "warp " + std::to_string(w.index) +
                 " waits at barrier " + std::to_string(w.barrier_id) + " (line " +
                 std::to_string(prog.code[w.barrier_pc].line) + ", " + std::to_string(b.arrived) +
                 " of " + std::to_string(b.expected ? b.expected : cta.live_threads) +
                 " threads arrived)";
    }
  }
  return "spin without progress: " + spinning +
         " loop(s) through the same state again and again without writing memory, while " +
         waiting +
         "; no block of the launch writes memory any more, so nothing they read can change and "
         "they would spin until the instruction or time limit (a flag that nobody sets, or a "
         "barrier that the spinning warps skip)";
}

// After a scheduling round: fails the launch when the block spins (see above).
void watch_for_spin(ExecContext &ctx, SpinWatch &watch) {
  const Cta &cta = *ctx.cta;
  LaunchState &launch = *ctx.launch;
  LaunchState::WorkerProgress &mine = launch.progress[ctx.worker];
  bool waiting = false, running = false;
  for (const Warp &w : cta.warps) {
    waiting |= w.state == WarpState::AtBarrier;
    running |= w.state == WarpState::Running;
  }
  // Rounds that released a barrier made progress (in a kernel with frequent barriers the last
  // warp to arrive runs on to the next barrier, so most rounds end with one warp waiting).
  const bool released = cta.barrier_releases != watch.barrier_releases;
  watch.barrier_releases = cta.barrier_releases;
  if (!waiting || !running || released) {
    if (watch.gated_rounds != 0) {
      watch.gated_rounds = 0;
      watch.open = false;
      if (watch.my_checks != 0)
        mine.spin_checks.store(watch.my_checks = 0, std::memory_order_release);
    }
    return;
  }
  if (++watch.gated_rounds < 2)
    return;
  const unsigned n = launch.workers;
  bool quiet = watch.open;
  for (unsigned i = 0; quiet && i < n; ++i)
    quiet = launch.progress[i].writes_started.load(std::memory_order_acquire) == watch.finished[i];
  if (!quiet || watch.states.size() >= kMaxSpinStates) {
    // (Re)open the window: from here on, a write by any block closes it. States are hashed from
    // the next round on (a round with writes costs no hash).
    watch.open = true;
    watch.finished.resize(n);
    watch.others_checks.resize(n);
    for (unsigned i = 0; i < n; ++i) {
      watch.finished[i] = launch.progress[i].writes_finished.load(std::memory_order_acquire);
      watch.others_checks[i] = launch.progress[i].spin_checks.load(std::memory_order_acquire);
    }
    watch.states.clear();
    if (watch.my_checks != 0)
      mine.spin_checks.store(watch.my_checks = 0, std::memory_order_release);
    return;
  }
  const uint64_t state = block_state_hash(*ctx.program, cta);
  if (std::find(watch.states.begin(), watch.states.end(), state) == watch.states.end()) {
    watch.states.push_back(state);
    return;
  }
  // A cycle without writes: this block spins. The launch cannot finish if no other block can
  // write any more either: every other worker is idle or found its block spinning since then.
  mine.spin_checks.store(++watch.my_checks, std::memory_order_release);
  for (unsigned i = 0; i < n; ++i) {
    if (i == ctx.worker)
      continue;
    const uint64_t checks = launch.progress[i].spin_checks.load(std::memory_order_acquire);
    if (checks != LaunchState::kWorkerIdle && checks <= watch.others_checks[i])
      return;
  }
  const Warp *spinner = nullptr;
  for (const Warp &w : cta.warps) {
    if (w.state == WarpState::Running) {
      spinner = &w;
      break;
    }
  }
  const Program &prog = *ctx.program;
  const uint32_t pc =
      std::min<size_t>(spinner->diverged && spinner->group_valid ? spinner->group_pc : spinner->pc,
                       prog.code.size() - 1);
  fault(ctx, *spinner, prog.code[pc], -1, spin_message(prog, cta));
}

void run_cta(ExecContext &ctx, uint64_t instruction_limit) {
  Cta &cta = *ctx.cta;
  const uint64_t start_clock = ctx.clock;
  SpinWatch spin_watch;
  ctx.launch->progress[ctx.worker].spin_checks.store(0, std::memory_order_release);
  for (;;) {
    if (ctx.clock - start_clock > instruction_limit) {
      for (const Warp &w : cta.warps) {
        if (w.state == WarpState::Running) {
          const uint32_t pc = w.diverged && w.group_valid ? w.group_pc : w.pc;
          fault(ctx, w, ctx.program->code[std::min<size_t>(pc, ctx.program->code.size() - 1)], -1,
                "instruction limit reached: the block executed more than " +
                    std::to_string(instruction_limit) +
                    " warp instructions: an infinite loop, or a spin-wait the emulator cannot "
                    "finish (if the kernel is just long, raise the limit: tcjit emu run "
                    "--max-instructions, EmuDeviceOptions::max_warp_instructions_per_cta)");
        }
      }
    }
    if (ctx.launch->has_deadline && std::chrono::steady_clock::now() > ctx.launch->deadline) {
      for (const Warp &w : cta.warps) {
        if (w.state == WarpState::Running || w.state == WarpState::AtBarrier) {
          const uint32_t pc = w.state == WarpState::AtBarrier ? w.barrier_pc
                              : w.diverged && w.group_valid   ? w.group_pc
                                                              : w.pc;
          char secs[32];
          std::snprintf(secs, sizeof secs, "%g", ctx.launch->timeout_seconds);
          fault(ctx, w, ctx.program->code[std::min<size_t>(pc, ctx.program->code.size() - 1)], -1,
                std::string("time limit reached: the launch ran longer than ") + secs +
                    " s of wall-clock time (block " + std::to_string(cta.id.x) + "," +
                    std::to_string(cta.id.y) + "," + std::to_string(cta.id.z) +
                    " running); a hang, or a launch too large for the emulator (raise the limit: "
                    "tcjit emu run --timeout, EmuDeviceOptions::timeout_seconds)");
        }
      }
    }
    bool any_running = false, all_exited = true;
    for (Warp &w : cta.warps) {
      if (w.state == WarpState::Running) {
        run_warp(ctx, w, kSliceInstructions);
        any_running = true;
      }
      if (ctx.launch->failed.load(std::memory_order_relaxed))
        return;
    }
    for (const Warp &w : cta.warps)
      all_exited &= w.state == WarpState::Exited;
    if (all_exited)
      return;
    if (any_running)
      watch_for_spin(ctx, spin_watch);
    if (!any_running) {
      check_barriers(cta);
      bool released = false;
      for (const Warp &w : cta.warps)
        released |= w.state == WarpState::Running;
      if (!released) {
        const Warp *waiting = nullptr;
        for (const Warp &w : cta.warps) {
          if (w.state == WarpState::AtBarrier) {
            waiting = &w;
            break;
          }
        }
        const Instr &in = ctx.program->code[waiting->barrier_pc];
        fault(ctx, *waiting, in, -1, deadlock_message(*ctx.program, cta));
      }
    }
  }
}

void validate(const LaunchRequest &req) {
  using device::DeviceError;
  using device::ErrorKind;
  const Program &prog = *req.program;
  if (req.function >= prog.functions.size() || !prog.functions[req.function].is_entry)
    throw DeviceError(ErrorKind::InvalidArgument, "emulator: the function to launch is not a "
                                                  "kernel (.entry)");
  const Function &fn = prog.functions[req.function];
  const auto &c = req.config;
  auto bad = [&](const std::string &what) {
    throw DeviceError(ErrorKind::InvalidArgument, "launch of '" + fn.name + "': " + what);
  };
  if (c.grid.x == 0 || c.grid.y == 0 || c.grid.z == 0)
    bad("grid dimensions must be at least 1");
  if (c.block.x == 0 || c.block.y == 0 || c.block.z == 0)
    bad("block dimensions must be at least 1");
  if (c.block.count() > 1024)
    bad("block of " + std::to_string(c.block.count()) + " threads exceeds 1024");
  if (c.block.z > 64)
    bad("block.z must be at most 64");
  if (c.grid.x > 2147483647u)
    bad("grid.x of " + std::to_string(c.grid.x) + " exceeds 2147483647 (2^31 - 1)");
  if (c.grid.y > 65535 || c.grid.z > 65535)
    bad("grid.y and grid.z must be at most 65535");
  uint64_t shared = uint64_t{fn.shared.dynamic_base} + c.dynamic_shared_bytes;
  if (shared > req.max_shared_bytes)
    bad("needs " + std::to_string(shared) + " bytes of shared memory (static " +
        std::to_string(fn.shared.static_bytes) + " + dynamic " +
        std::to_string(c.dynamic_shared_bytes) + "), the device allows " +
        std::to_string(req.max_shared_bytes));
  if (req.params.size() != fn.info.param_bytes)
    bad("parameter buffer is " + std::to_string(req.params.size()) +
        " bytes, the kernel "
        "declares " +
        std::to_string(fn.info.param_bytes) + " (build it with ParamBuffer)");
}

} // namespace

uint64_t read_dynamic_special(const ExecContext &ctx, DynamicSpecial s) {
  switch (s) {
  case DynamicSpecial::Clock: return static_cast<uint32_t>(ctx.clock);
  case DynamicSpecial::Clock64: return ctx.clock;
  case DynamicSpecial::GlobalTimer:
    return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count());
  }
  return 0;
}

namespace {

// Calls a launch's progress callback every ~0.2 s of wall-clock time (whichever worker finishes a
// block then; one call at a time) and once at the end.
class ProgressReporter {
public:
  ProgressReporter(const std::function<void(uint64_t, uint64_t)> &callback, uint64_t total)
      : callback_(callback), total_(total), start_(std::chrono::steady_clock::now()) {}

  void block_done() {
    const uint64_t done = done_.fetch_add(1, std::memory_order_relaxed) + 1;
    if (!callback_)
      return;
    const int64_t now = elapsed_ms();
    int64_t due = next_ms_.load(std::memory_order_relaxed);
    if (now < due || !next_ms_.compare_exchange_strong(due, now + kPeriodMs))
      return;
    std::lock_guard lock(mutex_);
    callback_(done, total_);
  }
  void finish() {
    if (!callback_)
      return;
    std::lock_guard lock(mutex_);
    callback_(done_.load(), total_);
  }

private:
  static constexpr int64_t kPeriodMs = 200;
  int64_t elapsed_ms() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                                 start_)
        .count();
  }
  const std::function<void(uint64_t, uint64_t)> &callback_;
  const uint64_t total_;
  const std::chrono::steady_clock::time_point start_;
  std::atomic<uint64_t> done_{0};
  std::atomic<int64_t> next_ms_{kPeriodMs};
  std::mutex mutex_;
};

} // namespace

LaunchCounters execute_launch(const LaunchRequest &request) {
  validate(request);
  LaunchRequest req = request;
  req.racecheck = resolve_racecheck(request.racecheck);
  const Program &prog = *req.program;
  LaunchState state;
  state.program = &prog;
  state.kernel = &prog.functions[req.function];
  state.config = req.config;
  state.params = reinterpret_cast<const uint8_t *>(req.params.data());
  state.param_bytes = static_cast<uint32_t>(req.params.size());
  state.memory = req.memory;
  state.sm_count = std::max<uint32_t>(1, req.sm_count);
  if (req.timeout_seconds > 0) {
    state.has_deadline = true;
    state.timeout_seconds = req.timeout_seconds;
    state.deadline = std::chrono::steady_clock::now() +
                     std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                         std::chrono::duration<double>(std::min(req.timeout_seconds, 1e9)));
  }
  const uint64_t total = req.config.grid.count();
  unsigned workers =
      req.worker_threads ? req.worker_threads : std::max(1u, std::thread::hardware_concurrency());
  workers = static_cast<unsigned>(std::min<uint64_t>(workers, total));
  state.workers = workers;
  state.progress = std::make_unique<LaunchState::WorkerProgress[]>(workers);
  std::atomic<uint64_t> next_cta{0};
  std::vector<LaunchCounters> per_worker(workers);
  ProgressReporter progress(req.on_progress, total);
  auto work = [&](unsigned wi) {
    Cta cta;
    ExecContext ctx;
    ctx.launch = &state;
    ctx.program = &prog;
    ctx.cta = &cta;
    ctx.worker = wi;
    try {
      for (;;) {
        if (state.failed.load(std::memory_order_relaxed))
          break;
        uint64_t i = next_cta.fetch_add(1);
        if (i >= total)
          break;
        init_cta(ctx, req, i);
        ++ctx.counters.ctas;
        ctx.counters.threads += cta.threads;
        run_cta(ctx, req.max_warp_instructions_per_cta ? req.max_warp_instructions_per_cta
                                                       : (1ull << 34));
        progress.block_done();
      }
      state.progress[wi].spin_checks.store(LaunchState::kWorkerIdle, std::memory_order_release);
    } catch (const EmuFault &f) {
      std::lock_guard<std::mutex> lock(state.error_mutex);
      if (!state.failed.exchange(true))
        state.error = f.message;
    } catch (const std::exception &e) {
      std::lock_guard<std::mutex> lock(state.error_mutex);
      if (!state.failed.exchange(true))
        state.error = std::string("emulator internal error: ") + e.what();
    }
    per_worker[wi] = ctx.counters;
  };
  if (workers <= 1) {
    work(0);
  } else {
    std::vector<std::thread> threads;
    for (unsigned i = 0; i < workers; ++i)
      threads.emplace_back(work, i);
    for (auto &t : threads)
      t.join();
  }
  if (state.failed)
    throw device::DeviceError(device::ErrorKind::LaunchFailed, state.error);
  progress.finish();
  LaunchCounters total_counters;
  for (const auto &c : per_worker)
    total_counters.add(c);
  return total_counters;
}

// ---- decode hooks of the control and synchronization instructions ----------------------------

void decode_branch(DecodeState &s) {
  Instr &in = s.in;
  in.op = Op::Bra;
  in.cls = InstrClass::Control;
  in.is_control = true;
  in.uni = s.mods.take("uni");
  expect_no_modifiers_left(s);
  in.target = label_target(s, s.ai.operands[0]);
}

void decode_call(DecodeState &s) {
  Instr &in = s.in;
  in.op = Op::Call;
  in.cls = InstrClass::Control;
  in.is_control = true;
  in.uni = s.mods.take("uni");
  expect_no_modifiers_left(s);
  decode_call_operands(s);
}

// ret, exit, trap, brkpt
void decode_return(DecodeState &s) {
  Instr &in = s.in;
  in.op = s.base == "ret" ? Op::Ret : (s.base == "exit" ? Op::Exit : Op::Trap);
  in.cls = InstrClass::Control;
  in.is_control = true;
  s.mods.take("uni");
  expect_no_modifiers_left(s);
  if (in.op == Op::Ret && decoding_kernel(s))
    in.op = Op::Exit;
}

// bar, barrier
void decode_barrier(DecodeState &s) {
  Instr &in = s.in;
  Modifiers &m = s.mods;
  in.cls = InstrClass::Sync;
  in.is_control = true;
  if (m.take("warp")) {
    m.take("sync");
    expect_no_modifiers_left(s);
    in.op = Op::BarWarpSync;
    in.src[0] = source_operand(s, 0, DType::U32);
    return;
  }
  m.take("aligned");
  if (m.take("sync") || (s.base == "bar" && m.list.empty()))
    in.op = Op::BarSync;
  else if (m.take("arrive"))
    in.op = Op::BarArrive;
  else
    decode_unsupported(s);
  m.take("aligned");
  m.take("cta");
  expect_no_modifiers_left(s);
  expect_operands(s, in.op == Op::BarArrive ? 2 : 1, 2);
  in.src[0] = source_operand(s, 0, DType::U32);
  if (s.ai.operands.size() == 2)
    in.src[1] = source_operand(s, 1, DType::U32);
}

// membar, fence
void decode_fence(DecodeState &s) {
  s.in.op = Op::Fence;
  s.in.cls = InstrClass::Sync;
  s.in.exec = exec_nop;
}

void decode_nanosleep(DecodeState &s) {
  s.in.op = Op::Nanosleep;
  s.in.cls = InstrClass::Memory;
  s.in.exec = exec_nop;
}

void decode_griddepcontrol(DecodeState &s) {
  s.in.op = Op::Fence;
  s.in.cls = InstrClass::Memory;
  s.in.exec = exec_nop;
}

} // namespace tcjit::emu
