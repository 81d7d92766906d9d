// Operation::predicted_time (include/tcjit/tcjit.hpp): the time a launch at given sizes is expected
// to take on the kernel it would run — the database's measured time of a concrete problem's
// decision when the launch is that problem and the kernel has the decided config, else the cost
// model's prediction (tuner/cost_model.h) for the kernel's config and ptxas's resources, with the
// database's calibration for the runtime's GPU (`tcjit calibrate`, api/calibrated_model.h).
#include "api/runtime_state.h"

#include "compiler/reference/bind_dims.h"
#include "tuner/cost_model.h"

#include <stdexcept>

namespace tcjit {

namespace {

// The cost model's time of `kernel` running `bound` on the runtime's arch; nullopt when the model
// has no GPU for the arch or cannot launch the config.
std::optional<TimeEstimate> model_time(const Operation::State &s, const OpSpec &bound,
                                       const api::SharedKernel &kernel) {
  tuner::CandidateFacts facts;
  facts.registers = kernel.resources.registers;
  facts.spill_bytes = kernel.resources.spill_bytes;
  facts.stack_bytes = kernel.resources.stack_bytes;
  try {
    const tuner::Prediction p =
        tuner::predict_config(s.model ? *s.model : tuner::gpu_model_for_arch(s.arch), bound,
                              kernel.kernel.config, s.tf32_off, facts);
    if (!p.launchable || !(p.seconds > 0))
      return std::nullopt;
    return TimeEstimate{p.seconds * 1e6, false};
  } catch (const std::invalid_argument &) {
    return std::nullopt;
  }
}

// The estimate of a launch of `bound`; `as_prepared`: the launch is the prepared concrete problem.
std::optional<TimeEstimate> estimate(const Operation::State &s, const OpSpec &bound,
                                     bool as_prepared, const api::SharedKernel &kernel) {
  if (as_prepared && s.decided_config && *s.decided_config == kernel.kernel.config)
    return TimeEstimate{s.decided_time_us, true};
  return model_time(s, bound, kernel);
}

} // namespace

std::optional<TimeEstimate> api::predicted_time(const Operation::State &s, const GemmArgs &sizes,
                                                const LaunchVocabulary &words) {
  if (s.spec.kind != OpKind::gemm)
    throw Error(ErrorCode::invalid_argument,
                "GEMM sizes given for a " + std::string(to_string(s.spec.kind)) + " operation (" +
                    s.spec_text + ")",
                words.where, "ask a convolution's time with its batch size");
  const OpSpec bound = bind_gemm_launch(s, sizes, words);
  const std::shared_ptr<const SharedKernel> kernel = kernel_for_sizes(s, bound);
  const GemmSpec &b = bound.gemm, &g = s.spec.gemm;
  const bool as_prepared = s.concrete && b.m.value == g.m.value && b.n.value == g.n.value &&
                           b.k.value == g.k.value && b.batch.value == g.batch.value;
  return estimate(s, bound, as_prepared, *kernel);
}

std::optional<TimeEstimate> api::predicted_time_conv(const Operation::State &s,
                                                     const ConvArgs &sizes,
                                                     const LaunchVocabulary &words) {
  if (s.spec.kind == OpKind::gemm)
    throw Error(ErrorCode::invalid_argument,
                "a convolution's batch size given for a gemm operation (" + s.spec_text + ")",
                words.where, "ask a GEMM's time with its sizes m, n, k, batch");
  if (sizes.n < 0)
    throw Error(ErrorCode::invalid_argument,
                words.arg("n") + " = " + std::to_string(sizes.n) + " is negative", words.where,
                "pass the batch size, or 0 for the prepared spec's");
  const bool as_prepared = s.concrete && (sizes.n == 0 || sizes.n == s.spec.conv.n.value);
  if (!as_prepared && sizes.n == 0)
    throw Error(ErrorCode::invalid_argument,
                "n is symbolic in the prepared spec (" + s.spec_text + ")", words.where,
                "pass " + words.arg("n") + " (the batch size of the launch)");
  OpSpec bound = s.spec;
  if (!as_prepared) {
    try {
      bound = bind_conv_batch(s.spec, sizes.n);
    } catch (const std::invalid_argument &e) {
      throw Error(ErrorCode::invalid_argument, words.arg("n") + ": " + e.what(), words.where,
                  "pass a batch size the operation was prepared for");
    }
  }
  return estimate(s, bound, as_prepared, *kernel_of(s));
}

std::optional<TimeEstimate> Operation::predicted_time(const GemmArgs &sizes) const {
  return api::predicted_time(*state_, sizes, api::LaunchVocabulary{"predicted_time"});
}

std::optional<TimeEstimate> Operation::predicted_time_conv(const ConvArgs &sizes) const {
  return api::predicted_time_conv(*state_, sizes,
                                  api::LaunchVocabulary{"predicted_time_conv", "ConvArgs"});
}

} // namespace tcjit
