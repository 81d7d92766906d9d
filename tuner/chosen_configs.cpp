#include "tuner/chosen_configs.h"

#include "compiler/spec/shape.h"
#include "engine/kernel_records.h"
#include "kernels_db/dispatch.h"
#include "tuner/decision.h"
#include "tuner/heuristic.h"
#include "tuner/search_space.h"
#include "tuner/size_family.h"

#include "compiler/codegen/plan/kernel_plan.h"

#include <algorithm>
#include <limits>

namespace tcjit::tuner {

namespace {

// "m=1..2048 n=512 k=512": the sizes of a family's problem, for a note.
std::string family_member_text(std::string_view key_text) {
  std::string out;
  for (const auto &[name, s] : family_sizes(key_text))
    out += (out.empty() ? "" : " ") + name + "=" +
           (s.lo == s.hi ? std::to_string(s.lo)
            : s.hi == std::numeric_limits<int64_t>::max()
                ? std::string("?")
                : std::to_string(s.lo) + ".." + std::to_string(s.hi));
  return out;
}

} // namespace

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
    // What a finished tune decided for the problem (its dispatch table: one bucket holding every
    // size for a concrete problem; size buckets for a range; the entry of the spec's nominal
    // sizes), else the fastest config measured on a GPU (any tuner, e.g. a tune that was stopped),
    // else the dispatch table of its kernel family (size_family.h: the rules of docs/tuner.md).
    // Implausible decisions are ignored (decision.h; `tcjit db check` reports them).
    const NominalSizes s = nominal_sizes(spec);
    if (const auto served = serving_decision(*db, key.text, request.arch, {s.m, s.n, s.k, s.batch}))
      if (const auto c = engine::parse_config_json(served->decision.config_json)) {
        const tuner::Decision &decision = served->decision;
        add(*c);
        if (!out.empty()) {
          note = "tuned (" + std::string(kernels_db::to_string(decision.provenance)) +
                 (decision.buckets > 1
                      ? ", dispatch table of " + std::to_string(decision.buckets) + " size buckets"
                      : std::string()) +
                 (served->family ? ", of " + family_member_text(served->problem_key) : "") + ")";
        }
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
