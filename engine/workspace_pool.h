// The workspaces of a runtime's launches when the caller gives none (split-K's slices, channel
// padding's copies: engine::kernel_workspace_bytes): one device buffer per stream, grown when a
// launch needs more and reused by every later launch on that stream, so that a launch allocates
// nothing once its stream's buffer is large enough.
//
// Launches on one stream run in order, so they can share its buffer; launches on two streams run
// at once, so each stream has its own. A buffer a larger one replaced may still be in use by
// launches enqueued before (on a GPU a launch returns before it runs): it is kept, retired, until
// release() (the runtime's destruction) — on a device whose launches finish before they return
// (the emulator) it is freed at once. Growth allocates (never on the launch path once warm): by
// half the buffer's size at least, so the retired buffers of a stream add up to less than twice
// its current one. Not thread-safe: the caller holds the device's lock.
#pragma once

#include "runtime/device/device.h"

#include <cstdint>
#include <unordered_map>
#include <vector>

namespace tcjit::engine {

class WorkspacePool {
public:
  WorkspacePool() = default;
  WorkspacePool(const WorkspacePool &) = delete;
  WorkspacePool &operator=(const WorkspacePool &) = delete;

  // A workspace of at least `bytes` (> 0) for launches on `stream` (an opaque queue of `dev`;
  // null: the device's own), allocated on `dev` when the stream's buffer is smaller. Throws
  // device::DeviceError when the device cannot allocate.
  device::DevicePtr acquire(device::Device &dev, void *stream, uint64_t bytes);

  // Frees every buffer on `dev` (every launch that used them must have finished); device errors
  // are ignored (there is nothing to report them to at destruction).
  void release(device::Device &dev) noexcept;

private:
  struct Buffer {
    device::DevicePtr ptr = 0;
    uint64_t bytes = 0;
  };
  std::unordered_map<void *, Buffer> by_stream_;
  std::vector<Buffer> retired_;
};

} // namespace tcjit::engine
