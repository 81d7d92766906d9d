// The emulator's address map. Global allocations are generic addresses as they are; shared and
// local memory appear in the generic space through fixed windows (like the GPU's), so cvta is an
// addition or subtraction.
#pragma once

#include <cstdint>

#include "runtime/emu/program.h"

namespace tcjit::emu {

constexpr uint64_t kGlobalBase = 0x0000'0002'0000'0000ull;   // first device allocation
constexpr uint64_t kGlobalGuardBytes = 4096;                 // gap between two allocations
constexpr uint64_t kSharedWindow = 0x0000'7f00'0000'0000ull; // generic address of shared 0
constexpr uint64_t kLocalWindow = 0x0000'7e00'0000'0000ull;  // generic address of local 0
constexpr uint64_t kWindowBytes = 1ull << 32;

inline uint64_t to_generic_address(Space space, uint64_t address) {
  switch (space) {
  case Space::Shared: return kSharedWindow + address;
  case Space::Local: return kLocalWindow + address;
  case Space::Generic:
  case Space::Global:
  case Space::Const:
  case Space::ParamKernel:
  case Space::ParamThread: return address;
  }
  return address;
}

inline bool in_shared_window(uint64_t a) {
  return a >= kSharedWindow && a - kSharedWindow < kWindowBytes;
}
inline bool in_local_window(uint64_t a) {
  return a >= kLocalWindow && a - kLocalWindow < kWindowBytes;
}

} // namespace tcjit::emu
