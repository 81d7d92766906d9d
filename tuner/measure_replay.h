// The replay measurer: results read from a JSON Lines file in the format `tcjit db export` writes
// answer measurements, so strategies can be tested deterministically and a tuning run can be
// simulated from another machine's data. Results are indexed by (problem key text, canonical
// config JSON, arch); problem and binary lines are skipped. measure() answers the ok result with
// the smallest median time (keeping its provenance, timing and tflops; message "replayed from
// FILE"); else a failed or illegal result with its status and message; else, for an ok result
// without timing (a verification), failed; a config the file has nothing for is failed with
// "not in the replay data (FILE)". needs_build() is false.
#pragma once

#include "tuner/measure.h"

#include <filesystem>
#include <memory>

namespace tcjit::tuner {

// Throws std::runtime_error ("replay file PATH line N: ..." and how to fix) when the file cannot
// be read or a line is not a valid record.
std::unique_ptr<Measurer> make_replay_measurer(const std::filesystem::path &jsonl);

} // namespace tcjit::tuner
