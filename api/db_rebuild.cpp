// db.hpp's db_rebuild: the kernels of the decided configs compiled again for this build's toolkit
// and compiler (after an upgrade or `tcjit db prune --stale`), stored where the runtime finds them.
#include "api/db_rebuild.h"

#include "api/db_decisions.h"
#include "api/spec_check.h"
#include "compiler/codegen/plan/tile_config.h"
#include "compiler/spec/problem_key.h"
#include "engine/kernel_records.h"
#include "kernels_db/error.h"
#include "kernels_db/key_hash.h"
#include "tcjit/tools.hpp"
#include "tuner/chosen_configs.h"

#include <chrono>

namespace tcjit::api {
namespace {

namespace kdb = tcjit::kernels_db;

// The tf32 mode that gives the stored key from the stored spec (`math=auto` is resolved in the
// key), or nullopt when neither does (the spec text was stored by another tcjit).
std::optional<bool> tf32_mode_of(const OpSpec &spec, const kdb::ProblemRecord &problem) {
  if (!is_target_arch(problem.arch))
    return std::nullopt;
  try {
    throw_if_invalid(spec, "db rebuild"); // a handed-over database's spec text is checked
    for (const bool tf32_off : {false, true})
      if (make_problem_key(spec, problem.arch, tf32_off).text == problem.key_text)
        return tf32_off;
  } catch (const Error &) {
  }
  return std::nullopt;
}

// Compiles one decided config of `problem` and stores it (find_or_compile_kernel stores it).
DbRebuiltKernel rebuild_one(kdb::KernelsDb &db, const kdb::ProblemRecord &problem,
                            const OpSpec &spec, bool tf32_off, const std::string &config_json) {
  DbRebuiltKernel kernel;
  kernel.key = problem.key_text;
  kernel.hash = kdb::format_key_hash(problem.key_hash);
  kernel.arch = problem.arch;
  kernel.config = config_text(config_json);
  const auto config = engine::parse_config_json(config_json);
  if (!config) {
    kernel.status = "failed";
    kernel.message = "the decided config " + config_json + " is not one this build reads";
    return kernel;
  }
  engine::KernelRequest request;
  request.arch = problem.arch;
  request.tf32_off = tf32_off;
  request.config = codegen::resolve_vectors(spec, *config); // as a run asks for it
  request.compile_on_miss = true;
  const auto start = std::chrono::steady_clock::now();
  engine::ServedKernel served;
  try {
    served = tuner::serve_kernel(spec, {problem.key_text, problem.key_hash}, request, &db);
  } catch (const std::runtime_error &e) { // kernels_db::DbError goes to the caller
    if (dynamic_cast<const kdb::DbError *>(&e))
      throw;
    served.errors.push_back(e.what());
  }
  kernel.compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!served.ok()) {
    kernel.status = "failed";
    for (const std::string &error : served.errors)
      kernel.message += (kernel.message.empty() ? "" : "; ") + error;
  } else {
    kernel.status = served.origin == engine::KernelOrigin::database ? "present" : "compiled";
  }
  return kernel;
}

} // namespace

DbRebuildReport rebuild_decided_kernels(kdb::KernelsDb &db, const DbRebuildRequest &request) {
  kdb::ListFilter filter;
  if (!request.arch.empty())
    filter.arch = request.arch;
  DbRebuildReport report;
  for (const kdb::ProblemSummary &summary : db.list(filter)) {
    const kdb::ProblemRecord &problem = summary.problem;
    if (summary.results == 0 && summary.dispatch_tables == 0)
      continue; // no decision
    const std::optional<OpSpec> spec = stored_spec(problem);
    const std::optional<bool> tf32_off = spec ? tf32_mode_of(*spec, problem) : std::nullopt;
    for (const std::string &config : decided_configs(db, problem, problem.arch)) {
      DbRebuiltKernel kernel;
      kernel.key = problem.key_text;
      kernel.hash = kdb::format_key_hash(problem.key_hash);
      kernel.arch = problem.arch;
      kernel.config = config_text(config);
      if (kernel_stored(db, problem, problem.arch, config, current_db_versions())) {
        kernel.status = "present";
      } else if (!tf32_off) {
        kernel.status = "failed";
        kernel.message = "the stored spec text does not give the problem's key (a custom "
                         "activation is stored by its digest, or another tcjit stored it): "
                         "`tcjit run` the spec to compile it";
      } else if (request.dry_run) {
        kernel.status = "to compile";
      } else {
        kernel = rebuild_one(db, problem, *spec, *tf32_off, config);
      }
      ++(kernel.status == "failed"    ? report.failed
         : kernel.status == "present" ? report.present
                                      : report.compiled);
      report.kernels.push_back(std::move(kernel));
    }
  }
  return report;
}

} // namespace tcjit::api
