// Bookkeeping of cp.async copies in flight: they are done at issue, and their shared-memory
// destinations stay pending (any access faults) until the issuing thread waits for their group (or
// exits).
#pragma once

#include <cstdint>

#include "runtime/emu/exec_context.h"

namespace tcjit::emu {

// Completes (ends the pending state of) the copies of the lanes in `lanes` whose group is at least
// `keep_groups` older than the lane's newest committed group (cp.async.wait_group keep_groups);
// all=true completes every copy.
void complete_async_copies(ExecContext &ctx, Warp &warp, uint32_t lanes, uint32_t keep_groups,
                           bool all);

// The copies of `lane` still pending (per-lane and warp-wide records), for spin detection.
uint32_t pending_async_copies(const Warp &warp, uint32_t lane);

} // namespace tcjit::emu
