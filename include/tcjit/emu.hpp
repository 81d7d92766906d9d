// One PTX kernel run on tcjit's CPU emulator of the tensor-core GPUs (with its sanitizer), as
// `tcjit emu run` does (docs/emulator.md): buffers come from .npy files and are written back after
// the launch; the launch's counters come back.
#pragma once

#include "tcjit/tools.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace tcjit {

struct EmuDim3 {
  uint32_t x = 1, y = 1, z = 1;
};

// One kernel parameter: a .npy file (its data copied to the emulator, passed as an 8-byte pointer
// and written back into the file after the launch), else the parameter's bytes.
struct EmuArgument {
  std::string npy_path; // "" for a scalar
  std::vector<std::byte> scalar;
};

struct EmuRunRequest {
  std::string ptx;
  std::string ptx_name; // the file it came from, for messages
  std::string kernel;   // the .entry
  EmuDim3 grid, block;
  uint32_t dynamic_shared_bytes = 0;
  unsigned threads = 0; // host threads; 0 = all cores
  // Warp instructions one block may execute before the launch fails (an infinite loop).
  uint64_t max_instructions = 1'000'000'000;
  double timeout_seconds = 600; // per launch; 0 = no limit
  // The shared-memory race checker watches every block, not the default sample (the first block,
  // every 16th, the grid's corners); TCJIT_EMU_RACECHECK=all does the same.
  bool racecheck_all = false;
  std::vector<EmuArgument> args;
  // Called now and then during the launch ("blocks" done of total; once with done == total at
  // its end), from the launch's threads one call at a time; may be empty.
  std::function<void(const Progress &)> on_progress;
};

// What the launch did (docs/emulator.md, "Counters").
struct EmuCounters {
  uint64_t ctas = 0, threads = 0;
  uint64_t warp_instructions = 0;
  std::vector<std::pair<std::string, uint64_t>> warp_instructions_by_class; // by class name
  uint64_t thread_instructions = 0;
  uint64_t mma_instructions = 0, mma_flops = 0;
  uint64_t undefined_mma_sp_rows = 0; // mma.sp rows with undefined metadata: D holds poison
  uint64_t shared_load_requests = 0, shared_store_requests = 0, ldmatrix_requests = 0;
  uint64_t shared_wavefronts = 0, shared_bank_conflicts = 0;
  uint64_t global_load_requests = 0, global_store_requests = 0, global_atomic_requests = 0;
  uint64_t cp_async_requests = 0;
  uint64_t global_load_sectors = 0, global_store_sectors = 0;
  double global_load_sectors_per_request = 0, global_store_sectors_per_request = 0;
  double global_load_efficiency = 0, global_store_efficiency = 0; // useful bytes / sector bytes
  uint64_t global_bytes_read = 0, global_bytes_written = 0;
  uint64_t local_requests = 0;
  uint64_t barriers = 0;
  std::string text; // the counters as a table (what `tcjit emu run --stats` prints)
};

// The largest PTX file read_ptx_file reads: far above any real kernel (generated GEMMs are
// 10-200 KiB), far below what would take the lexer minutes and gigabytes.
inline constexpr uint64_t kMaxPtxFileBytes = uint64_t{64} << 20;

// The text of a PTX file. Throws Error(invalid_argument) naming the path when it is missing or
// unreadable, "is not a regular file" (a FIFO, a device such as /dev/zero, a socket, a directory:
// refused by stat() before it is opened) or over kMaxPtxFileBytes (refused before it is read).
std::string read_ptx_file(const std::string &path);

// Loads the PTX, binds the arguments, launches the kernel and writes the buffers back. Throws
// Error(invalid_argument) for a kernel that takes other parameters, an unreadable or malformed
// .npy file and a bad launch; Error(device) when the PTX does not load or the kernel faults (the
// sanitizer's report), runs past max_instructions or the timeout.
EmuCounters emu_run(const EmuRunRequest &request);

} // namespace tcjit
