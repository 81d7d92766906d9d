// Which blocks of a launch the shared-memory race checker (racecheck) watches. Every other check
// of the sanitizer (bounds, alignment, cp.async destinations in flight, barriers, collectives)
// runs in every block whatever the mode.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "runtime/device/device.h"

namespace tcjit::emu {

enum class RaceCheck : uint8_t {
  Default, // TCJIT_EMU_RACECHECK when set (all, sampled), else Sampled
  Sampled, // a fixed sample of blocks (racecheck_samples_block): a race that every block of a
           // kernel has, or one in the grid's first block or its corners, is found
  All,     // every block (tests that plant races; `tcjit emu run --racecheck all`)
};

// "all" -> All, "sampled" -> Sampled; nullopt for other text.
std::optional<RaceCheck> parse_racecheck(std::string_view text);
// The mode of `requested`: Default reads TCJIT_EMU_RACECHECK (unset or empty: Sampled; a value
// other than all or sampled throws std::invalid_argument naming it).
RaceCheck resolve_racecheck(RaceCheck requested);

// The sample: the first block, every 16th block (linear index), and the blocks at the corners of
// the grid's x-y plane (the partial tiles at the edges of M and N) in the last z slice.
inline bool racecheck_samples_block(const device::Dim3 &grid, uint64_t linear) {
  if (linear % 16 == 0)
    return true;
  const uint64_t x = linear % grid.x, y = linear / grid.x % grid.y, z = linear / grid.x / grid.y;
  const bool x_edge = x == 0 || x + 1 == grid.x, y_edge = y == 0 || y + 1 == grid.y;
  return x_edge && y_edge && z + 1 == grid.z;
}

} // namespace tcjit::emu
