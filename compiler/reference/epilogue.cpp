#include "compiler/reference/epilogue.h"

#include "compiler/reference/activation.h"
#include "compiler/reference/numeric_convert.h"
#include "support/parallel_for.h"

#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace tcjit {

EpilogueValue apply_epilogue(const Epilogue &epilogue, double acc, double acc_abs_sum, double c,
                             double bias) {
  double pre_activation = epilogue.alpha * acc;
  double magnitude = std::fabs(epilogue.alpha) * acc_abs_sum;
  if (epilogue.beta != 0.0) {
    pre_activation += epilogue.beta * c;
    magnitude += std::fabs(epilogue.beta * c);
  }
  pre_activation += bias;
  magnitude += std::fabs(bias);
  return {apply_activation(epilogue.act, pre_activation), magnitude};
}

ReferenceResult finish_reference(const OpSpec &spec, const OutputLayout &layout,
                                 ReferenceValues accumulators, ReferenceValues abs_sums,
                                 void *output, const void *bias) {
  if (layout.bias_axis >= 0 && bias == nullptr)
    throw std::invalid_argument("tcjit reference: the epilogue has a bias but no bias buffer");
  if (output == nullptr)
    throw std::invalid_argument("tcjit reference: no output buffer");
  const auto count = static_cast<size_t>(layout.count);
  if (accumulators.size() != count || abs_sums.size() != count)
    throw std::logic_error("tcjit reference: " + std::to_string(accumulators.size()) +
                           " sums and " + std::to_string(abs_sums.size()) + " |a||b| sums for " +
                           std::to_string(count) + " output elements");
  ReferenceResult result;
  result.values.resize(accumulators.size());
  result.accumulators = std::move(accumulators);
  result.magnitudes = std::move(abs_sums);
  const Epilogue &epilogue = spec.epilogue;
  parallel_for(layout.count, 4096, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> offsets(static_cast<size_t>(end - begin));
    output_buffer_offsets(layout, begin, end - begin, offsets.data());
    for (int64_t e = begin; e < end; ++e) {
      const auto i = static_cast<size_t>(e);
      const int64_t offset = offsets[static_cast<size_t>(e - begin)];
      const double c = epilogue.beta != 0.0 ? read_element(layout.dtype, output, offset) : 0.0;
      const int64_t bias_index = output_bias_index(layout, e);
      const double bias_value =
          bias_index >= 0 ? read_element(layout.dtype, bias, bias_index) : 0.0;
      const EpilogueValue v =
          apply_epilogue(epilogue, result.accumulators[i], result.magnitudes[i], c, bias_value);
      result.values[i] = v.value;
      result.magnitudes[i] = v.magnitude;
      write_element(layout.dtype, output, offset, v.value);
    }
  });
  return result;
}

} // namespace tcjit
