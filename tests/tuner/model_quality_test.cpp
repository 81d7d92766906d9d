// tuner/model_quality.h against values computed by hand.
#include "tuner/model_quality.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

namespace tcjit::tuner {
namespace {

TEST(KendallTauB, SameAndReversedOrder) {
  const std::vector<double> x{1, 2, 3, 4, 5};
  const std::vector<double> same{10, 20, 30, 40, 50};
  const std::vector<double> reversed{50, 40, 30, 20, 10};
  EXPECT_DOUBLE_EQ(*kendall_tau_b(x, same), 1.0);
  EXPECT_DOUBLE_EQ(*kendall_tau_b(x, reversed), -1.0);
}

TEST(KendallTauB, AKnownPermutation) {
  // y = (1, 3, 2, 4): of the 6 pairs only (2, 3) is discordant: (5 - 1) / 6.
  const std::vector<double> x{1, 2, 3, 4};
  const std::vector<double> y{1, 3, 2, 4};
  EXPECT_DOUBLE_EQ(*kendall_tau_b(x, y), 4.0 / 6.0);
  // y = (2, 1, 4, 3, 5): 2 discordant pairs of 10: (8 - 2) / 10.
  const std::vector<double> x5{1, 2, 3, 4, 5};
  const std::vector<double> y5{2, 1, 4, 3, 5};
  EXPECT_DOUBLE_EQ(*kendall_tau_b(x5, y5), 0.6);
}

TEST(KendallTauB, TiesAreTauB) {
  // x = (1, 1, 2, 3), y = (1, 2, 3, 3). Pairs: (0,1) tied in x; (2,3) tied in y; the other 4
  // concordant. tau-b = 4 / sqrt((6 - 1) (6 - 1)) = 0.8 (tau-a would be 4/6).
  const std::vector<double> x{1, 1, 2, 3};
  const std::vector<double> y{1, 2, 3, 3};
  EXPECT_DOUBLE_EQ(*kendall_tau_b(x, y), 0.8);
  // A pair tied in both counts in both tie counts: x = (1, 1, 2), y = (5, 5, 6): 2 concordant,
  // 1 pair tied in both: 2 / sqrt(2 * 2) = 1.
  EXPECT_DOUBLE_EQ(*kendall_tau_b(std::vector<double>{1, 1, 2}, std::vector<double>{5, 5, 6}), 1.0);
}

TEST(KendallTauB, UndefinedCases) {
  EXPECT_FALSE(kendall_tau_b(std::vector<double>{1}, std::vector<double>{2}).has_value());
  EXPECT_FALSE(kendall_tau_b(std::vector<double>{3, 3, 3}, std::vector<double>{1, 2, 3}));
  EXPECT_THROW(kendall_tau_b(std::vector<double>{1, 2}, std::vector<double>{1}),
               std::invalid_argument);
}

TEST(ModelQuality, RegretAndWinnerRatio) {
  // Model order (fastest predicted first): c (5), a (10), d (12), b (20).
  // Measured: a 11, b 9 (the best), c 15, d 30.
  const std::vector<PredictedAndMeasured> cands{
      {"a", 10, 11}, {"b", 20, 9}, {"c", 5, 15}, {"d", 12, 30}};
  const ModelQuality top2 = model_quality(cands, 2);
  EXPECT_EQ(top2.candidates, 4u);
  EXPECT_EQ(top2.measured_best, "b");
  EXPECT_DOUBLE_EQ(top2.measured_best_us, 9);
  EXPECT_DOUBLE_EQ(top2.winner_predicted_us, 20);
  EXPECT_DOUBLE_EQ(top2.winner_ratio, 20.0 / 9.0);
  EXPECT_EQ(top2.model_top1, "c");
  EXPECT_DOUBLE_EQ(top2.regret_top1, 15.0 / 9.0);
  EXPECT_DOUBLE_EQ(top2.regret_topk, 11.0 / 9.0);                    // best of c and a
  EXPECT_DOUBLE_EQ(model_quality(cands, 1).regret_topk, 15.0 / 9.0); // c alone
  EXPECT_DOUBLE_EQ(model_quality(cands, 4).regret_topk, 1.0);        // all of them
  EXPECT_DOUBLE_EQ(model_quality(cands).regret_topk, 1.0);           // k 8 > 4 candidates
  // Pairs (predicted order vs measured order): ab discordant, ac discordant, ad concordant,
  // bc discordant, bd discordant, cd concordant: (2 - 4) / 6.
  EXPECT_DOUBLE_EQ(*top2.kendall_tau_b, -2.0 / 6.0);
}

TEST(ModelQuality, PredictionTiesGoToTheFirstListed) {
  const std::vector<PredictedAndMeasured> cands{{"x", 7, 30}, {"y", 7, 10}};
  const ModelQuality q = model_quality(cands, 1);
  EXPECT_EQ(q.model_top1, "x");
  EXPECT_DOUBLE_EQ(q.regret_top1, 3.0);
  EXPECT_FALSE(q.kendall_tau_b.has_value()) << "every prediction tied: tau-b undefined";
}

TEST(ModelQuality, RefusesBadInput) {
  EXPECT_THROW(model_quality(std::vector<PredictedAndMeasured>{}), std::invalid_argument);
  EXPECT_THROW(model_quality(std::vector<PredictedAndMeasured>{{"z", 0, 1}}),
               std::invalid_argument);
  EXPECT_THROW(model_quality(std::vector<PredictedAndMeasured>{{"z", 1, NAN}}),
               std::invalid_argument);
  EXPECT_THROW(model_quality(std::vector<PredictedAndMeasured>{{"z", 1, 1}}, 0),
               std::invalid_argument);
}

} // namespace
} // namespace tcjit::tuner
