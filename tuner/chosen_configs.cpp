#include "tuner/chosen_configs.h"

#include "compiler/spec/shape.h"
#include "engine/kernel_records.h"
#include "kernels_db/dispatch.h"
#include "tuner/decision.h"
#include "tuner/heuristic.h"
#include "tuner/search_space.h"

#include <algorithm>

namespace tcjit::tuner {

std::vector<codegen::TileConfig> chosen_configs(const OpSpec &spec, const ProblemKey &key,
                                                const engine::KernelRequest &request,
                                                kernels_db::KernelsDb *db, std::string &note) {
  std::vector<codegen::TileConfig> out;
  auto add = [&](const codegen::TileConfig &c) {
    const codegen::TileConfig r = codegen::resolve_vectors(spec, c);
    if (std::find(out.begin(), out.end(), r) == out.end() &&
        codegen::validate_tile_config(spec, r, request.arch, request.tf32_off).empty())
      out.push_back(r);
  };
  if (db) {
    // What a finished tune decided (its dispatch table: one bucket holding every size for a
    // concrete problem; size buckets for a range; the entry of the spec's nominal sizes), else the
    // fastest config measured on a GPU (any tuner, e.g. a tune that was stopped). Implausible
    // decisions are ignored (decision.h; `tcjit db check` reports them).
    const NominalSizes s = nominal_sizes(spec);
    if (const auto decision = decide(*db, key.text, request.arch, {{s.m, s.n, s.k, s.batch}}))
      if (const auto c = engine::parse_config_json(decision->config_json)) {
        add(*c);
        if (!out.empty())
          note = "tuned (" + std::string(kernels_db::to_string(decision->provenance)) +
                 (decision->buckets > 1 ? ", dispatch table of " +
                                              std::to_string(decision->buckets) + " size buckets)"
                                        : std::string(")"));
      }
  }
  if (db && out.empty()) {
    // Else the kernel built last for the problem (by the runtime or `tcjit run`), to reuse it.
    const auto found =
        db->find_binary({key.text, std::nullopt, request.arch, engine::toolkit_version(),
                         engine::compiler_version(request.backend), decision_rules()});
    if (found.status == kernels_db::LookupStatus::hit)
      if (const auto c = engine::parse_config_json(found.binary->key.config_json))
        add(*c);
  }
  for (const codegen::TileConfig &c : heuristic_configs(spec, request.arch, request.tf32_off))
    add(c);
  // The code generator's own default and its fallbacks: the last resort when the model's choices
  // all spill.
  for (const codegen::TileConfig &c :
       codegen::default_tile_configs(spec, request.arch, request.tf32_off))
    add(c);
  return out;
}

engine::ServedKernel serve_kernel(const OpSpec &spec, const ProblemKey &key,
                                  engine::KernelRequest request, kernels_db::KernelsDb *db) {
  if (!request.config && request.chosen.empty())
    request.chosen = chosen_configs(spec, key, request, db, request.chosen_note);
  return engine::find_or_compile_kernel(spec, key, request, db);
}

} // namespace tcjit::tuner
