// Address translation for one lane's access with the sanitizer's checks (bounds, alignment,
// use-after-free, read-only spaces, cp.async destinations not yet waited for).
#pragma once

#include <cstdint>

#include "runtime/emu/exec_context.h"
#include "runtime/emu/memory_layout.h"

namespace tcjit::emu {

constexpr uint64_t kLocalWindowBase = kLocalWindow;

enum class AccessKind : uint8_t { Read, Write, Atomic };

struct LaneAccess {
  uint8_t *host = nullptr;
  Space space = Space::Global; // the resolved space (never Generic)
  uint64_t address = 0;        // address within that space
};

// Faults (EmuFault) on any violation. `align` is the required alignment in bytes (a power of
// two).
LaneAccess translate_access(ExecContext &ctx, Warp &warp, const Instr &in, uint32_t lane,
                            Space space, uint64_t address, uint32_t size, uint32_t align,
                            AccessKind kind);

// Whether shared bytes [address, address + size) touch the destination of a cp.async in flight.
inline bool touches_async_pending(const Cta &cta, uint64_t address, uint32_t size) {
  bool pending = false;
  for (uint64_t wd = address / 4; wd <= (address + size - 1) / 4; ++wd)
    pending |= cta.async_pending[wd] != 0;
  return pending;
}

// racecheck: records this lane's access of shared bytes [address, address + size) and faults
// (EmuFault) when it conflicts with another thread's access of the same barrier interval (a write
// and a read or two writes, with no bar.sync between them; lanes of one warp may also be
// ordered by bar.warp.sync). Atomics are not checked.
void check_shared_race(ExecContext &ctx, Warp &warp, const Instr &in, uint32_t lane,
                       uint64_t address, uint32_t size, AccessKind kind);

// translate_access with inline fast paths for the common, valid cases (shared memory not
// touching a cp.async in flight, the last global allocation used, kernel parameters); anything
// else, and every error, goes through translate_access.
inline LaneAccess translate_access_fast(ExecContext &ctx, Warp &warp, const Instr &in,
                                        uint32_t lane, Space space, uint64_t address, uint32_t size,
                                        uint32_t align, AccessKind kind) {
  if ((address & (align - 1)) == 0) {
    const Cta &cta = *ctx.cta;
    if (space == Space::Shared) {
      if (address < cta.shared.size() && address + size <= cta.shared.size() &&
          (cta.async_pending_words == 0 || !touches_async_pending(cta, address, size))) {
        if (kind != AccessKind::Atomic && cta.racecheck)
          check_shared_race(ctx, warp, in, lane, address, size, kind);
        return {const_cast<uint8_t *>(cta.shared.data()) + address, Space::Shared, address};
      }
    } else if (space == Space::Global || (space == Space::Generic && address < kLocalWindowBase)) {
      const Allocation *a = ctx.last_allocation;
      if (a && address - a->base < a->size && size <= a->size - (address - a->base))
        return {a->data.get() + (address - a->base), Space::Global, address};
    } else if (space == Space::ParamKernel && kind == AccessKind::Read) {
      if (address + size <= ctx.launch->param_bytes)
        return {const_cast<uint8_t *>(ctx.launch->params) + address, Space::ParamKernel, address};
    }
  }
  return translate_access(ctx, warp, in, lane, space, address, size, align, kind);
}

// Counters of one warp-level memory request: addresses[lane] for lanes in mask, each `size`
// bytes. Shared requests count bank-conflict wavefronts (phases of 128 bytes), global requests
// count 32-byte sectors.
void count_shared_request(ExecContext &ctx, const uint64_t *addresses, uint32_t mask, uint32_t size,
                          bool is_store);
void count_global_request(ExecContext &ctx, const uint64_t *addresses, uint32_t mask, uint32_t size,
                          bool is_store);
// ldmatrix: `matrices` phases of 8 row addresses (16 bytes each) from lanes 8j..8j+7.
void count_ldmatrix_request(ExecContext &ctx, const uint64_t *addresses, uint32_t matrices);

} // namespace tcjit::emu
