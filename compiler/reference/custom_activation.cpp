#include "compiler/reference/custom_activation.h"

#include <cmath>
#include <limits>
#include <stdexcept>

namespace tcjit {

void apply_custom_activation(ReferenceResult &reference, const ToleranceModel &model,
                             const ActivationEvaluator &evaluate) {
  const size_t n = reference.values.size();
  // A unit in the last place of the epilogue type (2^-23 for f32), relative.
  const double ulp = model.epilogue_unit_roundoff > 0 ? 2 * model.epilogue_unit_roundoff : 0x1p-23;
  std::vector<double> points(3 * n);
  for (size_t e = 0; e < n; ++e) {
    const double x = reference.values[e];
    const double d =
        pre_activation_tolerance(model, reference.accumulators[e], reference.magnitudes[e]) +
        2 * ulp * std::fabs(x);
    points[3 * e] = x;
    points[3 * e + 1] = x - d;
    points[3 * e + 2] = x + d;
  }
  const std::vector<double> acts = evaluate(points);
  if (acts.size() != points.size())
    throw std::invalid_argument("tcjit reference: the custom activation gave " +
                                std::to_string(acts.size()) + " values for " +
                                std::to_string(points.size()) + " points");
  reference.activation_spreads.resize(n);
  const double infinity = std::numeric_limits<double>::infinity();
  for (size_t e = 0; e < n; ++e) {
    const double y = acts[3 * e], lo = acts[3 * e + 1], hi = acts[3 * e + 2];
    reference.values[e] = y;
    double spread = 0;
    if (!std::isnan(y)) {
      // A neighbour where act is undefined (NaN) or infinite: any finite result is as good.
      for (const double n : {lo, hi})
        spread = std::max(spread, std::isfinite(n) ? std::fabs(n - y) : infinity);
    }
    reference.activation_spreads[e] = 1.25 * spread;
  }
}

} // namespace tcjit
