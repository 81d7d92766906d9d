// The replay measurer: results read from a JSON Lines file in the format `tcjit db export` writes
// answer measurements, so strategies can be tested deterministically and a tuning run can be
// simulated from another machine's data. A config the file has no ok result for is reported
// failed ("not in the replay data"); a replayed result keeps its provenance.
#pragma once

#include "tuner/measure.h"

#include <filesystem>
#include <memory>

namespace tcjit::tuner {

// Throws std::runtime_error ("replay file PATH line N: ..." and how to fix) when the file cannot
// be read or a line is not a valid record.
std::unique_ptr<Measurer> make_replay_measurer(const std::filesystem::path &jsonl);

} // namespace tcjit::tuner
