// include/tcjit/db.hpp: the kernel database's operations (`tcjit db`) over kernels_db, with its
// records given as plain data and its errors as tcjit::Error.
#include "tcjit/db.hpp"

#include "api/db_decisions.h"
#include "api/db_rebuild.h"
#include "api/spec_check.h"
#include "compiler/codegen/plan/tile_config.h"
#include "compiler/spec/problem_key.h"
#include "engine/kernel_records.h"
#include "kernels_db/clock.h"
#include "kernels_db/current_versions.h"
#include "kernels_db/default_path.h"
#include "kernels_db/error.h"
#include "kernels_db/kernels_db.h"
#include "kernels_db/key_hash.h"
#include "kernels_db/record_json.h"
#include "tcjit/tools.hpp"
#include "tuner/decision.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <set>
#include <string_view>
#include <utility>

namespace tcjit {
namespace {

namespace kdb = tcjit::kernels_db;

// A database failure as the API's Error: bad input (a --where that does not parse, a malformed
// import) is the caller's, the rest the database's.
ErrorCode error_code(kdb::DbErrorKind kind) {
  switch (kind) {
  case kdb::DbErrorKind::invalid_argument: return ErrorCode::invalid_argument;
  case kdb::DbErrorKind::not_found: return ErrorCode::not_found;
  case kdb::DbErrorKind::sqlite:
  case kdb::DbErrorKind::io:
  case kdb::DbErrorKind::busy:
  case kdb::DbErrorKind::corrupt:
  case kdb::DbErrorKind::newer_schema: return ErrorCode::database;
  }
  return ErrorCode::database;
}

// Runs `body`, turning a kernels_db::DbError into Error at `where` (its message kept whole).
template <class Body> auto translating_db_errors(const char *where, Body &&body) {
  try {
    return body();
  } catch (const kdb::DbError &e) {
    throw Error(error_code(e.kind()), e.what(), where, "");
  }
}

enum class Access { read_only, write, create };

// Read-only operations open the file read-only: they never create tables, migrate or change the
// journal mode, and work on read-only files and directories (see docs/kernels_db.md).
kdb::KernelsDb open_db(const std::string &path, Access access) {
  kdb::OpenOptions options;
  options.create_if_missing = access == Access::create;
  options.read_only = access == Access::read_only;
  return path.empty() ? kdb::KernelsDb::open_default(options) : kdb::KernelsDb::open(path, options);
}

DbVersions versions_or_current(const std::optional<DbVersions> &versions) {
  return versions ? *versions : current_db_versions();
}

DbProblem problem_of(const kdb::ProblemRecord &record) {
  DbProblem problem;
  problem.key_text = record.key_text;
  problem.key_hash = kdb::format_key_hash(record.key_hash);
  problem.op = record.op;
  problem.dtype = record.dtype;
  problem.arch = record.arch;
  problem.shape_json = record.shape_json;
  problem.spec_text = record.spec_text;
  problem.created_ms = record.created_ms;
  problem.json = kdb::dump_json(kdb::problem_to_json(record));
  return problem;
}

DbResult result_of(const kdb::ResultRecord &record) {
  DbResult result;
  result.status = std::string(kdb::to_string(record.status));
  result.arch = record.arch;
  if (record.timing)
    result.timing = DbTiming{record.timing->median_us, record.timing->min_us, record.timing->max_us,
                             record.timing->stddev_us};
  result.tflops = record.tflops;
  result.provenance = std::string(kdb::to_string(record.provenance.kind));
  result.device = record.provenance.device;
  result.driver = record.provenance.driver;
  result.clock_mhz = record.provenance.clock_mhz;
  result.model = record.provenance.model;
  result.tuner_version = record.tuner_version;
  result.measured_ms = record.measured_ms;
  result.config_json = record.config_json;
  result.config = api::config_text(record.config_json);
  result.message = record.message;
  result.implausible =
      kdb::implausible_result(record, tuner::decision_rules()).value_or(std::string());
  result.json = kdb::dump_json(kdb::result_to_json(record));
  return result;
}

bool is_stale(const kdb::BinaryKey &key, const DbVersions &current) {
  return key.toolkit_version != current.toolkit_version ||
         !kdb::is_current_compiler_version(key.compiler_version, current.compiler_version);
}

DbBinary binary_of(const kdb::BinaryInfo &info, const DbVersions &current) {
  DbBinary binary;
  binary.arch = info.key.arch;
  binary.toolkit_version = info.key.toolkit_version;
  binary.compiler_version = info.key.compiler_version;
  binary.config_json = info.key.config_json;
  binary.config = api::config_text(info.key.config_json);
  binary.stale = is_stale(info.key, current);
  binary.resources_json = info.resources_json;
  binary.cubin_bytes = info.cubin_bytes;
  binary.ptx_bytes = info.ptx_bytes;
  binary.cubin_sha256 = info.cubin_sha256;
  binary.compile_options = info.compile_options;
  binary.compile_ms = info.compile_ms;
  binary.created_ms = info.created_ms;
  nlohmann::json json = kdb::binary_info_to_json(info);
  json["stale"] = binary.stale;
  binary.json = kdb::dump_json(json);
  return binary;
}

DbDispatchTable dispatch_table_of(const kdb::DispatchTable &record) {
  DbDispatchTable table;
  table.arch = record.arch;
  table.tuner_version = record.tuner_version;
  table.created_ms = record.created_ms;
  for (const auto &entry : record.entries)
    table.entries.push_back({entry.dims_json, api::bucket_text(entry.dims_json), entry.config_json,
                             api::config_text(entry.config_json), entry.time_us,
                             std::string(kdb::to_string(entry.provenance))});
  table.implausible =
      kdb::implausible_dispatch_table(record, tuner::decision_rules()).value_or(std::string());
  table.json = kdb::dump_json(kdb::dispatch_table_to_json(record));
  return table;
}

// What decides per arch (of the problem's results and tables), as a run decides it
// (tuner::decide with the spec's sizes).
std::vector<DbDecision> decisions_of(kdb::KernelsDb &db, const kdb::ProblemDetails &details) {
  std::set<std::string> arches;
  for (const auto &result : details.results)
    arches.insert(result.arch);
  for (const auto &table : details.dispatch_tables)
    arches.insert(table.arch);
  std::vector<DbDecision> decisions;
  for (const std::string &arch : arches)
    if (auto decision = api::decision_of(db, details.problem, arch))
      decisions.push_back(std::move(*decision));
  return decisions;
}

// Marks, per decision, the result row it comes from (a measured result's decision: the first
// plausible ok measured row with a time of its arch, as best_result ranks them; a dispatch
// table's: the first ok row of its arch and config), and lists the marked rows first.
void mark_decisions(std::vector<DbResult> &results, const std::vector<DbDecision> &decisions) {
  for (const DbDecision &decision : decisions)
    for (DbResult &result : results) {
      if (result.arch != decision.arch || result.status != "ok" || !result.implausible.empty())
        continue;
      const bool from_result = decision.source == "measured result";
      if (from_result && (result.provenance != "measured" || !result.timing))
        continue;
      if (!from_result && result.config_json != decision.config_json)
        continue;
      if (from_result && result.config_json != decision.config_json)
        break; // the ranking and best_result disagree: mark nothing rather than a wrong row
      result.decides = true;
      break;
    }
  std::stable_partition(results.begin(), results.end(),
                        [](const DbResult &result) { return result.decides; });
}

// Whether `text` is meant as a spec (it starts with an operation's name), not a key or a hash.
bool looks_like_spec(const std::string &text) {
  const size_t start = text.find_first_not_of(" \t\n");
  if (start == std::string::npos)
    return false;
  const std::string word = text.substr(start, text.find_first_of(" \t\n", start) - start);
  return word == "gemm" || word == "conv2d" || word == "conv3d";
}

std::vector<std::string> target_arches() {
  std::vector<std::string> arches;
  const std::string names = target_arch_names(); // "sm_80, sm_86, ..."
  for (size_t start = 0; start < names.size();) {
    const size_t end = std::min(names.find(',', start), names.size());
    arches.push_back(names.substr(start, end - start));
    start = names.find_first_not_of(", ", end);
    if (start == std::string::npos)
      break;
  }
  return arches;
}

// The problem of a spec as the user wrote it: its key as `tcjit run` makes it (math=auto resolved
// by NVIDIA_TF32_OVERRIDE) on `arch`, or on each arch tcjit targets when none is given.
kdb::ProblemDetails problem_of_spec(kdb::KernelsDb &db, const std::string &text,
                                    const std::string &arch, const char *where) {
  const std::vector<WorkloadEntry> entries = parse_ops(text, "<spec>");
  if (entries.size() != 1)
    throw Error(ErrorCode::invalid_argument,
                "the text holds " + std::to_string(entries.size()) +
                    " operations; give one spec, its problem key or its hash",
                where, "");
  const OpSpec &spec = entries.front().spec;
  api::throw_if_invalid(spec, where);
  if (!arch.empty() && !is_target_arch(arch))
    throw Error(ErrorCode::invalid_argument,
                "--arch '" + arch + "' is not one of " + target_arch_names(), where, "");
  const std::vector<std::string> arches = arch.empty() ? target_arches() : std::vector{arch};
  const bool tf32_off = tf32_disabled_by_environment();
  std::vector<kdb::ProblemDetails> found;
  std::vector<std::string> found_arches;
  for (const std::string &candidate : arches)
    for (auto &details : db.show(make_problem_key(spec, candidate, tf32_off).text)) {
      found.push_back(std::move(details));
      found_arches.push_back(candidate);
    }
  const std::string canonical = canonical_text(spec);
  if (found.size() > 1) {
    std::string names;
    for (const auto &name : found_arches)
      names += (names.empty() ? "" : ", ") + name;
    throw Error(ErrorCode::invalid_argument,
                "'" + canonical + "' is stored for several arches (" + names +
                    "); pass --arch to pick one",
                where, "");
  }
  if (found.empty()) {
    // A math=auto spec stored in the other TF32 mode: a run here keys it differently.
    std::string other_mode;
    for (const std::string &candidate : arches)
      if (other_mode.empty() && !db.show(make_problem_key(spec, candidate, !tf32_off).text).empty())
        other_mode = std::string(" (it is stored for ") + candidate + " with NVIDIA_TF32_OVERRIDE" +
                     (tf32_off ? " unset" : "=0") +
                     ", which resolves math=auto otherwise: run with that setting to use it)";
    const std::string options = " --db " + db.path() + (arch.empty() ? "" : " --arch " + arch);
    throw Error(ErrorCode::not_found,
                "no problem for '" + canonical + "' on " +
                    (arch.empty() ? "any arch (" + target_arch_names() + ")" : arch) + " in " +
                    db.path() + other_mode + ": tune it (`tcjit tune \"" + canonical + "\"" +
                    options + "`) or compile its default kernel (`tcjit run \"" + canonical + "\"" +
                    options + "`); `tcjit db ls` lists the stored problems",
                where, "");
  }
  return std::move(found.front());
}

// The problem named by key text, hash or spec; throws when none or several match.
kdb::ProblemDetails resolve_problem(kdb::KernelsDb &db, const std::string &key_or_hash,
                                    const char *where, const std::string &arch = "") {
  std::vector<kdb::ProblemDetails> found = db.show(key_or_hash);
  if (found.empty() && looks_like_spec(key_or_hash))
    return problem_of_spec(db, key_or_hash, arch, where);
  if (found.empty())
    throw Error(ErrorCode::not_found,
                "no problem with key or hash '" + key_or_hash + "' in " + db.path() +
                    " (`tcjit db ls` lists them; a spec starts with its operation, e.g. "
                    "\"gemm m=64 n=64 k=64 a=f16 b=f16:col\")",
                where, "");
  if (found.size() > 1) {
    std::string keys;
    for (const auto &details : found)
      keys += "\n  " + details.problem.key_text;
    throw Error(ErrorCode::invalid_argument,
                "hash '" + key_or_hash + "' matches several problems; pass the key:" + keys, where,
                "");
  }
  return std::move(found.front());
}

// One meaning for a config in every command: a tile config as `tcjit compile`, `run` and `tune`
// print it ("64x64x32 w32x32 s3 k1 g1 va8 vb8"); its stored JSON is accepted too.
std::string stored_config_json(const std::string &text, const char *where) {
  std::optional<codegen::TileConfig> config;
  std::string error;
  if (text.front() == '{') {
    config = engine::parse_config_json(text);
  } else {
    codegen::TileConfig parsed;
    if (codegen::parse_tile_config(text, parsed, error))
      config = parsed;
  }
  if (!config)
    throw Error(ErrorCode::invalid_argument,
                "--config '" + text +
                    "': not a tile config; give it as `tcjit run` prints it (\"64x64x32 "
                    "w32x32 s3 k1 g1 va8 vb8\") or as `tcjit db show` lists it (JSON)" +
                    (error.empty() ? "" : ": " + error),
                where, "");
  return engine::config_json(*config);
}

DbTransferCounts counts_of(const kdb::TransferCounts &counts) {
  DbTransferCounts result;
  result.problems = counts.problems;
  result.binaries = counts.binaries;
  result.binaries_rejected = counts.binaries_rejected;
  result.results_added = counts.results_added;
  result.results_already_present = counts.results_already_present;
  result.dispatch_tables = counts.dispatch_tables;
  result.dispatch_tables_rejected = counts.dispatch_tables_rejected;
  result.calibrations = counts.calibrations;
  for (const auto &record : counts.rejected)
    result.rejected.push_back({record.where, record.reason});
  result.warnings = counts.warnings;
  return result;
}

} // namespace

DbVersions current_db_versions() {
  return {engine::toolkit_version(), engine::compiler_version()};
}

std::string default_db_path() {
  return translating_db_errors("default_db_path", [] { return kdb::default_db_path().string(); });
}

std::string db_time_text(int64_t unix_ms) {
  return kdb::format_utc(unix_ms);
}

namespace {

// Orders the problems as `sort` says (DbListRequest::sort); "op" is the database's order.
void sort_problems(std::vector<DbProblemSummary> &problems, const std::string &sort) {
  auto by = [&](auto less) { std::stable_sort(problems.begin(), problems.end(), less); };
  if (sort == "key")
    by([](const DbProblemSummary &a, const DbProblemSummary &b) {
      return a.problem.key_text < b.problem.key_text;
    });
  else if (sort == "age")
    by([](const DbProblemSummary &a, const DbProblemSummary &b) {
      return a.problem.created_ms > b.problem.created_ms;
    });
  else if (sort == "time")
    by([](const DbProblemSummary &a, const DbProblemSummary &b) {
      if (!a.decision || !b.decision)
        return a.decision.has_value() && !b.decision.has_value();
      return a.decision->time_us < b.decision->time_us;
    });
}

} // namespace

std::vector<DbProblemSummary> db_list(const DbListRequest &request) {
  if (request.limit < 0)
    throw Error(ErrorCode::invalid_argument,
                "--limit " + std::to_string(request.limit) +
                    " is negative; pass a count of problems, or 0 for all",
                "db ls", "");
  const std::string sort = request.sort.empty() ? "op" : request.sort;
  if (sort != "op" && sort != "key" && sort != "time" && sort != "age")
    throw Error(ErrorCode::invalid_argument,
                "--sort '" + sort + "' is not an order; use op, key, time or age", "db ls", "");
  return translating_db_errors("db ls", [&] {
    kdb::KernelsDb db = open_db(request.db_path, Access::read_only);
    kdb::ListFilter filter;
    if (!request.op.empty())
      filter.op = request.op;
    if (!request.dtype.empty())
      filter.dtype = request.dtype;
    if (!request.arch.empty())
      filter.arch = request.arch;
    filter.where = request.where;
    filter.limit = sort == "op" ? request.limit : 0; // the others sort first, then limit
    filter.rules = tuner::decision_rules();
    std::vector<DbProblemSummary> problems;
    for (const kdb::ProblemSummary &summary : db.list(filter))
      problems.push_back({problem_of(summary.problem), summary.binaries, summary.results,
                          summary.dispatch_tables, summary.best_median_us,
                          summary.results + summary.dispatch_tables > 0
                              ? api::decision_of(db, summary.problem, summary.problem.arch)
                              : std::nullopt});
    sort_problems(problems, sort);
    if (request.limit > 0 && static_cast<int64_t>(problems.size()) > request.limit)
      problems.resize(static_cast<size_t>(request.limit));
    return problems;
  });
}

DbProblemDetails db_show(const DbShowRequest &request) {
  const DbVersions current = versions_or_current(request.versions);
  return translating_db_errors("db show", [&] {
    kdb::KernelsDb db = open_db(request.db_path, Access::read_only);
    const kdb::ProblemDetails found = resolve_problem(db, request.key, "db show", request.arch);
    DbProblemDetails details;
    details.problem = problem_of(found.problem);
    for (const auto &result : found.results)
      details.results.push_back(result_of(result));
    for (const auto &binary : found.binaries)
      details.binaries.push_back(binary_of(binary, current));
    for (const auto &table : found.dispatch_tables)
      details.dispatch_tables.push_back(dispatch_table_of(table));
    details.decisions = decisions_of(db, found);
    mark_decisions(details.results, details.decisions);
    return details;
  });
}

DbBinaryFound db_binary(const DbBinaryRequest &request) {
  const DbVersions current = versions_or_current(request.versions);
  return translating_db_errors("db binary", [&] {
    kdb::KernelsDb db = open_db(request.db_path, Access::read_only);
    const kdb::ProblemDetails details = resolve_problem(db, request.key, "db binary");
    kdb::BinaryQuery query;
    query.problem_key = details.problem.key_text;
    query.arch = request.arch.empty() ? details.problem.arch : request.arch;
    query.toolkit_version = current.toolkit_version;
    query.compiler_version = current.compiler_version;
    query.rules = tuner::decision_rules();
    if (!request.config.empty())
      query.config_json = stored_config_json(request.config, "db binary");
    const kdb::BinaryLookup lookup = db.find_binary(query);
    if (request.on_warning)
      for (const auto &warning : lookup.warnings)
        request.on_warning(warning);
    if (lookup.status != kdb::LookupStatus::hit)
      throw Error(ErrorCode::not_found,
                  std::string(lookup.status == kdb::LookupStatus::corrupt ? "only damaged binaries"
                                                                          : "no binary") +
                      " for '" + query.problem_key + "' on " + query.arch + " with toolkit " +
                      query.toolkit_version + " and compiler " + query.compiler_version +
                      (query.config_json ? " and config " + *query.config_json : std::string()) +
                      " (`tcjit db show KEY` lists the binaries; --arch, --config, "
                      "--toolkit-version and --compiler-version select another)",
                  "db binary", "");
    DbBinaryFound found;
    found.arch = lookup.binary->key.arch;
    found.config_json = lookup.binary->key.config_json;
    found.ptx = lookup.binary->ptx;
    found.cubin = lookup.binary->cubin;
    found.cubin_sha256 = lookup.binary->cubin_sha256;
    return found;
  });
}

DbStats db_stats(const DbStatsRequest &request) {
  const DbVersions current = versions_or_current(request.versions);
  return translating_db_errors("db stats", [&] {
    kdb::KernelsDb db = open_db(request.db_path, Access::read_only);
    const kdb::DbStats stats = db.stats({current.toolkit_version, current.compiler_version});
    DbStats result;
    result.path = db.path();
    result.schema_version = stats.schema_version;
    result.problems = stats.problems;
    result.binaries = stats.binaries;
    result.results = stats.results;
    result.dispatch_tables = stats.dispatch_tables;
    result.dispatch_entries = stats.dispatch_entries;
    result.stale_binaries = stats.stale_binaries;
    result.current = {stats.current.toolkit_version, stats.current.compiler_version};
    result.cubin_bytes = stats.cubin_bytes;
    result.ptx_bytes = stats.ptx_bytes;
    result.file_bytes = stats.file_bytes;
    result.wal_bytes = stats.wal_bytes;
    result.free_pages = stats.free_pages;
    result.results_by_status = stats.results_by_status;
    result.binaries_by_arch = stats.binaries_by_arch;
    return result;
  });
}

DbPruneReport db_prune(const DbPruneRequest &request) {
  if (!request.stale && request.older_than.empty())
    throw Error(ErrorCode::invalid_argument,
                "nothing to prune: pass --stale and/or --older-than AGE (e.g. 30d)", "db prune",
                "");
  kdb::PruneOptions prune;
  const DbVersions current = versions_or_current(request.versions);
  if (request.stale) {
    prune.stale_versions = kdb::CurrentVersions{current.toolkit_version, current.compiler_version};
  }
  if (!request.older_than.empty()) {
    prune.older_than = kdb::parse_age(request.older_than);
    if (!prune.older_than)
      throw Error(ErrorCode::invalid_argument,
                  "--older-than '" + request.older_than +
                      "' is not an age; write a count and a unit: 90s, 45m, 12h, 30d, 2w",
                  "db prune", "");
  }
  return translating_db_errors("db prune", [&] {
    DbPruneReport result;
    result.dry_run = request.dry_run;
    if (request.dry_run) {
      kdb::KernelsDb db = open_db(request.db_path, Access::read_only);
      const kdb::PrunePreview preview = db.preview_prune(prune);
      result.binaries_removed = preview.counts.binaries_removed;
      result.results_removed = preview.counts.results_removed;
      result.problems_removed = preview.counts.problems_removed;
      result.dispatch_tables_removed = preview.counts.dispatch_tables_removed;
      api::BinarySet binaries_going;
      std::set<std::string> problems_going;
      for (const kdb::PrunedRow &row : preview.rows) {
        result.rows.push_back({row.kind, row.problem_key, kdb::format_key_hash(row.key_hash),
                               row.arch,
                               row.config_json.empty() ? "" : api::config_text(row.config_json),
                               row.created_ms, row.why});
        if (row.kind == "binary")
          binaries_going.insert({row.problem_key, row.arch, row.config_json});
        if (row.kind == "problem")
          problems_going.insert(row.problem_key);
      }
      result.kernels_missing = api::missing_kernels(db, current, binaries_going, problems_going);
      return result;
    }
    kdb::KernelsDb db = open_db(request.db_path, Access::write);
    const kdb::PruneReport report = db.prune(prune);
    result.binaries_removed = report.binaries_removed;
    result.results_removed = report.results_removed;
    result.problems_removed = report.problems_removed;
    result.dispatch_tables_removed = report.dispatch_tables_removed;
    result.kernels_missing = api::missing_kernels(db, current);
    return result;
  });
}

DbRebuildReport db_rebuild(const DbRebuildRequest &request) {
  if (!request.arch.empty() && !is_target_arch(request.arch))
    throw Error(ErrorCode::invalid_argument,
                "--arch '" + request.arch + "' is not one of " + target_arch_names(), "db rebuild",
                "");
  return translating_db_errors("db rebuild", [&] {
    kdb::KernelsDb db =
        open_db(request.db_path, request.dry_run ? Access::read_only : Access::write);
    return api::rebuild_decided_kernels(db, request);
  });
}

DbTransferCounts db_export(const DbTransferRequest &request, std::ostream &out) {
  return translating_db_errors("db export", [&] {
    kdb::KernelsDb db = open_db(request.db_path, Access::read_only);
    if (request.file.empty() || request.file == "-")
      return counts_of(db.export_jsonl(out));
    std::ofstream file(request.file, std::ios::trunc);
    if (!file)
      throw Error(ErrorCode::database, "cannot create '" + request.file + "' (check the directory)",
                  "db export", "");
    return counts_of(db.export_jsonl(file));
  });
}

DbTransferCounts db_import(const DbTransferRequest &request, std::istream &in) {
  return translating_db_errors("db import", [&] {
    kdb::KernelsDb db = open_db(request.db_path, Access::create);
    if (request.file == "-")
      return counts_of(db.import_jsonl(in, tuner::decision_rules()));
    std::ifstream file(request.file);
    if (!file)
      throw Error(ErrorCode::database, "cannot read '" + request.file + "' (check the path)",
                  "db import", "");
    return counts_of(db.import_jsonl(file, tuner::decision_rules()));
  });
}

DbTransferCounts db_merge(const DbTransferRequest &request) {
  return translating_db_errors("db merge", [&] {
    kdb::KernelsDb db = open_db(request.db_path, Access::create);
    return counts_of(db.merge(request.file, tuner::decision_rules()));
  });
}

DbCheckReport db_check(const std::string &db_path, bool full) {
  return translating_db_errors("db check", [&] {
    DbCheckReport result;
    result.path = db_path.empty() ? kdb::default_db_path().string() : db_path;
    const kdb::CheckReport report =
        kdb::KernelsDb::check(result.path, full, tuner::decision_rules());
    result.ok = report.ok;
    result.check = report.check;
    result.problems = report.problems;
    result.notes = report.notes;
    result.binaries_checked = report.binaries_checked;
    result.bad_cubins = report.bad_cubins;
    result.dispatch_tables_checked = report.dispatch_tables_checked;
    result.bad_dispatch_tables = report.bad_dispatch_tables;
    result.bad_values = report.bad_values;
    result.implausible = report.implausible;
    result.recovery = report.recovery;
    return result;
  });
}

DbVacuumReport db_vacuum(const std::string &db_path) {
  return translating_db_errors("db vacuum", [&] {
    kdb::KernelsDb db = open_db(db_path, Access::write);
    const kdb::VacuumReport report = db.vacuum();
    return DbVacuumReport{db.path(), report.bytes_before, report.bytes_after};
  });
}

} // namespace tcjit
