// Measurement: one interface, three implementations.
//   cuda   (measure_cuda.h)   CUDA events around repeated launches on a real GPU
//   model  (measure_model.h)  the cost model, fed by ptxas and the emulator's probe of one CTA
//   replay (measure_replay.h) results read from a JSON Lines file (`tcjit db export`)
// A measurement is stored as a kernels_db result with its provenance (measured, predicted), so a
// prediction is never shown as a measurement.
#pragma once

#include "compiler/codegen/pipeline.h"

#include "compiler/codegen/plan/tile_config.h"
#include "compiler/spec/problem_key.h"
#include "kernels_db/records.h"
#include "tcjit/op_spec.h"
#include "tuner/candidate.h"

#include <optional>
#include <string>

namespace tcjit::tuner {

// The problem being tuned.
struct TuneTask {
  OpSpec spec;    // valid GEMM; sizes bound (or symbolic: the model uses nominal sizes)
  ProblemKey key; // make_problem_key(spec, arch, tf32_off)
  std::string arch;
  bool tf32_off = false;
  // Caps on the vector widths, in elements (0: none). A size range's representative sizes take
  // what every size of the range allows (k=1..4096 is aligned to 1 element, k=4096 to 8).
  int max_vec_a = 0, max_vec_b = 0;
  // Which backend builds the candidates (engine/kernel_compile.h).
  codegen::Backend backend = codegen::Backend::llvm;
};

struct Measurement {
  kernels_db::ResultStatus status = kernels_db::ResultStatus::ok;
  kernels_db::Provenance provenance;        // measured (device, driver) or predicted (model)
  std::optional<kernels_db::Timing> timing; // microseconds; set when ok
  std::optional<double> tflops;
  std::string message; // why failed, or notes ("bound: tensor", "replayed from FILE")
  double seconds() const { return timing ? timing->median_us * 1e-6 : 0; }
};

class Measurer {
public:
  virtual ~Measurer() = default;
  virtual std::string name() const = 0; // "cuda", "model", "replay"
  // Whether measure() needs the candidate built (compiled and ptxas'd); replay does not.
  virtual bool needs_build() const = 0;
  // Measures `config` for `task`; `built` is the built candidate when needs_build() (usable).
  // Called from one thread at a time.
  virtual Measurement measure(const TuneTask &task, const codegen::TileConfig &config,
                              const BuiltCandidate *built) = 0;
};

} // namespace tcjit::tuner
