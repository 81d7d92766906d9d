// The search space of one GEMM on one arch: every TileConfig worth compiling, and every one left
// out with the rule that excludes it. Constraints prune before anything is compiled (shared
// memory per block, threads, accumulator registers, divisibility, alignment, occupancy on the
// arch's GPU model, tiles far larger than the problem); what is known only after ptxas (spills,
// the real register count) is judged when a candidate is built (tuner/candidate.h).
//
// Configs are values: a result is keyed by the config's canonical JSON (kernel_records.h), so a
// space that grows never invalidates what was measured for the configs it already had.
#pragma once

#include "compiler/codegen/plan/tile_config.h"
#include "tcjit/op_spec.h"
#include "tuner/perf_model.h"

#include <string>
#include <string_view>
#include <vector>

namespace tcjit::tuner {

struct PrunedConfig {
  codegen::TileConfig config;
  std::string rule;   // short name of the rule: "shared_memory", "occupancy", "oversized_tile"...
  std::string reason; // the sentence, with the numbers
};

struct SearchSpace {
  std::vector<codegen::TileConfig> legal; // in enumeration order; vec_a/vec_b resolved
  std::vector<PrunedConfig> pruned;
  // pruned counted by rule, for a one-line summary ("1234 shared_memory, 56 occupancy").
  std::string pruned_summary() const;
};

// Which values each TileConfig field takes. The defaults are the full space the tuner searches;
// `heuristic_space_options()` is the small one the runtime's default chooser ranks on every miss.
struct SpaceOptions {
  std::vector<int> cta_sizes = {16, 32, 64, 128, 256}; // bm and bn
  std::vector<int> k_bytes = {32, 64, 128};            // bk * element size
  std::vector<int> warp_sizes = {16, 32, 64, 128};     // wm and wn
  std::vector<int> warp_counts = {1, 2, 4, 8};         // warps per CTA
  std::vector<int> stages = {2, 3, 4, 5};              //
  std::vector<int> split_k = {1, 2, 4, 8, 16};         // only when K is fixed and long enough
  std::vector<int> raster_groups = {1, 8};             // 8 only when the grid has > 8 CTA rows
  bool narrower_vectors = true;     // every legal vector width, not only the widest
  bool channel_padding = true;      // convolutions: also the channel-padded variant (pad_c)
  int max_vec_a = 0, max_vec_b = 0; // caps on the widths, in elements (0: the alignment's)
};
SpaceOptions heuristic_space_options(const OpSpec &spec, bool tf32_off);

// Enumerates the space of `spec` (a valid GEMM the code generator supports; sizes may be
// symbolic: size-dependent rules then use nominal_sizes()) on `arch`, whose GPU is `gpu`.
SearchSpace enumerate_space(const OpSpec &spec, std::string_view arch, bool tf32_off,
                            const GpuModel &gpu, const SpaceOptions &options = {});

// The rules one config breaks for the spec, beyond codegen::validate_tile_config (which is
// checked first): empty when legal. Used by enumerate_space and to explain a user's config.
std::vector<PrunedConfig> prune_reasons(const OpSpec &spec, const codegen::TileConfig &config,
                                        std::string_view arch, bool tf32_off, const GpuModel &gpu);

// Sizes for a spec with symbolic or ranged dims, for the model: a fixed dim is itself, a range
// lo..hi the geometric mean of its ends, `?` 1024. batch: its value, else 1.
struct NominalSizes {
  int64_t m = 0, n = 0, k = 0, batch = 1;
};
NominalSizes nominal_sizes(const OpSpec &spec);

} // namespace tcjit::tuner
