// Runs one kernel launch: CTAs spread over host threads, warps of a CTA scheduled cooperatively
// on one host thread, lanes of a warp in lockstep with per-lane PCs for divergence.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

#include "runtime/device/device.h"
#include "runtime/emu/counters.h"
#include "runtime/emu/global_memory.h"
#include "runtime/emu/program.h"
#include "runtime/emu/racecheck_mode.h"

namespace tcjit::emu {

struct LaunchRequest {
  const Program *program = nullptr;
  uint32_t function = 0; // index into program->functions; must be an entry
  device::LaunchConfig config;
  std::span<const std::byte> params;
  GlobalMemory *memory = nullptr;
  unsigned worker_threads = 0; // 0: one per hardware thread
  uint32_t sm_count = 1;       // value of %nsmid; %smid = CTA index % sm_count
  uint32_t max_shared_bytes = 227 * 1024;
  // A CTA that executes more warp instructions than this fails the launch (an infinite loop, or a
  // spin-wait that cannot finish on the emulator). 0: 2^34.
  uint64_t max_warp_instructions_per_cta = 0;
  // A launch still running after this many seconds of wall-clock time fails (checked between
  // scheduling rounds of a block). 0: no limit.
  double timeout_seconds = 0;
  // The blocks whose shared-memory accesses the race checker watches (racecheck_mode.h).
  RaceCheck racecheck = RaceCheck::Default;
  // Called with (blocks finished, blocks in the grid) every ~0.2 s of a launch and once at its
  // end, one call at a time from the workers; may be empty.
  std::function<void(uint64_t done, uint64_t total)> on_progress;
};

// Throws DeviceError(LaunchFailed) with the sanitizer's message when the kernel faults, and
// DeviceError(InvalidArgument) for a bad configuration.
LaunchCounters execute_launch(const LaunchRequest &request);

} // namespace tcjit::emu
