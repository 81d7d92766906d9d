// Tuning a size range (`gemm m=1..8192 n=4096 k=4096`): representative sizes are tuned one by one
// (powers of two inside each range, and its ends), and a dispatch table maps size buckets to the
// winner of the size each bucket is centred on. Neighbouring buckets with the same winner are
// merged, so one compiled kernel serves every bucket where it wins. The runtime looks the bucket
// of a launch's sizes up in the table (tcjit::Runtime::prepare on a ranged spec).
#pragma once

#include "compiler/codegen/plan/tile_config.h"
#include "kernels_db/kernels_db.h"
#include "tuner/tune.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tcjit::tuner {

// The concrete problems to tune for `ranged` (a GEMM whose sizes may be ranges): every
// combination of each ranged dimension's representative sizes (at most 64 in all: fewer points
// per dimension when several are ranged). Empty, with `error` set, when a size is `?` (give a
// range) or a combination is not a valid spec.
std::vector<TuneTask> representative_tasks(const TuneTask &ranged, std::string &error);

// One bucket: for each ranged dimension ("m", "n", "k", "batch"), the closed interval of sizes it
// covers, and the config that runs them.
struct SizeBucket {
  std::map<std::string, std::pair<int64_t, int64_t>> ranges;
  codegen::TileConfig config;
  Measurement measurement; // of the representative size
};

// The buckets of `ranged` given the tuned representative `sizes` and their `results` (same
// order; a size without a best config is left to its neighbours). Together they cover every size
// of the ranges exactly once.
std::vector<SizeBucket> dispatch_buckets(const TuneTask &ranged, const std::vector<TuneTask> &sizes,
                                         const std::vector<TuneResult> &results);

// Stores the dispatch table of `ranged` in `db` (replacing an older one of this tuner version);
// returns its number of buckets (0: nothing tuned, nothing stored).
int store_dispatch_table(const TuneTask &ranged, const std::vector<TuneTask> &sizes,
                         const std::vector<TuneResult> &results, kernels_db::KernelsDb &db);

} // namespace tcjit::tuner
