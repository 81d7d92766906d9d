#include "compiler/reference/tolerance.h"

#include "compiler/reference/activation.h"
#include "compiler/reference/conv_geometry.h"
#include "compiler/reference/gemm_geometry.h"
#include "compiler/reference/numeric_convert.h"
#include "compiler/reference/output_layout.h"

#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <vector>

namespace tcjit {

namespace {

// Reduction terms a split-K kernel adds (partial sums combined at the end) beyond K.
constexpr double split_k_allowance = 16;
constexpr double activation_eval_factor = 16; // c_act, in units of u_epi
// f16 accumulation (docs/numerics.md): one f16 rounding of the accumulator per group of 8
// products (the tensor cores' group on A100, Fasi et al. 2021; an mma.m16n8k16.f16.f16.f16.f16
// is two groups, and the emulator rounds once per instruction, fewer), each off by at most one
// f16 ulp (2^-10 of the value: round to nearest or toward zero alike) plus the f32 (or wider)
// sum of the group's products and C, truncated (17 terms x 2^-23 < 2^-18).
constexpr double f16_rounding_group = 8;
constexpr double f16_step_roundoff = 0x1p-10 + 0x1p-18;
constexpr double f16_subnormal_step = 0x1p-24; // absolute error of one rounding below 2^-14
constexpr double fp8_accumulator_unit_roundoff = 0x1p-13;

double unit_roundoff(DType dtype) {
  switch (dtype) {
  case DType::f16: return 0x1p-11;
  case DType::bf16: return 0x1p-8;
  case DType::tf32: return 0x1p-11; // a tf32 output may be rounded to tf32's 10 explicit bits
  case DType::f32: return 0x1p-24;
  case DType::f64: return 0x1p-53;
  case DType::s8:
  case DType::u8:
  case DType::s32:
  case DType::s4:
  case DType::u4:
  case DType::b1: return 0;
  case DType::e4m3: return 0x1p-4;
  case DType::e5m2: return 0x1p-3;
  }
  throw std::invalid_argument("tcjit tolerance: dtype " + std::string(to_string(dtype)) +
                              " is reserved and not supported yet");
}

// Below this a correct kernel may flush (f32 epilogue with FTZ) or round to a subnormal.
double absolute_floor(DType output) {
  switch (output) {
  case DType::f16: return 0x1p-24; // one f16 subnormal step
  case DType::bf16:
  case DType::tf32:
  case DType::f32: return 0x1p-126;
  case DType::f64: return 0x1p-1022;
  case DType::s8:
  case DType::u8:
  case DType::s32:
  case DType::s4:
  case DType::u4:
  case DType::e4m3:
  case DType::e5m2:
  case DType::b1: break;
  }
  return 0;
}

// The smallest magnitude that rounds to infinity in `output`.
double overflow_threshold(DType output) {
  switch (output) {
  case DType::f16: return 65520.0;
  case DType::bf16: return 0x1.FF8p127;
  case DType::tf32:
  case DType::f32: return 0x1.FFFFFFp127;
  case DType::f64:
  case DType::s8:
  case DType::u8:
  case DType::s32:
  case DType::s4:
  case DType::u4:
  case DType::e4m3:
  case DType::e5m2:
  case DType::b1: break;
  }
  return std::numeric_limits<double>::infinity();
}

int64_t reduction_length(const OpSpec &spec) {
  if (spec.kind == OpKind::gemm)
    return gemm_geometry(spec).k;
  const ConvGeometry g = conv_geometry(spec);
  switch (g.pass) {
  case ConvPass::fprop: return g.t * g.r * g.s * g.c_per_group;
  case ConvPass::dgrad: return g.t * g.r * g.s * g.k_per_group;
  case ConvPass::wgrad: return g.n * g.o * g.p * g.q;
  }
  return 1;
}

// How far an element is from failing: error / tolerance, 0 for a matching element without
// tolerance (exact, or NaN matching NaN), infinity for a failing one.
double error_over_tolerance(double error, double tolerance, bool match) {
  if (tolerance > 0 && std::isfinite(error))
    return error / tolerance;
  return match ? 0 : std::numeric_limits<double>::infinity();
}

bool is_integral(double v) {
  return std::isfinite(v) && v == std::nearbyint(v);
}

std::string format_number(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%.9g", v);
  return text;
}

} // namespace

ToleranceModel tolerance_model(const OpSpec &spec, MathMode resolved) {
  if (resolved == MathMode::automatic)
    throw std::invalid_argument(
        "tcjit tolerance: pass the resolved math mode (tf32 or f32), not auto");
  ToleranceModel model;
  model.output = output_dtype(spec);
  model.integer_output = is_integer_type(model.output);
  model.output_unit_roundoff = unit_roundoff(model.output);
  model.accumulator_unit_roundoff = unit_roundoff(spec.acc);
  if (spec.acc == DType::f16) { // f16 accumulators, widened to f32 after the main loop
    model.accumulator_unit_roundoff = 0x1p-24;
    model.f16_accumulation_steps =
        std::ceil(static_cast<double>(reduction_length(spec)) / f16_rounding_group);
    model.f16_step_unit_roundoff = f16_step_roundoff;
  }
  // fp8 mma: the products are exact in f32, but the tensor cores' f32 accumulation of them is not
  // documented bit-exactly and keeps fewer bits (about 14 on Hopper, as measured by others): a
  // unit roundoff of 2^-13 bounds it (docs/numerics.md).
  const DType in = spec.kind == OpKind::gemm ? spec.gemm.a.dtype : DType::f32;
  if (in == DType::e4m3 || in == DType::e5m2)
    model.accumulator_unit_roundoff = fp8_accumulator_unit_roundoff;
  const bool f64_epilogue = spec.acc == DType::f64 && model.output == DType::f64;
  model.epilogue_unit_roundoff = f64_epilogue ? 0x1p-53 : 0x1p-24;
  model.reduction_length = static_cast<double>(reduction_length(spec)) + split_k_allowance;
  model.abs_alpha = std::fabs(spec.epilogue.alpha);
  model.activation_lipschitz = activation_lipschitz_bound(spec.epilogue.act);
  if (activation_is_transcendental(spec.epilogue.act))
    model.activation_eval_relative = activation_eval_factor * model.epilogue_unit_roundoff;
  model.absolute_floor = absolute_floor(model.output);
  if (model.integer_output) {
    const bool exact_epilogue =
        is_integer_type(spec.acc) && is_integral(spec.epilogue.alpha) &&
        is_integral(spec.epilogue.beta) &&
        (spec.epilogue.act == Activation::none || spec.epilogue.act == Activation::relu);
    model.integer_allowance = exact_epilogue ? 0 : 1;
    if (exact_epilogue)
      model.epilogue_unit_roundoff = 0;
  }
  return model;
}

double f16_accumulation_bound(const ToleranceModel &model, double magnitude) {
  const double n = model.f16_accumulation_steps;
  if (n <= 0)
    return 0;
  const double growth = std::expm1(n * std::log1p(model.f16_step_unit_roundoff)); // (1+u)^n - 1
  return growth * magnitude + n * f16_subnormal_step * (1 + growth);
}

double pre_activation_tolerance(const ToleranceModel &model, double accumulator, double magnitude) {
  const double k = model.reduction_length;
  const double accumulation = model.accumulator_unit_roundoff *
                              (model.random_walk_factor * std::sqrt(k) * magnitude +
                               model.drift_factor * k * model.abs_alpha * std::fabs(accumulator) +
                               model.worst_case_factor * k * magnitude);
  const double epilogue = model.epilogue_factor * model.epilogue_unit_roundoff * magnitude;
  return accumulation + f16_accumulation_bound(model, magnitude) + epilogue;
}

double element_tolerance(const ToleranceModel &model, double value, double accumulator,
                         double magnitude, double activation_spread) {
  const double before_activation =
      activation_spread >= 0
          ? activation_spread
          : model.activation_lipschitz * pre_activation_tolerance(model, accumulator, magnitude);
  // A NaN value (an activation undefined there) scales nothing: an integer output compares the
  // saturated value (NaN converts to 0, as cvt.rni does), a float output NaN with NaN.
  const double abs_value = std::isnan(value) ? 0.0 : std::fabs(value);
  const double activation = model.activation_eval_relative * (abs_value + magnitude + 1.0);
  if (model.integer_output)
    return model.integer_allowance + before_activation + activation;
  return model.output_unit_roundoff * abs_value + before_activation + activation +
         model.absolute_floor;
}

CompareReport compare_with_reference(const OpSpec &spec, MathMode resolved,
                                     const void *actual_output, const ReferenceResult &reference) {
  return compare_with_reference(spec, tolerance_model(spec, resolved), actual_output, reference);
}

CompareReport compare_with_reference(const OpSpec &spec, const ToleranceModel &model,
                                     const void *actual_output, const ReferenceResult &reference) {
  const OutputLayout layout = output_layout(spec);
  const auto count = static_cast<size_t>(layout.count);
  if (reference.values.size() != count || reference.accumulators.size() != count ||
      reference.magnitudes.size() != count ||
      (!reference.activation_spreads.empty() && reference.activation_spreads.size() != count))
    throw std::invalid_argument("tcjit compare: the reference has " +
                                std::to_string(reference.values.size()) + " elements, the output " +
                                std::to_string(layout.count));
  if (actual_output == nullptr)
    throw std::invalid_argument("tcjit compare: no output buffer");
  const double infinity = std::numeric_limits<double>::infinity();
  CompareReport report;
  report.output = layout.dtype;
  report.count = layout.count;
  std::vector<int64_t> offsets(count);
  output_buffer_offsets(layout, 0, layout.count, offsets.data());
  for (size_t e = 0; e < count; ++e) {
    const double got = read_element(layout.dtype, actual_output, offsets[e]);
    const double exact = reference.values[e];
    const double tolerance = element_tolerance(
        model, exact, reference.accumulators[e], reference.magnitudes[e],
        reference.activation_spreads.empty() ? -1 : reference.activation_spreads[e]);
    double expected = exact;
    double error = 0;
    bool match = false;
    if (model.integer_output) {
      expected = round_to_dtype(layout.dtype, exact);
      error = std::fabs(got - expected);
      match = error <= tolerance;
    } else if (std::isnan(exact) || std::isnan(got)) {
      match = std::isnan(exact) && std::isnan(got);
      error = match ? 0 : infinity;
    } else if (std::isinf(got) || std::isinf(exact)) {
      const bool same_infinity = got == round_to_dtype(layout.dtype, exact);
      const bool plausible_overflow =
          std::isinf(got) && std::isfinite(exact) && std::signbit(got) == std::signbit(exact) &&
          std::fabs(exact) + tolerance >= overflow_threshold(layout.dtype);
      match = same_infinity || plausible_overflow;
      error = match ? 0 : infinity;
    } else {
      error = std::fabs(got - exact);
      match = error <= tolerance;
    }
    const double ratio = error_over_tolerance(error, tolerance, match);
    if (!match)
      ++report.mismatches;
    report.max_abs_error = std::max(report.max_abs_error, error);
    if (report.worst_index < 0 || ratio > report.max_error_over_tolerance) {
      report.max_error_over_tolerance = ratio;
      report.worst_index = int64_t(e);
      report.worst_got = got;
      report.worst_expected = expected;
      report.worst_tolerance = tolerance;
    }
  }
  if (report.worst_index >= 0)
    report.worst_coordinates = output_coordinates(layout, report.worst_index);
  return report;
}

std::string CompareReport::summary() const {
  const std::string dtype(to_string(output));
  if (count == 0)
    return "no elements compared";
  std::string head =
      ok() ? "ok: all " + std::to_string(count) + " " + dtype + " elements within tolerance"
           : std::to_string(mismatches) + " of " + std::to_string(count) + " " + dtype +
                 " elements out of tolerance";
  std::string expected = format_number(worst_expected);
  const double rounded = round_to_dtype(output, worst_expected);
  if (is_float_type(output) && rounded != worst_expected && !std::isnan(worst_expected))
    expected += " (rounds to " + format_number(rounded) + ")";
  return head + "; worst element " + std::to_string(worst_index) + " (" + worst_coordinates +
         "): got " + format_number(worst_got) + ", expected " + expected + ", |error| " +
         format_number(std::fabs(worst_got - worst_expected)) + (ok() ? " <= " : " > ") +
         "tolerance " + format_number(worst_tolerance) + " (" +
         format_number(max_error_over_tolerance) + " of tolerance)";
}

} // namespace tcjit
