#include "runtime/emu/racecheck_mode.h"

#include <cstdlib>
#include <stdexcept>
#include <string>

namespace tcjit::emu {

std::optional<RaceCheck> parse_racecheck(std::string_view text) {
  if (text == "all")
    return RaceCheck::All;
  if (text == "sampled")
    return RaceCheck::Sampled;
  return std::nullopt;
}

RaceCheck resolve_racecheck(RaceCheck requested) {
  if (requested != RaceCheck::Default)
    return requested;
  const char *env = std::getenv("TCJIT_EMU_RACECHECK");
  if (env == nullptr || *env == '\0')
    return RaceCheck::Sampled;
  if (std::optional<RaceCheck> mode = parse_racecheck(env))
    return *mode;
  throw std::invalid_argument("tcjit emulator: TCJIT_EMU_RACECHECK='" + std::string(env) +
                              "' is not a race-check mode: set it to all (every block) or "
                              "sampled (the default), or unset it");
}

} // namespace tcjit::emu
