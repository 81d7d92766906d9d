// How well the cost model ranked the candidates of a problem tuned by measurement: its predicted
// times beside the measured ones of the same candidates. Pure arithmetic (unit-tested by hand).
//   kendall_tau_b   rank correlation of the predicted and the measured order, ties handled
//                   (tau-b): 1 the same order, -1 the reverse, 0 unrelated
//   winner ratio    predicted / measured time of the measured winner (1: the model was right
//                   about the best candidate's time)
//   regret top-k    the best measured time among the model's k fastest-predicted candidates over
//                   the best measured time (1: the model's pick is the measured best)
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>

namespace tcjit::tuner {

struct PredictedAndMeasured {
  std::string config; // for the report
  double predicted_us = 0;
  double measured_us = 0; // the measurement's median
};

// Kendall's tau-b of x and y (the same length): (concordant - discordant) /
// sqrt((n0 - tx) (n0 - ty)), n0 = n (n - 1) / 2 pairs, tx and ty the pairs tied in x and in y
// (a pair tied in both is neither concordant nor discordant). nullopt when it is undefined: fewer
// than two values, or every value of x (or of y) tied. Throws std::invalid_argument for lengths
// that differ.
std::optional<double> kendall_tau_b(std::span<const double> x, std::span<const double> y);

struct ModelQuality {
  size_t candidates = 0;
  std::optional<double> kendall_tau_b;
  std::string measured_best; // its config
  double measured_best_us = 0;
  double winner_predicted_us = 0; // the model's time of the measured best
  double winner_ratio = 0;        // winner_predicted_us / measured_best_us
  std::string model_top1;         // the candidate the model predicts fastest
  double regret_top1 = 0;         // its measured time / measured_best_us
  double regret_topk = 0;         // best measured among the model's top k / measured_best_us
  size_t k = 8;
};

// Of a problem's candidates (at least one; every time > 0). Ties in the prediction go to the
// candidate listed first, as the tuner's ranking keeps its space's order. Throws
// std::invalid_argument for no candidates, a time <= 0 (or NaN) or k == 0.
ModelQuality model_quality(std::span<const PredictedAndMeasured> candidates, size_t k = 8);

} // namespace tcjit::tuner
