#include "compiler/reference/activation.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tcjit {
namespace {

// Known values (from the definitions, evaluated independently at full double precision).
TEST(Activation, MatchesKnownValues) {
  EXPECT_EQ(apply_activation(Activation::none, -1.5), -1.5);
  EXPECT_EQ(apply_activation(Activation::relu, -2.0), 0.0);
  EXPECT_EQ(apply_activation(Activation::relu, 3.0), 3.0);
  EXPECT_DOUBLE_EQ(apply_activation(Activation::tanh, 0.5), 0.46211715726000974);
  EXPECT_DOUBLE_EQ(apply_activation(Activation::sigmoid, 0.0), 0.5);
  EXPECT_DOUBLE_EQ(apply_activation(Activation::sigmoid, 2.0), 0.8807970779778823);
  EXPECT_DOUBLE_EQ(apply_activation(Activation::elu, -1.0), -0.6321205588285577); // e^-1 - 1
  EXPECT_EQ(apply_activation(Activation::elu, 2.0), 2.0);
  EXPECT_DOUBLE_EQ(apply_activation(Activation::gelu, 1.0), 0.8413447460685429);    // Phi(1)
  EXPECT_DOUBLE_EQ(apply_activation(Activation::gelu, -1.0), -0.15865525393145707); // -Phi(-1)
  EXPECT_DOUBLE_EQ(apply_activation(Activation::gelu_tanh, 1.0), 0.8411919906082768);
  // -0.00363739208177301883781646613189... (50-digit evaluation; 1 + tanh cancels in double)
  EXPECT_NEAR(apply_activation(Activation::gelu_tanh, -3.0), -0.0036373920817730188, 1e-18);
  EXPECT_DOUBLE_EQ(apply_activation(Activation::softplus, 0.0), 0.6931471805599453); // ln 2
  EXPECT_DOUBLE_EQ(apply_activation(Activation::softplus, 2.0), 2.1269280110429727);
  EXPECT_DOUBLE_EQ(apply_activation(Activation::swish, 1.0), 0.7310585786300049);
  EXPECT_DOUBLE_EQ(apply_activation(Activation::swish, -3.0), -0.14227761953270035);
}

TEST(Activation, StableAtExtremes) {
  // gelu(-10) = -10 Phi(-10): tiny but not zero (1 + erf would cancel to exactly 0).
  EXPECT_NEAR(apply_activation(Activation::gelu, -10.0), -7.619853024160593e-23, 1e-36);
  EXPECT_LT(apply_activation(Activation::gelu_tanh, -10.0), 0.0);
  EXPECT_EQ(apply_activation(Activation::softplus, 1000.0), 1000.0); // no exp overflow
  EXPECT_GE(apply_activation(Activation::softplus, -1000.0), 0.0);
  EXPECT_LT(apply_activation(Activation::softplus, -1000.0), 1e-300);
  EXPECT_EQ(apply_activation(Activation::sigmoid, -1000.0), 0.0);
  EXPECT_EQ(apply_activation(Activation::sigmoid, 1000.0), 1.0);
  EXPECT_EQ(apply_activation(Activation::swish, -1000.0), -0.0);
  EXPECT_EQ(apply_activation(Activation::elu, -1000.0), -1.0);
  EXPECT_TRUE(std::isnan(apply_activation(Activation::relu, std::nan(""))));
}

TEST(Activation, LipschitzBoundsHoldAndAreTight) {
  const Activation all[] = {Activation::none,      Activation::relu,     Activation::tanh,
                            Activation::sigmoid,   Activation::elu,      Activation::gelu,
                            Activation::gelu_tanh, Activation::softplus, Activation::swish};
  for (const Activation act : all) {
    double steepest = 0;
    const double step = 1e-3;
    for (double x = -12; x < 12; x += step) {
      const double slope =
          std::fabs(apply_activation(act, x + step) - apply_activation(act, x)) / step;
      steepest = std::max(steepest, slope);
    }
    EXPECT_LE(steepest, activation_lipschitz_bound(act) * (1 + 1e-6)) << to_string(act);
    EXPECT_GE(steepest, activation_lipschitz_bound(act) * 0.99) << to_string(act);
  }
}

TEST(Activation, TranscendentalClassification) {
  EXPECT_FALSE(activation_is_transcendental(Activation::none));
  EXPECT_FALSE(activation_is_transcendental(Activation::relu));
  EXPECT_TRUE(activation_is_transcendental(Activation::gelu));
  EXPECT_TRUE(activation_is_transcendental(Activation::sigmoid));
}

} // namespace
} // namespace tcjit
