// Device global memory of the emulator: allocations at fixed, never reused addresses with guard
// gaps between them, so out-of-bounds and use-after-free accesses are always recognisable.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>

namespace tcjit::emu {

// Releases calloc'd memory.
struct FreeBytes {
  void operator()(uint8_t *p) const noexcept { std::free(p); }
};

struct Allocation {
  uint64_t base = 0;
  uint64_t size = 0;
  // Zero-filled by calloc: fresh pages from the kernel are not written twice (a zero-fill, then
  // the upload); null once freed.
  std::unique_ptr<uint8_t[], FreeBytes> data;
  bool freed = false;
  bool contains(uint64_t addr, uint64_t bytes) const {
    return addr >= base && addr - base <= size && bytes <= size - (addr - base);
  }
};

class GlobalMemory {
public:
  uint64_t allocate(uint64_t size, uint32_t align);
  void free(uint64_t base); // throws DeviceError if base is not a live allocation
  // The allocation (live or freed) whose [base, base+size) holds addr, or nullptr.
  const Allocation *find(uint64_t addr) const;
  // The allocation nearest to addr (for error messages), or nullptr when there is none.
  const Allocation *nearest(uint64_t addr) const;
  // Host pointer of [addr, addr+bytes) for host copies; throws DeviceError naming `what`.
  uint8_t *host_range(uint64_t addr, uint64_t bytes, const char *what);
  uint64_t live_bytes() const { return live_bytes_; }

private:
  std::map<uint64_t, Allocation> allocations_;
  uint64_t next_ = 0;
  uint64_t live_bytes_ = 0;
};

std::string describe_nearest_allocation(const GlobalMemory &memory, uint64_t addr);

} // namespace tcjit::emu
