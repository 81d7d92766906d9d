#include "tuner/strategy.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>

namespace tcjit::tuner {

namespace {

using codegen::TileConfig;

constexpr std::array<std::string_view, 4> kNames = {"exhaustive", "random", "anneal", "model-topk"};

// A fixed order of indices: exhaustive, random and model-topk.
class OrderStrategy final : public Strategy {
public:
  explicit OrderStrategy(std::vector<size_t> order) : order_(std::move(order)) {}
  std::optional<size_t> next() override {
    if (pos_ >= order_.size())
      return std::nullopt;
    return order_[pos_++];
  }
  void report(size_t, double) override {}

private:
  std::vector<size_t> order_;
  size_t pos_ = 0;
};

int distance(const TileConfig &a, const TileConfig &b) {
  return (a.bm != b.bm) + (a.bn != b.bn) + (a.bk != b.bk) + (a.wm != b.wm) + (a.wn != b.wn) +
         (a.stages != b.stages) + (a.split_k != b.split_k) + (a.raster_group != b.raster_group) +
         (a.vec_a != b.vec_a) + (a.vec_b != b.vec_b);
}

// Simulated annealing: from the model's best, a random unvisited neighbour of the current config
// (one field changed; two when none is left; any unvisited config when neither), accepted when
// faster, or slower with probability exp(-relative slowdown / temperature); the temperature
// decays by 10% per outcome.
class AnnealStrategy final : public Strategy {
public:
  AnnealStrategy(const std::vector<TileConfig> &space, const std::vector<double> &predicted,
                 uint64_t seed)
      : space_(space), visited_(space.size(), false), rng_(seed) {
    if (!space.empty())
      current_ = size_t(std::min_element(predicted.begin(), predicted.end()) - predicted.begin());
  }

  std::optional<size_t> next() override {
    if (proposed_ == space_.size())
      return std::nullopt;
    if (!visited_[current_])
      return visit(current_);
    for (int d = 1; d <= 2; ++d) {
      std::vector<size_t> near;
      for (size_t i = 0; i < space_.size(); ++i)
        if (!visited_[i] && distance(space_[i], space_[current_]) == d)
          near.push_back(i);
      if (!near.empty())
        return visit(near[rng_() % near.size()]);
    }
    std::vector<size_t> rest;
    for (size_t i = 0; i < space_.size(); ++i)
      if (!visited_[i])
        rest.push_back(i);
    return visit(rest[rng_() % rest.size()]);
  }

  void report(size_t index, double seconds) override {
    if (index == current_ && !has_cost_) {
      current_cost_ = seconds;
      has_cost_ = std::isfinite(seconds);
      return;
    }
    if (std::isfinite(seconds)) {
      const double u = double(rng_() >> 11) * 0x1.0p-53;
      const bool accept = !has_cost_ || seconds < current_cost_ ||
                          u < std::exp(-(seconds - current_cost_) / (current_cost_ * temperature_));
      if (accept) {
        current_ = index;
        current_cost_ = seconds;
        has_cost_ = true;
      }
    }
    temperature_ *= 0.9;
  }

private:
  size_t visit(size_t i) {
    visited_[i] = true;
    ++proposed_;
    return i;
  }
  const std::vector<TileConfig> &space_;
  std::vector<bool> visited_;
  size_t proposed_ = 0;
  size_t current_ = 0;
  double current_cost_ = 0;
  bool has_cost_ = false;
  double temperature_ = 0.1;
  std::mt19937_64 rng_;
};

} // namespace

std::string_view to_string(StrategyKind kind) {
  return kNames[static_cast<size_t>(kind)];
}

std::optional<StrategyKind> parse_strategy(std::string_view text) {
  for (size_t i = 0; i < kNames.size(); ++i)
    if (kNames[i] == text)
      return static_cast<StrategyKind>(i);
  return std::nullopt;
}

std::unique_ptr<Strategy> make_strategy(StrategyKind kind, const std::vector<TileConfig> &space,
                                        const std::vector<double> &predicted, uint64_t seed) {
  std::vector<size_t> order(space.size());
  std::iota(order.begin(), order.end(), size_t{0});
  switch (kind) {
  case StrategyKind::exhaustive: return std::make_unique<OrderStrategy>(std::move(order));
  case StrategyKind::random: {
    std::mt19937_64 rng(seed); // Fisher-Yates on the raw generator: the same on every platform
    for (size_t i = order.size(); i > 1; --i)
      std::swap(order[i - 1], order[rng() % i]);
    return std::make_unique<OrderStrategy>(std::move(order));
  }
  case StrategyKind::model_topk: {
    auto cost = [&](size_t i) {
      return i < predicted.size() ? predicted[i] : std::numeric_limits<double>::infinity();
    };
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return cost(a) < cost(b); });
    return std::make_unique<OrderStrategy>(std::move(order));
  }
  case StrategyKind::anneal: return std::make_unique<AnnealStrategy>(space, predicted, seed);
  }
  return nullptr;
}

} // namespace tcjit::tuner
