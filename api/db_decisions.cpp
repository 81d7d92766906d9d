#include "api/db_decisions.h"

#include "compiler/codegen/plan/tile_config.h"
#include "compiler/dsl/parser.h"
#include "engine/kernel_records.h"
#include "kernels_db/key_hash.h"
#include "tuner/decision.h"
#include "tuner/search_space.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace tcjit::api {
namespace {

namespace kdb = tcjit::kernels_db;

// The sizes a run of the problem's spec asks the decision for (tuner::chosen_configs).
std::optional<kdb::DispatchSizes> run_sizes(const kdb::ProblemRecord &problem) {
  const std::optional<OpSpec> spec = stored_spec(problem);
  if (!spec)
    return std::nullopt;
  const tuner::NominalSizes s = tuner::nominal_sizes(*spec);
  return kdb::DispatchSizes{s.m, s.n, s.k, s.batch};
}

} // namespace

std::optional<OpSpec> stored_spec(const kdb::ProblemRecord &problem) {
  const ParseResult parsed = parse_spec(problem.spec_text, "<database>");
  if (!parsed.ok() || parsed.entries.empty())
    return std::nullopt;
  return parsed.entries.front().spec;
}

std::string config_text(const std::string &config_json) {
  const auto config = engine::parse_config_json(config_json);
  return config ? codegen::to_string(*config) : config_json;
}

std::string bucket_text(const std::string &dims_json) {
  const nlohmann::json dims = nlohmann::json::parse(dims_json, nullptr, false);
  if (!dims.is_object())
    return dims_json;
  if (dims.empty())
    return "all sizes";
  std::string text;
  for (const auto &[name, range] : dims.items()) {
    if (!range.is_array() || range.size() != 2 || !range[0].is_number_integer() ||
        !range[1].is_number_integer())
      return dims_json;
    const auto lo = range[0].get<int64_t>(), hi = range[1].get<int64_t>();
    text += (text.empty() ? "" : " ") + name + "=" + std::to_string(lo) +
            (lo == hi ? std::string() : ".." + std::to_string(hi));
  }
  return text;
}

std::optional<DbDecision> decision_of(kdb::KernelsDb &db, const kdb::ProblemRecord &problem,
                                      const std::string &arch) {
  const auto decision = tuner::decide(db, problem.key_text, arch, run_sizes(problem));
  if (!decision)
    return std::nullopt;
  return DbDecision{arch,
                    decision->config_json,
                    config_text(decision->config_json),
                    decision->time_us,
                    std::string(kdb::to_string(decision->provenance)),
                    decision->tuner_version,
                    decision->from_dispatch_table ? "dispatch table" : "measured result",
                    static_cast<int64_t>(decision->buckets)};
}

std::vector<std::string> decided_configs(kdb::KernelsDb &db, const kdb::ProblemRecord &problem,
                                         const std::string &arch) {
  std::vector<std::string> configs;
  if (const auto table = db.decided_dispatch_table(problem.key_text, arch, tuner::decision_rules()))
    for (const auto &entry : table->entries)
      configs.push_back(entry.config_json);
  else if (const auto decision = decision_of(db, problem, arch))
    configs.push_back(decision->config_json);
  std::vector<std::string> unique;
  for (const std::string &config : configs)
    if (std::find(unique.begin(), unique.end(), config) == unique.end())
      unique.push_back(config);
  return unique;
}

bool kernel_stored(kdb::KernelsDb &db, const kdb::ProblemRecord &problem, const std::string &arch,
                   const std::string &config_json, const DbVersions &versions,
                   const BinarySet &removed) {
  std::string stored = config_json;
  // The runtime stores the config with its vector widths resolved for the spec.
  if (const auto config = engine::parse_config_json(config_json)) {
    const std::optional<OpSpec> spec = stored_spec(problem);
    stored = engine::config_json(spec ? codegen::resolve_vectors(*spec, *config) : *config);
  }
  kdb::BinaryQuery query;
  query.problem_key = problem.key_text;
  query.config_json = stored;
  query.arch = arch;
  query.toolkit_version = versions.toolkit_version;
  query.compiler_version = versions.compiler_version;
  query.rules = tuner::decision_rules();
  const kdb::BinaryLookup lookup = db.find_binary(query);
  return lookup.status == kdb::LookupStatus::hit &&
         !removed.contains({problem.key_text, arch, lookup.binary->key.config_json});
}

std::vector<DbKernelMissing> missing_kernels(kdb::KernelsDb &db, const DbVersions &versions,
                                             const BinarySet &removed,
                                             const std::set<std::string> &skipped) {
  std::vector<DbKernelMissing> missing;
  for (const kdb::ProblemSummary &summary : db.list({})) {
    const kdb::ProblemRecord &problem = summary.problem;
    if ((summary.results == 0 && summary.dispatch_tables == 0) ||
        skipped.contains(problem.key_text))
      continue; // no decision
    for (const std::string &config : decided_configs(db, problem, problem.arch))
      if (!kernel_stored(db, problem, problem.arch, config, versions, removed))
        missing.push_back({problem.key_text, kdb::format_key_hash(problem.key_hash), problem.arch,
                           config_text(config)});
  }
  return missing;
}

} // namespace tcjit::api
