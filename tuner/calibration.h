// Calibration of the cost model to one GPU: the model's per-GPU constants fitted to measured
// kernel times, and the model with them applied. The fit is a pure function of the measurements
// and the uncalibrated model (docs/perf_model.md, "Calibration"):
//   - what is fitted: the achieved DRAM bandwidth, the sustained tensor-core (or FMA) efficiency of
//     each math unit the measurements use, the fixed per-wave cost (pipeline fill, epilogue drain)
//     and the cost of a dependent launch (split-K's reduction, channel padding's copies);
//   - how: coordinate descent on the sum of squared log errors, log(predicted / measured), each
//     constant searched in log space within its range (a grid, then golden-section refinement),
//     sweeps until no sweep improves the error by more than 1e-9;
//   - a constant that no measurement depends on (changing it by 20% moves no prediction by 0.5%)
//     keeps its uncalibrated value and is reported as not determined.
#pragma once

#include "compiler/codegen/plan/tile_config.h"
#include "tcjit/op_spec.h"
#include "tuner/perf_model.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tcjit::tuner {

// One measured kernel: a spec with its sizes bound, the config that ran, the median time.
struct CalibrationSample {
  OpSpec spec;
  codegen::TileConfig config;
  bool tf32_off = false;
  double seconds = 0;
};

// The constants a calibration sets (0 or an absent efficiency: not determined, the model's own).
struct CalibratedConstants {
  double dram_bytes_per_s = 0;
  double prologue_cycles = 0;
  double launch_seconds = 0;
  std::array<std::optional<double>, math_unit_count> mma_efficiency{}; // index: MathKind
};

// A calibration as stored: the constants and where they come from.
struct Calibration {
  std::string gpu;  // the measured device's name, e.g. "NVIDIA H100 80GB HBM3"
  std::string arch; // the arch whose model it calibrates, e.g. "sm_90"
  CalibratedConstants constants;
  int64_t results = 0;        // measurements fitted
  double residual_before = 0; // rms of log(predicted / measured) with the model's constants
  double residual = 0;        // the same with the calibrated ones
  int64_t created_ms = 0;     // when (Unix ms)
  std::string tcjit_version;  // the tcjit that fitted it
  std::string model_version;  // cost_model_version() it was fitted for
};

// The result of a fit: the calibration, or why there is none.
struct CalibrationFit {
  bool ok = false;
  std::string why_not;           // when !ok: what is wrong with the measurements, and the fix
  CalibratedConstants constants; // determined constants only
  std::vector<std::string> kept; // the constants no measurement determines (their names)
  double residual_before = 0;
  double residual = 0;
};

// The fewest measurements a fit accepts.
inline constexpr size_t kMinCalibrationSamples = 4;

// Fits `base`'s constants to `samples` (all of one GPU). Refuses (ok = false, why_not) fewer than
// kMinCalibrationSamples samples, a time that is not finite and positive, a config the model
// cannot launch, fewer than two distinct (spec, config) pairs, and measurements on which no
// constant depends.
CalibrationFit fit_calibration(const GpuModel &base, const std::vector<CalibrationSample> &samples);

// `base` with the calibration's determined constants; its `calibration` names the calibration.
GpuModel apply_calibration(const GpuModel &base, const Calibration &calibration);

// What is wrong with a calibration read from a file or a database (untrusted): every value finite
// and in its range, names present and printable. Empty when it is usable.
std::vector<std::string> calibration_problems(const Calibration &calibration);

// "calibrated on <gpu> (<n> results, <YYYY-MM-DD>)".
std::string calibration_label(const Calibration &calibration);

// The model's predicted time of a sample with `gpu`'s constants (what the fit compares).
double predicted_seconds(const GpuModel &gpu, const CalibrationSample &sample);

} // namespace tcjit::tuner
