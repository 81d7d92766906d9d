#include "runtime/emu/global_memory.h"

#include <cstdio>

#include "runtime/device/device.h"
#include "runtime/emu/memory_layout.h"

namespace tcjit::emu {

namespace {
std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}
} // namespace

uint64_t GlobalMemory::allocate(uint64_t size, uint32_t align) {
  if (next_ == 0)
    next_ = kGlobalBase;
  if (size > (1ull << 40))
    throw device::DeviceError(device::ErrorKind::OutOfMemory,
                              "emulator: cannot allocate " + std::to_string(size) +
                                  " bytes (limit 1 TiB); allocate less");
  uint64_t a = std::max<uint64_t>(align, 256);
  uint64_t base = (next_ + a - 1) / a * a;
  Allocation al;
  al.base = base;
  al.size = size;
  al.data.reset(static_cast<uint8_t *>(std::calloc(size ? size : 1, 1)));
  if (!al.data)
    throw device::DeviceError(device::ErrorKind::OutOfMemory,
                              "emulator: host memory exhausted allocating " + std::to_string(size) +
                                  " bytes of device memory");
  allocations_[base] = std::move(al);
  next_ = base + size + kGlobalGuardBytes;
  live_bytes_ += size;
  return base;
}

void GlobalMemory::free(uint64_t base) {
  auto it = allocations_.find(base);
  if (it == allocations_.end() || it->second.freed) {
    throw device::DeviceError(device::ErrorKind::InvalidArgument,
                              "emulator: free(" + hex(base) + "): " +
                                  (it == allocations_.end()
                                       ? std::string("not the start of an allocation")
                                       : std::string("already freed")) +
                                  "; pass a pointer returned by allocate() exactly once");
  }
  it->second.freed = true;
  it->second.data.reset();
  live_bytes_ -= it->second.size;
}

const Allocation *GlobalMemory::find(uint64_t addr) const {
  auto it = allocations_.upper_bound(addr);
  if (it == allocations_.begin())
    return nullptr;
  --it;
  const Allocation &a = it->second;
  if (addr - a.base < std::max<uint64_t>(a.size, 1))
    return &a;
  return nullptr;
}

const Allocation *GlobalMemory::nearest(uint64_t addr) const {
  auto it = allocations_.upper_bound(addr);
  const Allocation *best = nullptr;
  uint64_t best_dist = ~0ull;
  if (it != allocations_.end()) {
    best = &it->second;
    best_dist = it->second.base - addr;
  }
  if (it != allocations_.begin()) {
    --it;
    uint64_t end = it->second.base + it->second.size;
    uint64_t d = addr >= end ? addr - end : 0;
    if (d <= best_dist)
      best = &it->second;
  }
  return best;
}

uint8_t *GlobalMemory::host_range(uint64_t addr, uint64_t bytes, const char *what) {
  const Allocation *a = find(addr);
  if (!a || a->freed || !a->contains(addr, bytes)) {
    std::string why =
        !a ? "is not inside any allocation"
           : (a->freed ? "is inside a freed allocation" : "runs past the end of its allocation");
    throw device::DeviceError(device::ErrorKind::InvalidArgument,
                              std::string("emulator: ") + what + " of " + std::to_string(bytes) +
                                  " bytes at " + hex(addr) + " " + why + " (" +
                                  describe_nearest_allocation(*this, addr) + ")");
  }
  return a->data.get() + (addr - a->base);
}

std::string describe_nearest_allocation(const GlobalMemory &memory, uint64_t addr) {
  const Allocation *a = memory.nearest(addr);
  if (!a)
    return "no allocations exist";
  std::string s = std::string(a->freed ? "freed" : "nearest") + " allocation [" + hex(a->base) +
                  ", " + hex(a->base + a->size) + ") of " + std::to_string(a->size) + " bytes";
  if (addr >= a->base + a->size)
    s += ", address is " + std::to_string(addr - (a->base + a->size)) + " bytes past its end";
  else if (addr < a->base)
    s += ", address is " + std::to_string(a->base - addr) + " bytes before its start";
  else
    s += ", at offset " + std::to_string(addr - a->base);
  return s;
}

} // namespace tcjit::emu
