// Search strategies: which configs of a space to measure, in what order, from the costs seen so
// far. All are deterministic for a seed.
//   exhaustive  every config, in the space's order
//   random      a seeded random permutation
//   anneal      simulated annealing over neighbours (configs differing in one field)
//   model-topk  the whole space ranked by the cost model's static prediction, the best first
//               (the default: only the k best are measured, k = the budget)
#pragma once

#include "compiler/codegen/plan/tile_config.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace tcjit::tuner {

enum class StrategyKind { exhaustive, random, anneal, model_topk };

std::string_view to_string(StrategyKind);
std::optional<StrategyKind> parse_strategy(std::string_view); // "model-topk", ...

class Strategy {
public:
  virtual ~Strategy() = default;
  // The next config (an index into the space) to measure, or nullopt when the strategy has none
  // left. Never returns an index twice. May be called several times before the outcomes are
  // reported (candidates are built ahead in parallel).
  virtual std::optional<size_t> next() = 0;
  // The outcome of an index next() returned: its time in seconds; +infinity when it failed.
  virtual void report(size_t index, double seconds) = 0;
};

// `space`: the legal configs; `predicted_seconds`: the model's static prediction for each (used by
// model-topk, and by anneal for its start).
std::unique_ptr<Strategy> make_strategy(StrategyKind kind,
                                        const std::vector<codegen::TileConfig> &space,
                                        const std::vector<double> &predicted_seconds,
                                        uint64_t seed = 1);

} // namespace tcjit::tuner
