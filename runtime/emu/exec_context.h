// Execution state of the emulator: warps (registers laid out register-major, 32 lanes each), CTAs
// and the per-worker context, plus the inline helpers every instruction family uses.
#pragma once

#include <array>
#include <atomic>
#include <bit>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/device/device.h"
#include "runtime/emu/counters.h"
#include "runtime/emu/global_memory.h"
#include "runtime/emu/program.h"

namespace tcjit::emu {

// A cp.async of one thread: done at issue, its destination pending until its group is waited for.
struct AsyncCopy {
  uint32_t group = 0; // the commit group it belongs to (per-lane numbering)
  uint32_t shared_addr = 0;
  uint32_t size = 0;
};

enum class WarpState : uint8_t { Running, AtBarrier, Exited };

struct Warp {
  uint32_t index = 0;
  uint64_t *regs = nullptr; // regs[reg * 32 + lane]
  uint32_t exists = 0;      // lanes that are threads of the block
  uint32_t live = 0;        // lanes that have not exited
  bool diverged = false;    // false: all live lanes are at `pc`
  uint32_t pc = 0;
  std::array<uint32_t, 32> lane_pc{}; // ~0u for lanes that exited or do not exist
  // Diverged warps run the group of lanes at the lowest PC; it is cached until a control
  // instruction runs or the group reaches the next group's PC (then the groups merge).
  bool group_valid = false;
  uint32_t group_pc = 0, group_mask = 0, next_group_pc = 0;
  // Diverged lanes parked at a collective (bar.sync, shfl.sync, mma ...) until the lanes it needs
  // arrive there too (independent thread scheduling: other groups run meanwhile).
  uint32_t parked = 0;
  bool released = false; // every lane was parked: the next group executes its collective as is
  WarpState state = WarpState::Running;
  uint32_t barrier_id = 0;
  uint32_t barrier_pc = 0;                          // the bar.sync it waits at
  uint32_t carry = 0;                               // CC.CF per lane (add.cc / addc)
  uint32_t sync_epoch = 0;                          // bar.warp.sync executed (racecheck)
  std::array<std::vector<uint32_t>, 32> call_stack; // pcs of the calls in progress
  // cp.async copies in flight, per lane in issue order (their groups never decrease, so the
  // copies a wait completes are a prefix): copies[head..] are pending.
  struct AsyncQueue {
    std::vector<AsyncCopy> copies;
    size_t head = 0;
  };
  std::array<AsyncQueue, 32> async_copies;
  uint32_t async_lanes = 0; // lanes whose async_copies may hold pending copies
  // cp.async instructions of the whole warp at once (every lane copying, their commit counts
  // equal: the fast path of exec_cp_async): one record for 32 copies, in issue order (groups never
  // decrease), `lanes` the lanes whose copy is still pending; copies[head..] may be pending.
  struct WarpAsyncCopy {
    uint32_t group = 0, size = 0, lanes = 0;
    std::array<uint32_t, 32> shared_addr{};
  };
  struct WarpAsyncQueue {
    std::vector<WarpAsyncCopy> copies;
    size_t head = 0;
  } warp_async_copies;
  std::array<uint32_t, 32> async_committed{}; // commit groups closed per lane
};

struct Barrier {
  uint32_t arrived = 0;  // threads
  uint32_t expected = 0; // threads; 0: all live threads of the CTA
  uint32_t waiting_warps = 0;
};

// racecheck (like compute-sanitizer's): per 4-byte shared word, the last write and the last read
// of the current barrier interval. A read conflicts with an earlier write, and a write with an
// earlier read, of the same bytes in the same interval by another thread, unless both are in one
// warp with a bar.warp.sync between them. Two writes are not reported (threads storing the same
// value is a common, benign pattern).
struct ShadowAccess {
  uint32_t epoch = 0;      // Cta::race_epoch at the access (0: none)
  uint32_t thread = 0;     // linear thread index in the block
  uint32_t warp_epoch = 0; // the thread's warp's bar.warp.sync count at the access
  uint32_t pc = 0;         // the instruction
  uint32_t bytes = 0;      // which of the word's 4 bytes it touched (bits 0..3)
};
struct ShadowWord {
  ShadowAccess write, read;
};

struct Cta {
  device::Dim3 id;
  uint32_t threads = 0;
  std::vector<uint8_t> shared;
  std::vector<uint8_t> local;         // threads * local_bytes
  std::vector<uint8_t> param_scratch; // threads * param_scratch_bytes
  std::vector<uint64_t> regs;
  std::vector<Warp> warps;
  std::array<Barrier, 16> barriers;
  uint32_t live_threads = 0;
  std::vector<uint8_t> async_pending; // per 4-byte shared word: copies not yet waited for
  uint32_t async_pending_words = 0;
  // per 4-byte shared word; kept from block to block of a worker (entries of earlier blocks have
  // older epochs, so they never conflict) and zeroed only when it grows or the epoch wraps
  std::vector<ShadowWord> race_shadow;
  bool racecheck = false;        // this block's accesses are checked (RaceCheck, racecheck_mode.h)
  uint32_t race_epoch = 1;       // barrier intervals so far (+1 at each bar.sync release and block)
  uint64_t barrier_releases = 0; // spin detection: a release is progress
};

struct LaunchState {
  const Program *program = nullptr;
  const Function *kernel = nullptr;
  device::LaunchConfig config;
  const uint8_t *params = nullptr;
  uint32_t param_bytes = 0;
  GlobalMemory *memory = nullptr;
  uint32_t sm_count = 1;
  // wall-clock limit of the launch (LaunchRequest::timeout_seconds); has_deadline false: none
  bool has_deadline = false;
  double timeout_seconds = 0;
  std::chrono::steady_clock::time_point deadline;
  std::atomic<bool> failed{false};
  std::mutex error_mutex;
  std::string error;
  // Spin detection (executor.cpp, "spin without progress"): per worker thread, the
  // memory-writing instructions it started and finished, and how many times in a row the block it
  // runs was found spinning (kWorkerIdle: it has no block left to run).
  struct alignas(64) WorkerProgress {
    std::atomic<uint64_t> writes_started{0};
    std::atomic<uint64_t> writes_finished{0};
    std::atomic<uint64_t> spin_checks{0};
  };
  static constexpr uint64_t kWorkerIdle = ~uint64_t{0};
  std::unique_ptr<WorkerProgress[]> progress;
  unsigned workers = 1;
};

// Thrown by instruction implementations on a sanitizer error; caught by the executor.
struct EmuFault {
  std::string message;
};

struct ExecContext {
  LaunchState *launch = nullptr;
  const Program *program = nullptr;
  Cta *cta = nullptr;
  LaunchCounters counters;
  const Allocation *last_allocation = nullptr; // cache of GlobalMemory lookups
  uint64_t clock = 0;
  uint32_t worker = 0;
};

// "kernel 'k' at file.ptx:57 (ld.global.f32), block (0,0,0) thread (5,0,0): <what>"; lane < 0
// names the whole warp.
[[noreturn]] void fault(const ExecContext &ctx, const Warp &warp, const Instr &in, int lane,
                        const std::string &what);
std::string hex_address(uint64_t v);

uint64_t read_dynamic_special(const ExecContext &ctx, DynamicSpecial s);

inline uint64_t read_operand(const ExecContext &ctx, const Warp &w, const Operand &o,
                             uint32_t lane) {
  if (o.kind == OperandKind::Reg)
    return w.regs[o.reg * 32 + lane];
  if (o.kind == OperandKind::Imm)
    return o.imm;
  return read_dynamic_special(ctx, o.special);
}

// An operand's per-lane values as an array of 32 (immediates and specials are broadcast into
// the caller's LaneScratch), so lane loops need no per-lane branch on the operand kind and index
// every operand the same way.
struct LaneScratch {
  uint64_t v[32];
};
struct LaneValues {
  const uint64_t *p;
  uint64_t operator[](uint32_t lane) const { return p[lane]; }
};
inline constexpr uint64_t kZeroLanes[32] = {}; // the values of an absent operand
inline LaneValues lane_values(const ExecContext &ctx, const Warp &w, const Operand &o,
                              LaneScratch &scratch) {
  if (o.kind == OperandKind::Reg)
    return {w.regs + size_t{o.reg} * 32};
  if (o.kind == OperandKind::None)
    return {kZeroLanes};
  const uint64_t v = o.kind == OperandKind::Imm ? o.imm : read_dynamic_special(ctx, o.special);
  typedef uint64_t Lanes4 __attribute__((vector_size(32)));
  const Lanes4 four = {v, v, v, v};
  for (uint32_t i = 0; i < 32; i += 4)
    std::memcpy(scratch.v + i, &four, sizeof four);
  return {scratch.v};
}

inline bool read_pred(const ExecContext &ctx, const Warp &w, const Operand &o, uint32_t lane) {
  return (read_operand(ctx, w, o, lane) != 0) != o.negated;
}

inline void write_reg(Warp &w, uint32_t reg, uint32_t lane, uint64_t v) {
  w.regs[reg * 32 + lane] = v;
}

inline uint64_t mask_to_bytes(uint64_t v, uint32_t bytes) {
  return bytes >= 8 ? v : (v & ((1ull << (bytes * 8)) - 1));
}

inline uint32_t vector_reg(const ExecContext &ctx, const Operand &o, uint32_t i) {
  return ctx.program->vector_regs[o.reg + i];
}

inline float f32_of(uint64_t bits) {
  return std::bit_cast<float>(static_cast<uint32_t>(bits));
}
inline double f64_of(uint64_t bits) {
  return std::bit_cast<double>(bits);
}
inline uint64_t bits_of(float f) {
  return std::bit_cast<uint32_t>(f);
}
inline uint64_t bits_of(double d) {
  return std::bit_cast<uint64_t>(d);
}

inline uint32_t thread_index(const Warp &w, uint32_t lane) {
  return w.index * 32 + lane;
}

template <typename F> inline void for_each_lane(uint32_t mask, F f) {
  if (mask == ~0u) { // converged full warp: a plain loop
    for (uint32_t lane = 0; lane < 32; ++lane)
      f(lane);
    return;
  }
  while (mask) {
    uint32_t lane = static_cast<uint32_t>(std::countr_zero(mask));
    mask &= mask - 1;
    f(lane);
  }
}

// d[lane] = f(lane) for the lanes of mask, where f reads its operands at index `lane` only. A full
// warp's values are computed into a local array and then stored at once: the loop does not alias
// d, so the compiler can vectorize it (d may be one of the operands: every lane reads its own
// values before any is written, as in a per-lane loop).
template <typename F> inline void store_lanes(uint32_t mask, uint64_t *d, F f) {
  if (mask == ~0u) {
    uint64_t out[32];
    for (uint32_t lane = 0; lane < 32; ++lane)
      out[lane] = f(lane);
    std::memcpy(d, out, sizeof out);
    return;
  }
  while (mask) {
    uint32_t lane = static_cast<uint32_t>(std::countr_zero(mask));
    mask &= mask - 1;
    d[lane] = f(lane);
  }
}

} // namespace tcjit::emu
