// The tolerance model: how far a correct tensor-core kernel's output may lie from the reference,
// per element, and the comparison that applies it. The formula and its constants are explained in
// docs/numerics.md.
//
// Float outputs, for element i with reference value v (before output rounding), accumulator a
// (sum of the products) and magnitude m (|alpha| sum |a||b| + |beta c| + |bias|):
//   tol_i = u_out |v|                                          output rounding
//         + L * ( u_acc (c_rw sqrt(K_eff) m + c_drift K_eff |alpha a| + c_wc K_eff m)
//                                                              accumulation (any order, split-K,
//                                                              tensor-core truncation)
//               + c_epi u_epi m )                              f32 epilogue arithmetic
//         + c_act u_epi (|v| + m + 1)                          activation evaluation
//         (transcendental)
//         + floor                                              flushed / subnormal results
//         + L * ((1 + u_step)^n - 1) m + L * n 2^-24            acc=f16 only: a bound on f16
//                                                              accumulation (n = ceil(K / 8)
//                                                              roundings of the accumulator)
// with K_eff = K + 16 (K: the implicit-GEMM reduction length), L the activation's Lipschitz bound
// (act=custom: L * (...) is replaced by the reference's per-element spread, custom_activation.h).
// Integer outputs compare the saturated, rounded reference: exact when the accumulation and the
// epilogue are integer-exact (integer accumulator, integral alpha and beta, act none or relu),
// else within 1 plus the float terms above.
#pragma once

#include "compiler/reference/reference_result.h"
#include "tcjit/op_spec.h"

#include <cstdint>
#include <string>

namespace tcjit {

struct ToleranceModel {
  DType output = DType::f32;
  bool integer_output = false;
  double output_unit_roundoff = 0;      // u_out: f16 2^-11, bf16 2^-8, f32 2^-24, f64 2^-53
  double accumulator_unit_roundoff = 0; // u_acc: of the acc dtype (fp8 inputs: 2^-13); 0: integer
  double epilogue_unit_roundoff = 0;    // u_epi: 2^-24 (f32 epilogue), 2^-53 (f64), 0 if exact
  double reduction_length = 1;          // K_eff
  double random_walk_factor = 4;        // c_rw
  double drift_factor = 1;              // c_drift
  double worst_case_factor = 0;         // c_wc: 0; set 1 for adversarially ordered data
  double epilogue_factor = 3;           // c_epi
  double abs_alpha = 1;                 // |alpha|
  double activation_lipschitz = 1;      // L
  double activation_eval_relative = 0;  // c_act * u_epi for transcendental activations, else 0
  double absolute_floor = 0;            // f16 2^-24, bf16/f32 2^-126, f64 2^-1022, integers 0
  double integer_allowance = 0;         // integer outputs: 0 (exact epilogue) or 1
  // acc=f16 (docs/numerics.md): the accumulator is rounded to f16 at most once per 8 products
  // and each rounding errs by at most u_step of the running magnitude; then the f32 terms above
  // (u_acc = 2^-24) cover the widened sums and split-K's reduction.
  double f16_accumulation_steps = 0; // n: ceil(K / 8); 0 without f16 accumulation
  double f16_step_unit_roundoff = 0; // u_step: 2^-10 + 2^-18
};

// The model for a concrete spec (throws std::invalid_argument like the references). `resolved`
// is the math mode after `auto` (tf32 or f32). Callers may loosen fields before comparing, e.g.
// activation_eval_relative for a kernel that uses tanh.approx.f32 (relative error 2^-10.987).
ToleranceModel tolerance_model(const OpSpec &spec, MathMode resolved);

// tol_i for one element (see the formula above). `activation_spread` >= 0 (act=custom, see
// custom_activation.h) replaces the term L * (...) before the activation.
double element_tolerance(const ToleranceModel &model, double value, double accumulator,
                         double magnitude, double activation_spread = -1);

// ((1 + u_step)^n - 1) m + n 2^-24 for acc=f16 (0 otherwise): the f16 accumulation bound.
double f16_accumulation_bound(const ToleranceModel &model, double magnitude);

// The part of tol_i before the activation, without L: how far a correct kernel's
// alpha * acc + beta * C + bias may lie from the reference's.
double pre_activation_tolerance(const ToleranceModel &model, double accumulator, double magnitude);

struct CompareReport {
  int64_t count = 0;      // elements compared
  int64_t mismatches = 0; // elements whose error exceeds their tolerance
  double max_abs_error = 0;
  double max_error_over_tolerance = 0; // infinity when an exact element differs or NaNs differ
  int64_t worst_index = -1;            // element with the largest error / tolerance
  // The worst element: its coordinates, the output's value there, the reference value it was
  // compared with (integers: rounded and saturated; floats: exact f64) and its tolerance.
  std::string worst_coordinates;
  double worst_got = 0, worst_expected = 0, worst_tolerance = 0;
  DType output = DType::f32;

  bool ok() const { return mismatches == 0; }
  // One line naming the worst element: index, coordinates, got, expected, tolerance.
  std::string summary() const;
};

// Compares a kernel's output buffer (the spec's output dtype and layout, ldc padding included)
// with the reference result of the same inputs. NaN matches NaN; an infinity matches the rounded
// reference when that is the same infinity, or when the reference lies within tolerance of the
// overflow threshold. Throws std::invalid_argument when `reference` does not have the output's
// element count.
CompareReport compare_with_reference(const OpSpec &spec, MathMode resolved,
                                     const void *actual_output, const ReferenceResult &reference);
CompareReport compare_with_reference(const OpSpec &spec, const ToleranceModel &model,
                                     const void *actual_output, const ReferenceResult &reference);

} // namespace tcjit
