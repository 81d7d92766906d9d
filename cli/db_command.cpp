// `tcjit db`: a client of include/tcjit/db.hpp, which does the work; here are the flags and the
// printing (tables and --json).
#include "cli/db_command.h"

#include "cli/db_json.h"
#include "cli/db_path_option.h"
#include "cli/exit_codes.h"
#include "cli/json_text.h"
#include "tcjit/db.hpp"
#include "tcjit/tools.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace tcjit::cli {
namespace {

using nlohmann::json;

struct DbOptions {
  std::string db;
  bool json = false;
  // ls
  std::string op, dtype, arch, where;
  int64_t limit = 0;
  std::string sort = "op";
  // show, ptx, cubin
  std::string key;
  std::string config;
  std::string output;
  // stats, prune, ptx, cubin
  std::string toolkit_version; // add_db_command's `current` unless given
  std::string compiler_version;
  // prune
  bool stale = false;
  std::string older_than;
  bool dry_run = false; // prune, rebuild
  // export, import, merge
  std::string format = "jsonl";
  std::string file;
  // check
  bool full = false;
};

struct Streams {
  std::ostream &out;
  std::ostream &err;
};

// A failure of the command itself (not of the API) that ends it with `exit_code` after the
// message is printed.
struct CommandFailure {
  int exit_code;
  std::string message;
};

DbVersions versions(const DbOptions &options) {
  return {options.toolkit_version, options.compiler_version};
}

std::string fixed(double value, int decimals) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.*f", decimals, value);
  return buffer;
}

// A field read from the database for a line of text: its control characters escaped (a file
// someone handed over may hold an escape sequence, e.g. OSC 52, which writes the clipboard).
std::string shown(const std::string &text) {
  return escape_controls(text);
}

std::string shorten(const std::string &text, size_t width) {
  return text.size() <= width ? text : text.substr(0, width - 3) + "...";
}

// Left-aligned columns separated by two spaces; the cells' control characters escaped.
void print_table(std::ostream &out, const std::vector<std::string> &header,
                 std::vector<std::vector<std::string>> rows, const std::string &indent = "") {
  for (auto &row : rows)
    for (std::string &cell : row)
      cell = shown(cell);
  std::vector<size_t> widths(header.size());
  for (size_t c = 0; c < header.size(); ++c)
    widths[c] = header[c].size();
  for (const auto &row : rows)
    for (size_t c = 0; c < row.size() && c < widths.size(); ++c)
      widths[c] = std::max(widths[c], row[c].size());
  auto print_row = [&](const std::vector<std::string> &row) {
    std::string line = indent;
    for (size_t c = 0; c < row.size(); ++c) {
      line += row[c];
      if (c + 1 < row.size())
        line += std::string(widths[c] - row[c].size() + 2, ' ');
    }
    out << line << '\n';
  };
  print_row(header);
  for (const auto &row : rows)
    print_row(row);
}

// A stored JSON text as a value; malformed text (a damaged file) as a string.
json stored_json(const std::string &text) {
  json value = json::parse(text.empty() ? "{}" : text, nullptr, false);
  return value.is_discarded() ? json(text) : value;
}

std::string resource_field(const std::string &resources_json, const char *name) {
  const json resources = stored_json(resources_json);
  if (!resources.is_object())
    return "?";
  return resources.contains(name) ? json_text(resources.at(name)) : "-";
}

int run_ls(const DbOptions &options, Streams io) {
  DbListRequest request;
  request.db_path = options.db;
  request.op = options.op;
  request.dtype = options.dtype;
  request.arch = options.arch;
  request.where = options.where;
  request.limit = options.limit;
  request.sort = options.sort;
  const std::vector<DbProblemSummary> problems = db_list(request);
  if (options.json) {
    io.out << json_text(ls_json(problems), 2) << '\n';
    return kExitOk;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto &summary : problems) {
    const auto &problem = summary.problem;
    const auto &decision = summary.decision;
    rows.push_back(
        {problem.key_hash, problem.op, problem.dtype, problem.arch, shorten(problem.shape_json, 40),
         !decision ? "-"
         : decision->buckets > 1
             ? decision->config + " (1 of " + std::to_string(decision->buckets) + " size buckets)"
             : decision->config,
         decision ? fixed(decision->time_us, 2) : "-", decision ? decision->provenance : "-",
         std::to_string(summary.binaries), std::to_string(summary.results), problem.key_text});
  }
  print_table(io.out,
              {"HASH", "OP", "DTYPE", "ARCH", "SHAPE", "CONFIG", "TIME_US", "TIME_FROM", "BINARIES",
               "RESULTS", "KEY"},
              rows);
  io.out << problems.size() << " problem" << (problems.size() == 1 ? "" : "s")
         << " (CONFIG, TIME_US: what a run uses, the tuned decision; TIME_FROM: measured, "
            "emulated or predicted; -: untuned, a run takes the default chooser's config)\n";
  return kExitOk;
}

void print_details(const DbProblemDetails &details, std::ostream &out) {
  const auto &problem = details.problem;
  out << "problem   " << shown(problem.key_text) << '\n'
      << "hash      " << shown(problem.key_hash) << '\n'
      << "op        " << shown(problem.op) << "  dtype " << shown(problem.dtype) << "  arch "
      << shown(problem.arch) << '\n'
      << "shape     " << shown(problem.shape_json) << '\n'
      << "created   " << db_time_text(problem.created_ms) << '\n'
      << "spec\n  " << shown(problem.spec_text) << '\n';
  // The decision per arch: exactly what a run uses (tuner::decide).
  out << "\nbest config per arch (the decision a run uses):\n";
  for (const auto &decision : details.decisions)
    out << "  " << shown(decision.arch) << ": " << shown(decision.config) << "  "
        << fixed(decision.time_us, 2) << " us  (" << decision.provenance << ", " << decision.source
        << (decision.buckets > 1 ? " of " + std::to_string(decision.buckets) + " size buckets"
                                 : std::string())
        << ", tuner " << shown(decision.tuner_version) << ")\n";
  if (details.decisions.empty())
    out << "  (no decision: a run uses the default chooser)\n";
  // The fastest plausible result per (arch, device): the first of each in the ranking.
  out << "\nfastest result per arch and device:\n";
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto &result : details.results) {
    if (result.status != "ok" || !result.timing || !result.implausible.empty())
      continue;
    if (!seen.emplace(result.arch, result.device).second)
      continue;
    out << "  " << shown(result.arch) << " "
        << shown(result.device.empty() ? result.provenance : result.device) << ": "
        << shown(result.config) << "  " << fixed(result.timing->median_us, 2) << " us\n";
  }
  if (seen.empty())
    out << "  (no ok result with a time)\n";
  out << "\nresults (" << details.results.size()
      << ", the decision's row first (DECIDES), then best first):\n";
  std::vector<std::vector<std::string>> rows;
  int rank = 0;
  for (const auto &result : details.results) {
    std::string provenance = result.provenance;
    if (result.provenance == "measured")
      provenance +=
          " on " + result.device + " driver " + result.driver +
          (result.clock_mhz ? " @" + std::to_string(*result.clock_mhz) + " MHz" : std::string());
    else if (result.provenance == "predicted")
      provenance += " by " + result.model;
    rows.push_back({std::to_string(++rank), result.decides ? "yes" : "", result.status, result.arch,
                    result.timing ? fixed(result.timing->median_us, 2) : "-",
                    result.timing ? fixed(result.timing->min_us, 2) : "-",
                    result.timing ? fixed(result.timing->max_us, 2) : "-",
                    result.timing ? fixed(result.timing->stddev_us, 2) : "-",
                    result.tflops ? fixed(*result.tflops, 1) : "-", provenance,
                    result.tuner_version, db_time_text(result.measured_ms),
                    result.config + (result.message.empty() ? "" : "  (" + result.message + ")") +
                        (result.implausible.empty()
                             ? ""
                             : "  (implausible, ignored: " + result.implausible + ")")});
  }
  print_table(out,
              {"#", "DECIDES", "STATUS", "ARCH", "MEDIAN_US", "MIN_US", "MAX_US", "STDDEV_US",
               "TFLOP/S", "PROVENANCE", "TUNER", "WHEN", "CONFIG"},
              rows, "  ");
  out << "\nbinaries (" << details.binaries.size() << "):\n";
  rows.clear();
  for (const auto &binary : details.binaries)
    rows.push_back({binary.arch, binary.toolkit_version, binary.compiler_version,
                    binary.stale ? "stale" : "current",
                    resource_field(binary.resources_json, "registers"),
                    resource_field(binary.resources_json, "spill_bytes"),
                    resource_field(binary.resources_json, "shared_bytes"),
                    std::to_string(binary.cubin_bytes), fixed(binary.compile_ms, 1),
                    binary.cubin_sha256.substr(0, 12), binary.compile_options, binary.config});
  print_table(out,
              {"ARCH", "TOOLKIT", "COMPILER", "STATE", "REGS", "SPILL_B", "SMEM_B", "CUBIN_B",
               "COMPILE_MS", "SHA256", "OPTIONS", "CONFIG"},
              rows, "  ");
  if (details.dispatch_tables.empty())
    return;
  out << "\ndispatch tables (" << details.dispatch_tables.size() << ", newest first):\n";
  for (const auto &table : details.dispatch_tables) {
    out << "  " << shown(table.arch) << "  tuner " << shown(table.tuner_version) << "  "
        << db_time_text(table.created_ms) << "  " << table.entries.size() << " bucket"
        << (table.entries.size() == 1 ? "" : "s")
        << (table.implausible.empty()
                ? ""
                : "  (implausible, ignored: " + shown(table.implausible) + ")")
        << '\n';
    rows.clear();
    for (const auto &entry : table.entries)
      rows.push_back({entry.bucket, fixed(entry.time_us, 2), entry.provenance, entry.config});
    print_table(out, {"BUCKET", "TIME_US", "PROVENANCE", "CONFIG"}, rows, "    ");
  }
}

int run_show(const DbOptions &options, Streams io) {
  DbShowRequest request;
  request.db_path = options.db;
  request.key = options.key;
  request.arch = options.arch;
  request.versions = versions(options);
  const DbProblemDetails details = db_show(request);
  // A calibration file of an older tcjit beside the database is no longer read: said once.
  if (const std::string note = db_calibration_side_file_note(options.db); !note.empty())
    io.err << "tcjit db show: note: " << shown(note) << '\n';
  if (options.json) {
    io.out << json_text(show_json(details), 2) << '\n';
    return kExitOk;
  }
  print_details(details, io.out);
  return kExitOk;
}

// The binary that `ptx` and `cubin` print: the problem's own arch unless --arch is given.
DbBinaryFound find_binary(const DbOptions &options, Streams io) {
  DbBinaryRequest request;
  request.db_path = options.db;
  request.key = options.key;
  request.arch = options.arch;
  request.config = options.config;
  request.versions = versions(options);
  request.on_warning = [&](const std::string &warning) {
    io.err << "tcjit db: warning: " << shown(warning) << '\n';
  };
  return db_binary(request);
}

int run_ptx(const DbOptions &options, Streams io) {
  const DbBinaryFound binary = find_binary(options, io);
  if (options.json)
    io.out << json_text(json{{"config", stored_json(binary.config_json)},
                             {"arch", binary.arch},
                             {"ptx", binary.ptx}},
                        2)
           << '\n';
  else // PTX's newlines and tabs as they are; other control characters escaped
    io.out << escape_controls_keep_lines(binary.ptx);
  return kExitOk;
}

int run_cubin(const DbOptions &options, Streams io) {
  const DbBinaryFound binary = find_binary(options, io);
  std::ofstream file(options.output, std::ios::binary | std::ios::trunc);
  file.write(reinterpret_cast<const char *>(binary.cubin.data()),
             static_cast<std::streamsize>(binary.cubin.size()));
  file.close();
  if (!file)
    throw CommandFailure{kExitFailure,
                         "cannot write '" + options.output + "' (check the directory and space)"};
  if (options.json)
    io.out << json_text(json{{"file", options.output},
                             {"bytes", binary.cubin.size()},
                             {"sha256", binary.cubin_sha256}},
                        2)
           << '\n';
  else
    io.out << "wrote " << binary.cubin.size() << " bytes to " << options.output << " (sha256 "
           << binary.cubin_sha256 << ")\n";
  return kExitOk;
}

int run_stats(const DbOptions &options, Streams io) {
  const DbStats stats = db_stats({options.db, versions(options)});
  if (options.json) {
    json object = {{"path", stats.path},
                   {"schema", stats.schema_version},
                   {"problems", stats.problems},
                   {"binaries", stats.binaries},
                   {"results", stats.results},
                   {"dispatch_tables", stats.dispatch_tables},
                   {"dispatch_entries", stats.dispatch_entries},
                   {"stale_binaries", stats.stale_binaries},
                   {"current",
                    {{"toolkit_version", stats.current.toolkit_version},
                     {"compiler_version", stats.current.compiler_version}}},
                   {"cubin_bytes", stats.cubin_bytes},
                   {"ptx_bytes", stats.ptx_bytes},
                   {"file_bytes", stats.file_bytes},
                   {"wal_bytes", stats.wal_bytes},
                   {"free_pages", stats.free_pages}};
    object["results_by_status"] = json::object();
    for (const auto &[status, count] : stats.results_by_status)
      object["results_by_status"][status] = count;
    object["binaries_by_arch"] = json::object();
    for (const auto &[arch, count] : stats.binaries_by_arch)
      object["binaries_by_arch"][arch] = count;
    io.out << json_text(object, 2) << '\n';
    return kExitOk;
  }
  io.out << "database        " << shown(stats.path) << " (schema " << stats.schema_version << ")\n"
         << "problems        " << stats.problems << '\n'
         << "binaries        " << stats.binaries << " (" << stats.stale_binaries
         << " stale: not toolkit " << stats.current.toolkit_version << " and compiler "
         << stats.current.compiler_version << ")\n"
         << "results         " << stats.results;
  for (const auto &[status, count] : stats.results_by_status)
    io.out << "  " << shown(status) << " " << count;
  io.out << '\n'
         << "dispatch tables " << stats.dispatch_tables << " (" << stats.dispatch_entries
         << " buckets)\n"
         << "binaries by arch";
  for (const auto &[arch, count] : stats.binaries_by_arch)
    io.out << "  " << shown(arch) << " " << count;
  io.out << '\n'
         << "size            " << stats.file_bytes << " bytes (+ " << stats.wal_bytes << " WAL; "
         << stats.free_pages << " free pages; cubins " << stats.cubin_bytes << ", PTX "
         << stats.ptx_bytes << ")\n";
  if (stats.stale_binaries > 0)
    io.out << "hint: `tcjit db prune --stale` removes the stale binaries; then `tcjit db rebuild` "
              "compiles the tuned kernels for this build\n";
  return kExitOk;
}

// The decided configs a prune leaves without a kernel, and what to run.
void print_kernels_missing(const std::vector<DbKernelMissing> &missing, bool dry_run,
                           const DbOptions &options, std::ostream &out) {
  if (missing.empty())
    return;
  out << missing.size() << " decided config" << (missing.size() == 1 ? "" : "s")
      << (dry_run               ? " would have"
          : missing.size() == 1 ? " has"
                                : " have")
      << " no kernel of toolkit " << options.toolkit_version << " and compiler "
      << options.compiler_version
      << " (the decisions are kept: a run compiles them, an application with MissPolicy::fail "
         "refuses them): `tcjit db rebuild"
      << (options.db.empty() ? "" : " --db " + options.db) << "` compiles them now\n";
  std::vector<std::vector<std::string>> rows;
  for (const auto &kernel : missing)
    rows.push_back({kernel.hash, kernel.arch, kernel.config, kernel.key});
  print_table(out, {"HASH", "ARCH", "CONFIG", "KEY"}, rows, "  ");
}

int run_prune(const DbOptions &options, Streams io) {
  DbPruneRequest request;
  request.db_path = options.db;
  request.stale = options.stale;
  request.older_than = options.older_than;
  request.versions = versions(options);
  request.dry_run = options.dry_run;
  const DbPruneReport report = db_prune(request);
  if (options.json) {
    io.out << json_text(prune_json(report), 2) << '\n';
    return kExitOk;
  }
  if (report.dry_run) {
    std::vector<std::vector<std::string>> rows;
    for (const auto &row : report.rows)
      rows.push_back({row.kind, row.hash, row.arch, row.config, db_time_text(row.created_ms),
                      row.why, row.key});
    if (!rows.empty())
      print_table(io.out, {"WOULD REMOVE", "HASH", "ARCH", "CONFIG", "WHEN", "WHY", "KEY"}, rows);
  }
  io.out << (report.dry_run ? "dry run, nothing removed: would remove " : "removed ")
         << report.binaries_removed << " binaries, " << report.results_removed << " results, "
         << report.dispatch_tables_removed << " dispatch tables, " << report.problems_removed
         << " problems\n";
  print_kernels_missing(report.kernels_missing, report.dry_run, options, io.out);
  return kExitOk;
}

int run_rebuild(const DbOptions &options, Streams io) {
  DbRebuildRequest request;
  request.db_path = options.db;
  request.arch = options.arch;
  request.dry_run = options.dry_run;
  const DbRebuildReport report = db_rebuild(request);
  if (options.json) {
    io.out << json_text(rebuild_json(report), 2) << '\n';
  } else {
    std::vector<std::vector<std::string>> rows;
    for (const auto &kernel : report.kernels)
      rows.push_back({kernel.hash, kernel.arch, kernel.config, kernel.status,
                      kernel.status == "compiled" ? fixed(kernel.compile_ms, 1) : "-",
                      kernel.message});
    if (!rows.empty())
      print_table(io.out, {"HASH", "ARCH", "CONFIG", "STATUS", "COMPILE_MS", "MESSAGE"}, rows);
    io.out << (request.dry_run ? "dry run, nothing compiled: " : "") << report.compiled
           << (request.dry_run ? " to compile, " : " compiled, ") << report.present << " present, "
           << report.failed << " failed (of " << report.kernels.size() << " decided kernels)\n";
  }
  if (report.failed > 0)
    io.err << "tcjit db rebuild: error: " << report.failed
           << " decided kernel(s) could not be compiled (listed above)\n";
  return report.failed > 0 ? kExitFailure : kExitOk;
}

json rejected_json(const DbTransferCounts &counts) {
  json rejected = json::array();
  for (const auto &record : counts.rejected)
    rejected.push_back({{"where", record.where}, {"reason", record.reason}});
  return rejected;
}

void print_counts(const DbTransferCounts &counts, const char *verb, const DbOptions &options,
                  std::ostream &out) {
  if (options.json) {
    out << json_text(json{{"problems", counts.problems},
                          {"binaries", counts.binaries},
                          {"binaries_rejected", counts.binaries_rejected},
                          {"results_added", counts.results_added},
                          {"results_already_present", counts.results_already_present},
                          {"dispatch_tables", counts.dispatch_tables},
                          {"dispatch_tables_rejected", counts.dispatch_tables_rejected},
                          {"calibrations", counts.calibrations},
                          {"rejected", rejected_json(counts)}},
                     2)
        << '\n';
    return;
  }
  out << verb << ' ' << counts.problems << " problems, " << counts.binaries << " binaries, "
      << counts.results_added << " results, " << counts.dispatch_tables << " dispatch tables";
  if (counts.calibrations > 0)
    out << ", " << counts.calibrations << " calibrations";
  if (counts.results_already_present > 0)
    out << " (" << counts.results_already_present << " identical results already present)";
  if (counts.binaries_rejected > 0)
    out << "; rejected " << counts.binaries_rejected << " damaged binaries";
  if (counts.dispatch_tables_rejected > 0)
    out << "; rejected " << counts.dispatch_tables_rejected << " invalid dispatch tables";
  if (!counts.rejected.empty())
    out << "; " << counts.rejected.size() << " records rejected (not stored)";
  out << '\n';
}

// Lists the rejected records on `err`; the command then fails (the good records are stored).
int report_rejected(const DbTransferCounts &counts, const char *command, std::ostream &err) {
  for (const auto &record : counts.rejected)
    err << "tcjit db " << command << ": rejected " << shown(record.where) << ": "
        << shown(record.reason) << '\n';
  if (counts.rejected.empty())
    return kExitOk;
  err << "tcjit db " << command << ": error: " << counts.rejected.size()
      << " record(s) rejected (listed above); the other records were stored\n";
  return kExitFailure;
}

int run_export(const DbOptions &options, Streams io) {
  const DbTransferCounts counts = db_export({options.db, options.file}, io.out);
  for (const auto &warning : counts.warnings)
    io.err << "tcjit db export: warning: " << shown(warning) << '\n';
  if (!options.file.empty() && options.file != "-")
    print_counts(counts, "exported", options, io.err);
  return kExitOk;
}

int run_import(const DbOptions &options, Streams io) {
  const DbTransferCounts counts = db_import({options.db, options.file}, std::cin);
  print_counts(counts, "imported", options, io.out);
  return report_rejected(counts, "import", io.err);
}

int run_merge(const DbOptions &options, Streams io) {
  const DbTransferCounts counts = db_merge({options.db, options.file});
  print_counts(counts, "merged", options, io.out);
  return report_rejected(counts, "merge", io.err);
}

int run_check(const DbOptions &options, Streams io) {
  const DbCheckReport report = db_check(options.db, options.full);
  if (options.json) {
    io.out << json_text(json{{"path", report.path},
                             {"ok", report.ok},
                             {"check", report.check},
                             {"problems", report.problems},
                             {"notes", report.notes},
                             {"binaries_checked", report.binaries_checked},
                             {"bad_cubins", report.bad_cubins},
                             {"dispatch_tables_checked", report.dispatch_tables_checked},
                             {"bad_dispatch_tables", report.bad_dispatch_tables},
                             {"bad_values", report.bad_values},
                             {"implausible", report.implausible},
                             {"recovery", report.recovery}},
                        2)
           << '\n';
  } else {
    io.out << shown(report.path) << ": " << report.check << ' '
           << (report.problems.empty() ? "ok" : "FAILED") << "; " << report.binaries_checked
           << " cubins checked, " << report.bad_cubins.size() << " damaged; "
           << report.dispatch_tables_checked << " dispatch tables checked, "
           << report.bad_dispatch_tables.size() << " invalid; " << report.bad_values.size()
           << " bad values; " << report.implausible.size() << " implausible\n";
    for (const auto &problem : report.problems)
      io.out << "  damage: " << shown(problem) << '\n';
    for (const auto &note : report.notes)
      io.out << "  note: " << shown(note) << '\n';
    for (const auto &cubin : report.bad_cubins)
      io.out << "  cubin sha256 mismatch: " << shown(cubin) << '\n';
    for (const auto &table : report.bad_dispatch_tables)
      io.out << "  invalid dispatch table: " << shown(table) << '\n';
    for (const auto &value : report.bad_values)
      io.out << "  bad value: " << shown(value) << '\n';
    for (const auto &row : report.implausible)
      io.out << "  implausible: " << shown(row) << '\n';
    if (!report.ok)
      io.out << "how to recover: " << shown(report.recovery) << '\n';
  }
  return report.ok ? kExitOk : kExitFailure;
}

int run_vacuum(const DbOptions &options, Streams io) {
  const DbVacuumReport report = db_vacuum(options.db);
  if (options.json)
    io.out << json{{"bytes_before", report.bytes_before}, {"bytes_after", report.bytes_after}}.dump(
                  2)
           << '\n';
  else
    io.out << "vacuumed " << shown(report.path) << ": " << report.bytes_before << " -> "
           << report.bytes_after << " bytes\n";
  return kExitOk;
}

// Runs a subcommand, turning its failures into a message and an exit status: a bad request is a
// usage error, anything else a failure.
int run_guarded(const char *name, const std::function<int(const DbOptions &, Streams)> &run,
                const DbOptions &options, Streams io) {
  try {
    return run(options, io);
  } catch (const CommandFailure &failure) {
    io.err << "tcjit db " << name << ": error: " << escape_controls(failure.message) << '\n';
    return failure.exit_code;
  } catch (const Error &error) {
    if (error.code() == ErrorCode::bad_spec) { // diagnostics of a spec: several lines
      io.err << "tcjit db " << name << ": error: " << escape_controls_keep_lines(error.problem())
             << '\n';
      return kExitBadSpec;
    }
    io.err << "tcjit db " << name << ": error: " << escape_controls(error.problem()) << '\n';
    return error.code() == ErrorCode::invalid_argument ? kExitUsage : kExitFailure;
  }
}

// `--db ""` is an error, not the default database.
CLI::App *add_sub(CLI::App &db, const std::shared_ptr<DbOptions> &options, Streams io,
                  const char *name, const char *description,
                  int (*run)(const DbOptions &, Streams)) {
  CLI::App *sub = db.add_subcommand(name, description);
  sub->add_option("--db", options->db,
                  "database file (default: $TCJIT_DB, $XDG_CACHE_HOME/tcjit/kernels.db or "
                  "~/.cache/tcjit/kernels.db)")
      ->check(non_empty_db_path());
  sub->add_flag("--json", options->json, "print JSON for scripts");
  sub->callback([options, io, name, run]() {
    throw CLI::RuntimeError(run_guarded(name, run, *options, io));
  });
  return sub;
}

void add_version_options(CLI::App *sub, DbOptions &options) {
  sub->add_option("--toolkit-version", options.toolkit_version, "current CUDA toolkit version")
      ->capture_default_str();
  sub->add_option("--compiler-version", options.compiler_version, "current tcjit compiler version")
      ->capture_default_str();
}

} // namespace

void add_db_command(CLI::App &app, const DbVersions &current, std::ostream &out,
                    std::ostream &err) {
  auto options = std::make_shared<DbOptions>();
  options->toolkit_version = current.toolkit_version;
  options->compiler_version = current.compiler_version;
  const Streams io{out, err};
  CLI::App *db = app.add_subcommand(
      "db", "The kernel database: tuned problems, tuning results and cached kernel binaries");
  db->require_subcommand(1);

  CLI::App *ls = add_sub(*db, options, io, "ls", "List problems", run_ls);
  ls->add_option("--op", options->op, "operation")
      ->check(CLI::IsMember({"gemm", "conv2d", "conv3d"}));
  ls->add_option("--dtype", options->dtype, "element type, e.g. f16");
  ls->add_option("--arch", options->arch, "architecture, e.g. sm_80");
  ls->add_option("--where", options->where,
                 "shape filter: FIELD OP INTEGER joined by 'and', e.g. 'm>=1024 and k<=4096'");
  ls->add_option("--limit", options->limit, "at most this many problems (0: all)");
  ls->add_option("--sort", options->sort,
                 "order: op (op, dtype, arch, key), key, time (the decided time, fastest first; "
                 "untuned last), age (newest first)")
      ->check(CLI::IsMember({"op", "key", "time", "age"}))
      ->capture_default_str();

  CLI::App *show = add_sub(*db, options, io, "show",
                           "Show a problem: spec, best config, every result ranked, resource "
                           "use, provenance",
                           run_show);
  show->add_option("key", options->key,
                   "problem key, its hash (16 hex digits), or the spec as written for `tcjit "
                   "run` (\"gemm m=64 n=64 k=64 a=f16 b=f16:col\")")
      ->required();
  show->add_option("--arch", options->arch,
                   "a spec's arch (default: each arch tcjit targets; an error when it is stored "
                   "for several)");
  add_version_options(show, *options);

  CLI::App *ptx = add_sub(*db, options, io, "ptx", "Print the PTX of a problem's binary", run_ptx);
  CLI::App *cubin =
      add_sub(*db, options, io, "cubin", "Write the cubin of a problem's binary", run_cubin);
  for (CLI::App *sub : {ptx, cubin}) {
    sub->add_option("key", options->key, "problem key, or its hash (16 hex digits)")->required();
    sub->add_option("--arch", options->arch, "architecture (default: the problem's)");
    sub->add_option("--config", options->config,
                    "the binary's tile config, as `tcjit run` prints it (\"64x64x32 w32x32 s3 k1 "
                    "g1 va8 vb8\") or its JSON (default: the fastest measured)");
    add_version_options(sub, *options);
  }
  cubin->add_option("-o,--output", options->output, "file to write")->required();

  CLI::App *stats =
      add_sub(*db, options, io, "stats",
              "Counts, size and stale binaries given the current versions", run_stats);
  add_version_options(stats, *options);

  CLI::App *prune = add_sub(*db, options, io, "prune",
                            "Remove stale binaries and/or rows older than an age", run_prune);
  prune->add_flag("--stale", options->stale,
                  "remove binaries of other toolkit or compiler versions than the current ones");
  prune->add_option(
      "--older-than", options->older_than,
      "remove binaries, results and dispatch tables older than AGE (90s, 45m, 12h, 30d, "
      "2w)");
  prune->add_flag("--dry-run", options->dry_run,
                  "list what would be removed and write nothing (the file is opened read-only)");
  add_version_options(prune, *options);

  CLI::App *rebuild =
      add_sub(*db, options, io, "rebuild",
              "Compile the kernels of the tuned decisions that have no binary of this build's "
              "toolkit and compiler (after an upgrade or `prune --stale`)",
              run_rebuild);
  rebuild->add_option("--arch", options->arch, "only problems of this architecture");
  rebuild->add_flag("--dry-run", options->dry_run,
                    "list the kernels it would compile and write nothing");

  CLI::App *export_sub =
      add_sub(*db, options, io, "export", "Write every row as JSON Lines", run_export);
  export_sub->add_option("--format", options->format, "output format")
      ->check(CLI::IsMember({"jsonl"}))
      ->capture_default_str();
  export_sub->add_option("-o,--output", options->file, "file to write (default: standard output)");

  CLI::App *import_sub =
      add_sub(*db, options, io, "import", "Add the rows of a JSON Lines export (all or nothing)",
              run_import);
  import_sub->add_option("file", options->file, "export file, or - for standard input")->required();

  CLI::App *merge =
      add_sub(*db, options, io, "merge",
              "Add every row of another database (keeps every measurement)", run_merge);
  merge->add_option("other", options->file, "the other database file")
      ->required()
      ->check(CLI::ExistingFile);

  CLI::App *check = add_sub(*db, options, io, "check",
                            "Check the database for damage (quick_check; --full: "
                            "integrity_check) and cubin hashes",
                            run_check);
  check->add_flag("--full", options->full, "run the slower PRAGMA integrity_check");

  CLI::App *vacuum = add_sub(*db, options, io, "vacuum", "Compact the database file", run_vacuum);
  // An example in every --help (docs/cli.md lists the same commands).
  db->footer("Example: tcjit db ls --op conv2d --sort time");
  const std::pair<CLI::App *, const char *> examples[] = {
      {ls, "tcjit db ls --op gemm --dtype f16 --sort time --limit 20"},
      {show, "tcjit db show \"gemm m=64 n=64 k=64 a=f16 b=f16:col\" --json"},
      {ptx, "tcjit db ptx 84bf72828b52081f --config \"64x64x32 w32x32 s3 k1 g1 va8 vb8\""},
      {cubin, "tcjit db cubin 84bf72828b52081f --arch sm_90 -o kernel.cubin"},
      {stats, "tcjit db stats --json"},
      {prune, "tcjit db prune --older-than 30d --dry-run"},
      {rebuild, "tcjit db rebuild --dry-run"},
      {export_sub, "tcjit db export -o kernels.jsonl"},
      {import_sub, "tcjit db import kernels.jsonl --db other.db"},
      {merge, "tcjit db merge tuned-3.db --db kernels.db"},
      {check, "tcjit db check --full"},
      {vacuum, "tcjit db vacuum --db kernels.db"},
  };
  for (const auto &[sub, example] : examples)
    sub->footer(std::string("Example: ") + example);
}

void add_db_command(CLI::App &app, const DbVersions &current) {
  add_db_command(app, current, std::cout, std::cerr);
}

} // namespace tcjit::cli
