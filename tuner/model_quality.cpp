#include "tuner/model_quality.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace tcjit::tuner {

std::optional<double> kendall_tau_b(std::span<const double> x, std::span<const double> y) {
  if (x.size() != y.size())
    throw std::invalid_argument("kendall_tau_b: " + std::to_string(x.size()) + " values of x, " +
                                std::to_string(y.size()) + " of y");
  const size_t n = x.size();
  if (n < 2)
    return std::nullopt;
  double concordant = 0, discordant = 0, tied_x = 0, tied_y = 0;
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j) {
      const double dx = x[j] - x[i], dy = y[j] - y[i];
      if (dx == 0)
        ++tied_x;
      if (dy == 0)
        ++tied_y;
      if (dx == 0 || dy == 0)
        continue;
      ((dx > 0) == (dy > 0) ? concordant : discordant) += 1;
    }
  const double pairs = static_cast<double>(n) * static_cast<double>(n - 1) / 2;
  const double denominator = std::sqrt((pairs - tied_x) * (pairs - tied_y));
  if (denominator == 0)
    return std::nullopt;
  return (concordant - discordant) / denominator;
}

ModelQuality model_quality(std::span<const PredictedAndMeasured> candidates, size_t k) {
  if (candidates.empty())
    throw std::invalid_argument("model_quality: no candidates");
  if (k == 0)
    throw std::invalid_argument("model_quality: k must be at least 1");
  for (const PredictedAndMeasured &c : candidates)
    if (!(c.predicted_us > 0) || !(c.measured_us > 0))
      throw std::invalid_argument("model_quality: candidate " + c.config +
                                  " has a time that is not > 0 (predicted " +
                                  std::to_string(c.predicted_us) + " us, measured " +
                                  std::to_string(c.measured_us) + " us)");
  std::vector<double> predicted, measured;
  for (const PredictedAndMeasured &c : candidates) {
    predicted.push_back(c.predicted_us);
    measured.push_back(c.measured_us);
  }
  ModelQuality q;
  q.candidates = candidates.size();
  q.k = k;
  q.kendall_tau_b = kendall_tau_b(predicted, measured);

  const auto best =
      std::min_element(candidates.begin(), candidates.end(),
                       [](const auto &a, const auto &b) { return a.measured_us < b.measured_us; });
  q.measured_best = best->config;
  q.measured_best_us = best->measured_us;
  q.winner_predicted_us = best->predicted_us;
  q.winner_ratio = best->predicted_us / best->measured_us;

  // The model's order: fastest predicted first, ties in the order given.
  std::vector<size_t> order(candidates.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return candidates[a].predicted_us < candidates[b].predicted_us;
  });
  const PredictedAndMeasured &top1 = candidates[order.front()];
  q.model_top1 = top1.config;
  q.regret_top1 = top1.measured_us / q.measured_best_us;
  double best_of_top = top1.measured_us;
  for (size_t i = 0; i < std::min(k, order.size()); ++i)
    best_of_top = std::min(best_of_top, candidates[order[i]].measured_us);
  q.regret_topk = best_of_top / q.measured_best_us;
  return q;
}

} // namespace tcjit::tuner
