// resolve_op (include/tcjit/tools.hpp) and `tcjit resolve`: what an application preparing a spec
// gets — the configs the runtime's lookup takes (tuner/chosen_configs.h, tuner/size_family.h: the
// very functions Runtime::prepare calls), where each was decided, its time, its kernel identity
// and whether its binary is stored. Read-only: the database is opened read-only and nothing is
// compiled.
#include "tcjit/tools.hpp"

#include "api/calibrated_model.h"
#include "api/spec_check.h"
#include "compiler/codegen/plan/kernel_plan.h"
#include "compiler/codegen/plan/tile_config.h"
#include "compiler/spec/printer.h"
#include "compiler/spec/problem_key.h"
#include "compiler/spec/shape.h"
#include "compiler/target/arch.h"
#include "engine/kernel_records.h"
#include "kernels_db/default_path.h"
#include "kernels_db/kernels_db.h"
#include "tuner/chosen_configs.h"
#include "tuner/cost_model.h"
#include "tuner/heuristic.h"
#include "tuner/search_space.h"
#include "tuner/size_family.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <optional>

namespace tcjit {

namespace {

// The database opened read-only; nullopt when the file does not exist.
std::optional<kernels_db::KernelsDb> open_read_only(const std::string &path) {
  kernels_db::OpenOptions options;
  options.read_only = true;
  options.create_if_missing = false;
  try {
    return path.empty() ? kernels_db::KernelsDb::open_default(options)
                        : kernels_db::KernelsDb::open(path, options);
  } catch (const kernels_db::DbError &e) {
    if (e.kind() == kernels_db::DbErrorKind::not_found)
      return std::nullopt;
    throw Error(e.kind() == kernels_db::DbErrorKind::invalid_argument ? ErrorCode::invalid_argument
                                                                      : ErrorCode::database,
                e.what(), "resolve", "check --db PATH / $TCJIT_DB");
  }
}

// "m=17..64 n=4096" from a bucket's {"m":[17,64],"n":[4096,4096]}; "all" for {}.
std::string bucket_text(const std::string &dims_json) {
  const kernels_db::DispatchBucket b = kernels_db::parse_dispatch_bucket(dims_json);
  std::string out;
  for (size_t d = 0; d < kernels_db::kDispatchDimensions.size(); ++d) {
    if (!b.named[d])
      continue;
    out += (out.empty() ? "" : " ") + std::string(kernels_db::kDispatchDimensions[d]) + "=" +
           std::to_string(b.lo[d]) +
           (b.hi[d] != b.lo[d] ? ".." + std::to_string(b.hi[d]) : std::string());
  }
  return out.empty() ? "all" : out;
}

struct Lookup {
  const OpSpec &spec;
  const ProblemKey &key;
  const engine::KernelRequest &request;
  kernels_db::KernelsDb *db;
  const tuner::GpuModel &model; // the arch's, with the database's calibration (calibrated_model.h)
};

// Whether the binary of `config` is in the database: the one of its kernel identity (stored once
// for every size), else the one linked to the spec's problem — as find_or_compile_kernel looks
// it up.
void find_binary(const Lookup &l, const codegen::TileConfig &config, ResolvedKernel &out) {
  if (!l.db)
    return;
  const auto found = l.db->find_binary({l.key.text,
                                        engine::config_json(config),
                                        l.request.arch,
                                        engine::toolkit_version(),
                                        engine::compiler_version(l.request.backend),
                                        {},
                                        out.identity});
  if (found.status == kernels_db::LookupStatus::hit) {
    out.stored = true;
    out.stored_foreign = !found.binary->trusted;
  }
}

ResolvedKernel resolved(const Lookup &l, const codegen::TileConfig &config) {
  ResolvedKernel k;
  k.config = codegen::to_string(config);
  k.identity = codegen::kernel_identity(
      codegen::plan_kernel(l.spec, config, l.request.arch, l.request.tf32_off));
  return k;
}

// The spec's kernel: the first config chosen_configs gives (what prepare compiles or loads).
ResolvedKernel spec_kernel(const Lookup &l, std::string sizes) {
  std::string note;
  const std::vector<codegen::TileConfig> chosen =
      tuner::chosen_configs(l.spec, l.key, l.request, l.db, note);
  if (chosen.empty())
    throw Error(ErrorCode::bad_spec, "no tile config compiles " + print_spec(l.spec), "resolve",
                "see `tcjit explain` for the rules the spec breaks");
  ResolvedKernel k = resolved(l, chosen.front());
  k.sizes = std::move(sizes);
  std::optional<tuner::ServingDecision> decision;
  if (l.db) {
    const tuner::NominalSizes s = tuner::nominal_sizes(l.spec);
    decision = tuner::serving_decision(*l.db, l.key.text, l.request.arch, {s.m, s.n, s.k, s.batch});
  }
  if (decision && !note.empty()) { // chosen_configs took the decision
    k.origin = "tuned " + std::string(kernels_db::to_string(decision->decision.provenance));
    k.decided_for = decision->problem_key;
    k.time_us = decision->decision.time_us;
    k.time_predicted = decision->decision.provenance != kernels_db::ProvenanceKind::measured;
  } else {
    const auto c = tuner::heuristic_configs(l.spec, l.request.arch, l.request.tf32_off);
    k.origin = !c.empty() && c.front() == chosen.front() ? "heuristic" : "stored";
    k.time_us =
        tuner::predict_config(l.model, l.spec, chosen.front(), l.request.tf32_off).seconds * 1e6;
  }
  find_binary(l, chosen.front(), k);
  return k;
}

std::string kernel_line(const ResolvedKernel &k) {
  char time[64] = "no time";
  if (k.time_us)
    std::snprintf(time, sizeof time, "%.3g us %s", *k.time_us,
                  k.time_predicted ? "predicted" : "measured");
  std::string line = "  " + k.sizes + ": " + k.config + "\n    " + k.origin;
  if (!k.decided_for.empty())
    line += " (decided for " + k.decided_for + ")";
  line += ", " + std::string(time) + "\n    kernel " + k.identity + "\n    " +
          (k.stored ? (k.stored_foreign ? "binary stored (not by this user's tcjit: rebuilt at "
                                          "first use)"
                                        : "binary stored")
                    : "binary to compile at first use") +
          "\n";
  return line;
}

nlohmann::json kernel_json(const ResolvedKernel &k) {
  return {{"sizes", k.sizes},
          {"config", k.config},
          {"origin", k.origin},
          {"decided_for",
           k.decided_for.empty() ? nlohmann::json(nullptr) : nlohmann::json(k.decided_for)},
          {"time_us", k.time_us ? nlohmann::json(*k.time_us) : nlohmann::json(nullptr)},
          {"time_predicted", k.time_predicted},
          {"identity", k.identity},
          {"binary", k.stored ? (k.stored_foreign ? "stored foreign" : "stored") : "to compile"}};
}

} // namespace

Resolution resolve_op(const OpSpec &input, const ResolveRequest &request) {
  if (!find_arch(request.arch))
    throw Error(ErrorCode::invalid_argument, "unknown arch '" + request.arch + "'", "resolve",
                "use one of " + target_arch_names());
  const auto backend = codegen::parse_backend(request.backend);
  if (!backend)
    throw Error(ErrorCode::invalid_argument, "unknown backend '" + request.backend + "'", "resolve",
                "use \"llvm\" or \"nvrtc\"");
  api::throw_if_invalid(input, "resolve");
  const OpSpec spec = input;
  engine::KernelRequest kernel_request;
  kernel_request.arch = request.arch;
  kernel_request.tf32_off = tf32_disabled_by_environment();
  kernel_request.backend = *backend;
  kernel_request.compile_on_miss = false;
  const ProblemKey key = make_problem_key(spec, request.arch, kernel_request.tf32_off);
  std::optional<kernels_db::KernelsDb> db = open_read_only(request.db_path);

  Resolution out;
  out.spec_text = print_spec(spec);
  out.key_text = key.text;
  out.key_hash = key.hash_hex();
  out.arch = request.arch;
  out.database = db ? db->path() : "";
  const tuner::GpuModel model = db ? api::calibrated_gpu_model(*db, request.arch, "", "resolve")
                                   : tuner::gpu_model_for_arch(request.arch);
  out.calibration = model.calibration;
  const Lookup l{spec, key, kernel_request, db ? &*db : nullptr, model};
  try {
    std::optional<tuner::ServingTable> table;
    if (db && !is_concrete(spec)) // as Runtime::prepare's dispatch lookup
      table = tuner::serving_dispatch_table(*db, key.text, request.arch);
    out.kernels.push_back(spec_kernel(l, table ? "other" : "all"));
    if (table)
      for (const kernels_db::DispatchEntry &entry : table->table.entries) {
        const auto config = engine::parse_config_json(entry.config_json);
        if (!config)
          continue;
        ResolvedKernel k = resolved(l, codegen::resolve_vectors(spec, *config));
        k.sizes = bucket_text(entry.dims_json);
        k.origin = "tuned " + std::string(kernels_db::to_string(entry.provenance));
        k.decided_for = table->table.problem_key;
        k.time_us = entry.time_us;
        k.time_predicted = entry.provenance != kernels_db::ProvenanceKind::measured;
        find_binary(l, codegen::resolve_vectors(spec, *config), k);
        out.kernels.push_back(std::move(k));
      }
  } catch (const kernels_db::DbError &e) {
    throw Error(ErrorCode::database, e.what(), "resolve", "check the database (`tcjit db check`)");
  }

  out.text = "spec:     " + out.spec_text + "\nkey:      " + out.key_hash + " " + out.arch +
             "\ndatabase: " + (db ? out.database : std::string("none (every kernel compiles)")) +
             "\nmodel:    " +
             (out.calibration.empty()
                  ? std::string("uncalibrated (tcjit calibrate fits it to measured results)")
                  : out.calibration) +
             "\nkernels:\n";
  nlohmann::json kernels = nlohmann::json::array();
  for (const ResolvedKernel &k : out.kernels) {
    out.text += kernel_line(k);
    kernels.push_back(kernel_json(k));
  }
  nlohmann::json j = {{"spec", out.spec_text},
                      {"key", out.key_text},
                      {"hash", out.key_hash},
                      {"arch", out.arch},
                      {"database", db ? nlohmann::json(out.database) : nlohmann::json(nullptr)},
                      {"calibration", out.calibration},
                      {"kernels", kernels}};
  out.json = j.dump();
  return out;
}

} // namespace tcjit
