#include "runtime/emu/racecheck_mode.h"

#include <cstdlib>

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
  return env ? parse_racecheck(env).value_or(RaceCheck::Sampled) : RaceCheck::Sampled;
}

} // namespace tcjit::emu
