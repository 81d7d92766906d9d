#include "tuner/heuristic.h"

#include "tuner/cost_model.h"
#include "tuner/ranking.h"
#include "tuner/search_space.h"

namespace tcjit::tuner {

std::vector<codegen::TileConfig> heuristic_configs(const OpSpec &spec, std::string_view arch,
                                                   bool tf32_off, size_t count) {
  const GpuModel &gpu = gpu_model_for_arch(arch);
  const SearchSpace space =
      enumerate_space(spec, arch, tf32_off, gpu, heuristic_space_options(spec, tf32_off));
  const std::vector<RankedConfig> ranked = rank_by_model(spec, space.legal, tf32_off, gpu);
  std::vector<codegen::TileConfig> out;
  for (size_t i = 0; i < ranked.size() && out.size() < count; ++i)
    out.push_back(ranked[i].config);
  return out;
}

} // namespace tcjit::tuner
