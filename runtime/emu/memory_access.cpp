#include "runtime/emu/memory_access.h"

#include <algorithm>
#include <bit>

#include "runtime/emu/memory_layout.h"

namespace tcjit::emu {

namespace {

const char *kind_name(AccessKind k) {
  switch (k) {
  case AccessKind::Read: return "read";
  case AccessKind::Write: return "write";
  case AccessKind::Atomic: return "atomic";
  }
  return "?";
}

std::string access_words(AccessKind kind, Space space, uint32_t size, uint64_t address) {
  return std::string(space_name(space)) + " " + kind_name(kind) + " of " + std::to_string(size) +
         " bytes at " + hex_address(address);
}

} // namespace

void check_shared_race(ExecContext &ctx, Warp &warp, const Instr &in, uint32_t lane,
                       uint64_t address, uint32_t size, AccessKind kind) {
  Cta &cta = *ctx.cta;
  const Program &prog = *ctx.program;
  const uint32_t thread = thread_index(warp, lane);
  const uint32_t pc = static_cast<uint32_t>(&in - prog.code.data());
  // Another thread's access of this interval that nothing orders before this one.
  uint32_t bytes = 0; // of the word at hand
  auto conflicts = [&](const ShadowAccess &a) {
    return a.epoch == cta.race_epoch && a.thread != thread && (a.bytes & bytes) != 0 &&
           (a.thread / 32 != warp.index || a.warp_epoch == warp.sync_epoch);
  };
  auto report = [&](const ShadowAccess &other, const char *other_kind) {
    const device::Dim3 &block = ctx.launch->config.block;
    const uint32_t t = other.thread;
    std::string where = prog.source_name + ":" + std::to_string(prog.code[other.pc].line);
    if (other.pc < prog.opcode_text.size())
      where += " (" + prog.opcode_text[other.pc] + ")";
    fault(ctx, warp, in, static_cast<int>(lane),
          "shared-memory race (racecheck): this " +
              std::string(kind == AccessKind::Write ? "write" : "read") + " of " +
              std::to_string(size) + " bytes at " + hex_address(address) + " and the " +
              other_kind + " of the same word by thread (" + std::to_string(t % block.x) + "," +
              std::to_string(t / block.x % block.y) + "," +
              std::to_string(t / (block.x * block.y)) + ") at " + where +
              " have no bar.sync between them (nor a bar.warp.sync, within one warp); add the "
              "barrier, or give each thread its own words");
  };
  auto check_word = [&](uint64_t wd) {
    ShadowWord &s = cta.race_shadow[wd];
    const ShadowAccess now{cta.race_epoch, thread, warp.sync_epoch, pc, bytes};
    if (kind == AccessKind::Write) {
      if (conflicts(s.read))
        report(s.read, "read");
      s.write = now;
    } else {
      if (conflicts(s.write))
        report(s.write, "write");
      s.read = now;
    }
  };
  if (((address | size) & 3) == 0) { // whole words (every vector access and cp.async): all bytes
    bytes = 0xf;
    for (uint64_t wd = address / 4, last = (address + size) / 4; wd < last; ++wd)
      check_word(wd);
    return;
  }
  const uint64_t end = address + size;
  for (uint64_t wd = address / 4; wd <= (end - 1) / 4; ++wd) {
    const uint64_t lo = std::max(address, wd * 4), hi = std::min(end, wd * 4 + 4);
    bytes = ((1u << (hi - lo)) - 1) << (lo - wd * 4);
    check_word(wd);
  }
}

LaneAccess translate_access(ExecContext &ctx, Warp &warp, const Instr &in, uint32_t lane,
                            Space space, uint64_t address, uint32_t size, uint32_t align,
                            AccessKind kind) {
  LaneAccess r;
  const int ilane = static_cast<int>(lane);
  if (space == Space::Generic) {
    if (in_shared_window(address)) {
      space = Space::Shared;
      address -= kSharedWindow;
    } else if (in_local_window(address)) {
      space = Space::Local;
      address -= kLocalWindow;
    } else {
      space = Space::Global;
    }
  }
  r.space = space;
  r.address = address;
  if (align > 1 && address % align != 0) {
    fault(ctx, warp, in, ilane,
          "misaligned " + access_words(kind, space, size, address) +
              ": the address must be a "
              "multiple of " +
              std::to_string(align));
  }
  Cta &cta = *ctx.cta;
  switch (space) {
  case Space::Global:
  case Space::Const: {
    const Allocation *a = ctx.last_allocation;
    if (!a || !a->contains(address, size)) {
      a = ctx.launch->memory->find(address);
      if (!a || a->freed || !a->contains(address, size)) {
        std::string what = (a && a->freed) ? "use after free: " : "out-of-bounds ";
        fault(ctx, warp, in, ilane,
              what + access_words(kind, space, size, address) + " (" +
                  describe_nearest_allocation(*ctx.launch->memory, address) + ")");
      }
      ctx.last_allocation = a;
    }
    if (space == Space::Const && kind != AccessKind::Read)
      fault(ctx, warp, in, ilane, "write to the read-only .const space");
    r.host = a->data.get() + (address - a->base);
    return r;
  }
  case Space::Shared: {
    if (address + size > cta.shared.size() || address >= cta.shared.size()) {
      fault(ctx, warp, in, ilane,
            "out-of-bounds " + access_words(kind, space, size, address) + ": the block has " +
                std::to_string(cta.shared.size()) + " bytes of shared memory (static " +
                std::to_string(ctx.launch->kernel->shared.static_bytes) + ", dynamic " +
                std::to_string(ctx.launch->config.dynamic_shared_bytes) +
                "); pass more dynamic shared memory or fix the index");
    }
    if (cta.async_pending_words) {
      for (uint64_t wd = address / 4; wd <= (address + size - 1) / 4; ++wd) {
        if (cta.async_pending[wd]) {
          fault(ctx, warp, in, ilane,
                "shared " + std::string(kind_name(kind)) + " of " + std::to_string(size) +
                    " bytes at " + hex_address(address) +
                    " touches the destination of a cp.async that has not been waited for "
                    "(add cp.async.wait_group/wait_all, and bar.sync if another thread issued "
                    "the copy)");
        }
      }
    }
    if (kind != AccessKind::Atomic && cta.racecheck)
      check_shared_race(ctx, warp, in, lane, address, size, kind);
    r.host = cta.shared.data() + address;
    return r;
  }
  case Space::Local: {
    const uint32_t per_thread = ctx.program->local_bytes;
    if (address + size > per_thread || address >= per_thread)
      fault(ctx, warp, in, ilane,
            "out-of-bounds " + access_words(kind, space, size, address) + ": each thread has " +
                std::to_string(per_thread) + " bytes of local memory");
    r.host = cta.local.data() + size_t{thread_index(warp, lane)} * per_thread + address;
    return r;
  }
  case Space::ParamKernel: {
    if (kind != AccessKind::Read)
      fault(ctx, warp, in, ilane, "write to kernel parameter space");
    if (address + size > ctx.launch->param_bytes || address >= ctx.launch->param_bytes)
      fault(ctx, warp, in, ilane,
            "out-of-bounds " + access_words(kind, space, size, address) + ": the kernel has " +
                std::to_string(ctx.launch->param_bytes) + " bytes of parameters");
    r.host = const_cast<uint8_t *>(ctx.launch->params) + address;
    return r;
  }
  case Space::ParamThread: {
    const uint32_t per_thread = ctx.program->param_scratch_bytes;
    if (address + size > per_thread || address >= per_thread)
      fault(ctx, warp, in, ilane,
            "out-of-bounds " + access_words(kind, space, size, address) +
                " in function parameter space");
    r.host = cta.param_scratch.data() + size_t{thread_index(warp, lane)} * per_thread + address;
    return r;
  }
  case Space::Generic: break;
  }
  fault(ctx, warp, in, ilane, "internal error: unresolved state space");
}

namespace {

// Wavefronts of one phase: the most distinct 4-byte words that fall into one bank.
uint32_t phase_wavefronts(const uint64_t *addresses, uint32_t mask, uint32_t first_lane,
                          uint32_t lanes, uint32_t size) {
  uint64_t bank_words[32][32];
  uint32_t per_bank[32] = {};
  uint32_t worst = 0;
  for (uint32_t l = first_lane; l < first_lane + lanes; ++l) {
    if (!(mask >> l & 1))
      continue;
    for (uint64_t w = addresses[l] / 4; w <= (addresses[l] + size - 1) / 4; ++w) {
      const uint32_t b = static_cast<uint32_t>(w % 32);
      bool seen = false;
      for (uint32_t i = 0; i < per_bank[b]; ++i)
        seen |= bank_words[b][i] == w;
      if (seen || per_bank[b] == 32)
        continue;
      bank_words[b][per_bank[b]++] = w;
      worst = std::max(worst, per_bank[b]);
    }
  }
  return worst;
}

// phase_wavefronts when the words of the phase fall into distinct banks (the common
// conflict-free case of 8- and 16-byte accesses and ldmatrix): 1 (0 for no lanes); ~0u when two
// words share a bank (then phase_wavefronts decides: they may be one word, a broadcast).
inline uint32_t phase_wavefronts_distinct(const uint64_t *addresses, uint32_t mask,
                                          uint32_t first_lane, uint32_t lanes, uint32_t size) {
  // An aligned access of 8 or 16 bytes covers one aligned group of size/4 banks, so the banks are
  // distinct exactly when the groups (address / size mod 128 / size) are.
  uint32_t groups = 0;
  bool clash = false;
  const uint32_t shift = size == 16 ? 4 : 3, count_mask = 128 / size - 1;
  for (uint32_t l = first_lane; l < first_lane + lanes; ++l) {
    const uint32_t bit = ((mask >> l) & 1u) << ((addresses[l] >> shift) & count_mask);
    clash |= (groups & bit) != 0;
    groups |= bit;
  }
  return clash ? ~0u : (groups ? 1 : 0);
}

inline uint32_t phase_wavefronts_fast(const uint64_t *addresses, uint32_t mask, uint32_t first_lane,
                                      uint32_t lanes, uint32_t size) {
  if (size == 8 || size == 16) {
    const uint32_t w = phase_wavefronts_distinct(addresses, mask, first_lane, lanes, size);
    if (w != ~0u)
      return w;
  }
  return phase_wavefronts(addresses, mask, first_lane, lanes, size);
}

} // namespace

void count_shared_request(ExecContext &ctx, const uint64_t *addresses, uint32_t mask, uint32_t size,
                          bool is_store) {
  LaunchCounters &c = ctx.counters;
  (is_store ? c.shared_store_requests : c.shared_load_requests) += 1;
  if (size <= 4 && mask == ~0u) {
    // all words of the warp within 32 consecutive words (a broadcast, consecutive words, a few
    // words read by groups of lanes): each bank holds at most one of them, one wavefront
    uint64_t lo = addresses[0] >> 2, hi = lo;
    for (uint32_t l = 0; l < 32; ++l) {
      lo = std::min(lo, addresses[l] >> 2);
      hi = std::max(hi, addresses[l] >> 2);
    }
    if (hi - lo < 32) {
      c.shared_wavefronts += 1;
      c.shared_ideal_wavefronts += 1;
      return;
    }
  }
  if (size <= 4) {
    // fast path (accesses are aligned, so each touches one word): no two lanes hit different
    // words of one bank. Two passes without a loop-carried dependence.
    uint64_t bank_word[32];
    for_each_lane(mask,
                  [&](uint32_t l) { bank_word[(addresses[l] >> 2) & 31] = addresses[l] >> 2; });
    bool conflict = false;
    for_each_lane(mask, [&](uint32_t l) {
      conflict |= bank_word[(addresses[l] >> 2) & 31] != (addresses[l] >> 2);
    });
    if (!conflict) {
      c.shared_wavefronts += mask ? 1 : 0;
      c.shared_ideal_wavefronts += mask ? 1 : 0;
      return;
    }
  }
  const uint32_t lanes_per_phase = size <= 4 ? 32 : 128 / size;
  uint32_t wavefronts = 0, ideal = 0;
  for (uint32_t first = 0; first < 32; first += lanes_per_phase) {
    uint32_t w = phase_wavefronts_fast(addresses, mask, first, lanes_per_phase, size);
    wavefronts += w;
    ideal += w ? 1 : 0;
  }
  c.shared_wavefronts += wavefronts;
  c.shared_ideal_wavefronts += ideal;
  c.shared_bank_conflicts += wavefronts - ideal;
}

void count_ldmatrix_request(ExecContext &ctx, const uint64_t *addresses, uint32_t matrices) {
  LaunchCounters &c = ctx.counters;
  ++c.ldmatrix_requests;
  ++c.shared_load_requests;
  uint32_t wavefronts = 0;
  for (uint32_t j = 0; j < matrices; ++j)
    wavefronts += phase_wavefronts_fast(addresses, 0xffu << (8 * j), 8 * j, 8, 16);
  c.shared_wavefronts += wavefronts;
  c.shared_ideal_wavefronts += matrices;
  c.shared_bank_conflicts += wavefronts - matrices;
}

void count_global_request(ExecContext &ctx, const uint64_t *addresses, uint32_t mask, uint32_t size,
                          bool is_store) {
  if (mask == ~0u) {
    // Fast path: the lanes' ranges in ascending order without overlaps (tiles copied row by row):
    // every byte is useful, and a sector is new unless the previous lane's range ended in it.
    bool ordered = true;
    uint64_t n = 0;
    for (uint32_t l = 0; l < 32; ++l) {
      const uint64_t first = addresses[l] / 32, last = (addresses[l] + size - 1) / 32;
      const uint64_t prev_end = l ? addresses[l - 1] + size : 0;
      ordered &= l == 0 || addresses[l] >= prev_end;
      n += last - first + 1 - (l && (prev_end - 1) / 32 == first ? 1 : 0);
    }
    if (ordered) {
      LaunchCounters &c = ctx.counters;
      const uint64_t useful = uint64_t{32} * size;
      if (is_store) {
        ++c.global_store_requests;
        c.global_store_sectors += n;
        c.global_bytes_written += useful;
      } else {
        ++c.global_load_requests;
        c.global_load_sectors += n;
        c.global_bytes_read += useful;
      }
      return;
    }
  }
  uint64_t sectors[32 * 2];
  uint64_t starts[32];
  uint32_t n = 0, lanes = 0;
  for_each_lane(mask, [&](uint32_t l) {
    for (uint64_t s = addresses[l] / 32; s <= (addresses[l] + size - 1) / 32 && n < 64; ++s)
      sectors[n++] = s;
    starts[lanes++] = addresses[l];
  });
  if (!std::is_sorted(sectors, sectors + n))
    std::sort(sectors, sectors + n);
  n = static_cast<uint32_t>(std::unique(sectors, sectors + n) - sectors);
  // Useful bytes: the distinct bytes the lanes asked for (lanes reading the same address, a
  // broadcast, ask for those bytes once), so that efficiency never exceeds 1.
  if (!std::is_sorted(starts, starts + lanes))
    std::sort(starts, starts + lanes);
  uint64_t useful = 0, covered_to = 0;
  for (uint32_t i = 0; i < lanes; ++i) {
    const uint64_t begin = std::max(starts[i], covered_to), end = starts[i] + size;
    if (end > begin)
      useful += end - begin;
    covered_to = std::max(covered_to, end);
  }
  LaunchCounters &c = ctx.counters;
  if (is_store) {
    ++c.global_store_requests;
    c.global_store_sectors += n;
    c.global_bytes_written += useful;
  } else {
    ++c.global_load_requests;
    c.global_load_sectors += n;
    c.global_bytes_read += useful;
  }
}

} // namespace tcjit::emu
