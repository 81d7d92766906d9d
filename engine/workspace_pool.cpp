#include "engine/workspace_pool.h"

#include <algorithm>

namespace tcjit::engine {

device::DevicePtr WorkspacePool::acquire(device::Device &dev, void *stream, uint64_t bytes) {
  Buffer &current = by_stream_[stream];
  if (current.ptr != 0 && current.bytes >= bytes)
    return current.ptr;
  const uint64_t grown = std::max(bytes, current.bytes + current.bytes / 2);
  const uint64_t size = (grown + 255) / 256 * 256;
  const device::DevicePtr ptr = dev.allocate(size);
  if (current.ptr != 0) {
    if (dev.info().is_emulator)
      dev.free(current.ptr); // its launches have finished: they ran before they returned
    else
      retired_.push_back(current);
  }
  current = {ptr, size};
  return ptr;
}

void WorkspacePool::release(device::Device &dev) noexcept {
  auto free_one = [&](const Buffer &buffer) {
    if (buffer.ptr == 0)
      return;
    try {
      dev.free(buffer.ptr);
    } catch (const device::DeviceError &) {
      // The device frees what is left when it closes.
    }
  };
  for (const auto &[stream, buffer] : by_stream_)
    free_one(buffer);
  for (const Buffer &buffer : retired_)
    free_one(buffer);
  by_stream_.clear();
  retired_.clear();
}

} // namespace tcjit::engine
