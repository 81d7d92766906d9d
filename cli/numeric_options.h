// Checks of numeric options that more than one command takes: --seed (never negative: CLI11
// would wrap -1 to 2^64-1) and --timeout (a wall-clock limit per emulator launch, the same default
// and meaning for `tcjit emu run`, `run` and `tune`).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace tcjit::cli {

// The default of every --timeout: ten minutes per launch (docs/emulator.md, "Limits").
inline constexpr double kDefaultLaunchTimeoutSeconds = 600;

// --seed N: a non-negative integer (0 to 2^64-1); "-1" is refused before it is converted.
inline CLI::Validator non_negative_seed() {
  return CLI::Validator(
      [](std::string &text) {
        const size_t first = text.find_first_not_of(" \t");
        if (first != std::string::npos && text[first] == '-')
          return "the seed must be a non-negative integer (0 to 18446744073709551615), got '" +
                 text + "'";
        return std::string();
      },
      "");
}

// --timeout SECONDS: 0 (no limit) to 1e9.
inline CLI::Validator launch_timeout_seconds() {
  return CLI::Validator(
      [](std::string &text) {
        size_t used = 0;
        double seconds = -1;
        try {
          seconds = std::stod(text, &used);
        } catch (const std::exception &) {
          used = 0;
        }
        if (used != text.size() || !(seconds >= 0) || seconds > 1e9)
          return "--timeout must be between 0 (no limit) and 1e9 seconds, got '" + text + "'";
        return std::string();
      },
      "SECONDS");
}

} // namespace tcjit::cli
