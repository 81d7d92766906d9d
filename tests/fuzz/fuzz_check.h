// Shared by the fuzz targets (tests/fuzz/*_fuzzer.cpp): an invariant that fails stops the process
// with a message, which libFuzzer reports as a crash and the replay test (fuzz_replay_test.cpp)
// as a failed test.
#pragma once

#include <cstdlib>
#include <iostream>
#include <string_view>

namespace tcjit::fuzz {

inline void require(bool ok, std::string_view what, std::string_view detail = {}) {
  if (ok)
    return;
  std::cerr << "fuzz invariant broken: " << what << '\n' << detail << std::endl;
  std::abort();
}

} // namespace tcjit::fuzz
