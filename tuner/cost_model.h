// The cost model of a tcjit config: the performance model (perf_model.h) fed with what is known of
// a candidate. Before compiling, the features are estimated from the spec and the config alone
// (registers from the accumulators and fragments, main-loop instructions per mma from the
// instruction mix the generator emits); after compiling, ptxas's resources and the emulator's
// counters of one CTA (tuner/cta_probe.h) replace the estimates. Every figure is a prediction.
#pragma once

#include "compiler/codegen/plan/tile_config.h"
#include "tcjit/op_spec.h"
#include "tuner/perf_model.h"

#include <optional>
#include <string>
#include <string_view>

namespace tcjit::tuner {

// The GPU model for an arch tcjit targets: sm_80 A100, sm_86 RTX A6000, sm_89 L40S, sm_90 H100
// (docs/perf_model.md). Throws std::invalid_argument for an unknown arch.
const GpuModel &gpu_model_for_arch(std::string_view arch);

// The model's name and version, stored as a predicted result's provenance.
std::string cost_model_version();

// What compiling and probing a candidate found out. Unknown fields stay < 0.
struct CandidateFacts {
  int registers = -1;   // ptxas, per thread (main kernel)
  int spill_bytes = -1; // ptxas: stores + loads
  int stack_bytes = -1; // ptxas
  int static_shared_bytes = 0;
  double instructions_per_mma = -1;      // emulator: main-loop warp-instructions per mma
  double shared_wavefronts_per_mma = -1; // emulator: main-loop shared-memory wavefronts per mma
  double bank_conflicts_per_mma = -1;    // emulator: of those, the wavefronts beyond the ideal
  double global_load_efficiency = -1;    // emulator: main-loop useful bytes / sector bytes
};

// The features of `config` for `spec` (sizes need not be bound), from `facts` where known and
// estimates elsewhere.
KernelFeatures kernel_features(const OpSpec &spec, const codegen::TileConfig &config, bool tf32_off,
                               const CandidateFacts &facts = {});

// The same from the spec's facts (codegen::spec_facts with the config's pad_c), derived once for
// many configs.
KernelFeatures kernel_features(const codegen::SpecFacts &spec_facts,
                               const codegen::TileConfig &config, const CandidateFacts &facts = {});

// The estimates used before compiling (of a spec, or of its facts).
int estimated_registers(const OpSpec &spec, const codegen::TileConfig &config, bool tf32_off);
int estimated_registers(const codegen::SpecFacts &facts, const codegen::TileConfig &config);
double estimated_instructions_per_mma(const OpSpec &spec, const codegen::TileConfig &config,
                                      bool tf32_off);
double estimated_instructions_per_mma(const codegen::SpecFacts &facts,
                                      const codegen::TileConfig &config);

// The problem of a spec with sizes bound (or nominal_sizes() for symbolic ones).
Problem model_problem(const OpSpec &spec);

// The time of channel padding's copies of x and the filter (TileConfig::pad_c; 0 without it):
// their reads and writes at DRAM bandwidth, and two launches.
double channel_padding_seconds(const GpuModel &gpu, const OpSpec &spec,
                               const codegen::TileConfig &config);

// The prediction for `config` running `spec` on `gpu` (with channel padding: the padded problem
// plus channel_padding_seconds; TFLOP/s of the problem as given).
// The math unit a spec's kernel runs on (its mma form's, or the CUDA cores' FMA for math=f32
// and depthwise convolutions): what its peak is.
MathKind math_kind_of(const OpSpec &spec, bool tf32_off);

Prediction predict_config(const GpuModel &gpu, const OpSpec &spec,
                          const codegen::TileConfig &config, bool tf32_off,
                          const CandidateFacts &facts = {});
// The same with the spec's part derived once for many configs: `computed` is
// codegen::spec_facts of the spec the kernel computes (a convolution with config.pad_c:
// effective_spec) and `problem` its model_problem.
Prediction predict_config(const GpuModel &gpu, const OpSpec &spec,
                          const codegen::SpecFacts &computed, const Problem &problem,
                          const codegen::TileConfig &config, const CandidateFacts &facts = {});

} // namespace tcjit::tuner
