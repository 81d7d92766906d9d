// Per-launch counters, in the spirit of Nsight Compute's metrics. All counts are dynamic (what the
// launch executed), per warp-instruction unless named otherwise.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "runtime/emu/program.h"

namespace tcjit::emu {

struct LaunchCounters {
  uint64_t ctas = 0;
  uint64_t threads = 0;
  uint64_t warp_instructions = 0;
  std::array<uint64_t, kInstrClassCount> warp_instructions_by_class{}; // index: InstrClass
  uint64_t thread_instructions = 0; // lanes that executed with a true guard

  uint64_t mma_instructions = 0;
  uint64_t mma_flops = 0; // 2*M*N*K per mma (integer mma: ops)
  // rows of mma.sp results the PTX ISA leaves undefined (invalid metadata for the row, or a
  // selector outside the shape's range: all 16 rows); their D elements hold a poison value
  uint64_t undefined_mma_sp_rows = 0;

  // shared memory (32 banks x 4 bytes). A request is one warp-level instruction; a wavefront is
  // one pass through the banks; conflicts = wavefronts beyond the ideal count of the request.
  uint64_t shared_load_requests = 0;
  uint64_t shared_store_requests = 0; // including cp.async writes into shared memory
  uint64_t ldmatrix_requests = 0;
  uint64_t shared_wavefronts = 0;
  uint64_t shared_ideal_wavefronts = 0;
  uint64_t shared_bank_conflicts = 0; // shared_wavefronts - shared_ideal_wavefronts

  // global memory (also const, and generic accesses that hit global memory)
  uint64_t global_load_requests = 0;
  uint64_t global_store_requests = 0;
  uint64_t global_atomic_requests = 0;
  uint64_t cp_async_requests = 0;   // cp.async: a global read request and a shared write
  uint64_t global_load_sectors = 0; // distinct 32-byte sectors per request, summed
  uint64_t global_store_sectors = 0;
  uint64_t global_bytes_read = 0; // useful bytes: the distinct bytes the lanes asked for
  uint64_t global_bytes_written = 0;

  uint64_t local_requests = 0;
  uint64_t barriers = 0; // bar.sync / barrier.sync executed, per warp

  double global_load_sectors_per_request() const;
  double global_store_sectors_per_request() const;
  double global_load_efficiency() const; // useful bytes / (sectors * 32), 0..1
  double global_store_efficiency() const;

  void add(const LaunchCounters &other);
};

// Human-readable multi-line summary.
std::string format_counters(const LaunchCounters &c);

} // namespace tcjit::emu
