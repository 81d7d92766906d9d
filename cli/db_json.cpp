#include "cli/db_json.h"

#include <cstdio>
#include <ctime>

namespace tcjit::cli {
namespace {

using nlohmann::json;

template <class T> json optional_value(const std::optional<T> &value) {
  return value ? json(*value) : json();
}

// A stored JSON text's field as a scalar: the value of `name` in `text` when it is a number.
json resource(const std::string &resources_json, const char *name) {
  const json resources = json::parse(resources_json, nullptr, false);
  if (!resources.is_object() || !resources.contains(name) || !resources.at(name).is_number())
    return json();
  return resources.at(name);
}

json decision_json(const DbDecision &decision) {
  return {{"arch", decision.arch},
          {"config", decision.config},
          {"config_json", decision.config_json},
          {"time_us", decision.time_us},
          {"time_from", decision.provenance},
          {"tuner_version", decision.tuner_version},
          {"source", decision.source},
          {"buckets", decision.buckets}};
}

json result_json(const DbResult &result, int rank) {
  const std::optional<DbTiming> &t = result.timing;
  return {{"rank", rank},
          {"decides", result.decides},
          {"arch", result.arch},
          {"status", result.status},
          {"config", result.config},
          {"config_json", result.config_json},
          {"median_us", t ? json(t->median_us) : json()},
          {"min_us", t ? json(t->min_us) : json()},
          {"max_us", t ? json(t->max_us) : json()},
          {"stddev_us", t ? json(t->stddev_us) : json()},
          {"tflops", optional_value(result.tflops)},
          {"provenance", result.provenance},
          {"device", result.device},
          {"driver", result.driver},
          {"clock_mhz", optional_value(result.clock_mhz)},
          {"model", result.model},
          {"tuner_version", result.tuner_version},
          {"measured_at", iso_time(result.measured_ms)},
          {"measured_at_ms", result.measured_ms},
          {"message", result.message},
          {"implausible", result.implausible}};
}

json binary_json(const DbBinary &binary) {
  return {{"arch", binary.arch},
          {"config", binary.config},
          {"config_json", binary.config_json},
          {"toolkit_version", binary.toolkit_version},
          {"compiler_version", binary.compiler_version},
          {"stale", binary.stale},
          {"registers", resource(binary.resources_json, "registers")},
          {"spill_bytes", resource(binary.resources_json, "spill_bytes")},
          {"shared_bytes", resource(binary.resources_json, "shared_bytes")},
          {"cubin_bytes", binary.cubin_bytes},
          {"ptx_bytes", binary.ptx_bytes},
          {"cubin_sha256", binary.cubin_sha256},
          {"compile_options", binary.compile_options},
          {"compile_ms", binary.compile_ms},
          {"created_at", iso_time(binary.created_ms)},
          {"created_at_ms", binary.created_ms}};
}

} // namespace

std::string iso_time(int64_t unix_ms) {
  const int64_t seconds = unix_ms >= 0 ? unix_ms / 1000 : (unix_ms - 999) / 1000;
  const auto millis = static_cast<int>(unix_ms - seconds * 1000);
  const std::time_t time = static_cast<std::time_t>(seconds);
  std::tm tm{};
  char text[64];
  if (!gmtime_r(&time, &tm) || std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm) == 0)
    return std::to_string(unix_ms) + " ms";
  char out[96];
  std::snprintf(out, sizeof out, "%s.%03dZ", text, millis);
  return out;
}

std::string shape_text(const std::string &shape_json) {
  const json shape = json::parse(shape_json, nullptr, false);
  if (!shape.is_object())
    return shape_json;
  std::string text;
  for (const auto &[name, value] : shape.items()) {
    if (value.is_structured())
      return shape_json;
    text += (text.empty() ? "" : " ") + name + "=" +
            (value.is_string() ? value.get<std::string>() : value.dump());
  }
  return text;
}

json ls_json(const std::vector<DbProblemSummary> &problems) {
  json all = json::array();
  for (const auto &summary : problems) {
    json row = json::parse(summary.problem.json);
    row["binaries"] = summary.binaries;
    row["results"] = summary.results;
    row["dispatch_tables"] = summary.dispatch_tables;
    row["best_median_us"] = optional_value(summary.best_median_us);
    const std::optional<DbDecision> &decision = summary.decision;
    row["config"] = decision ? json(decision->config) : json();
    row["time_us"] = decision ? json(decision->time_us) : json();
    row["time_from"] = decision ? json(decision->provenance) : json();
    row["decision_source"] = decision ? json(decision->source) : json();
    row["buckets"] = decision ? json(decision->buckets) : json();
    row["created_at"] = iso_time(summary.problem.created_ms);
    all.push_back(std::move(row));
  }
  return all;
}

json show_json(const DbProblemDetails &details) {
  const DbProblem &problem = details.problem;
  json object = {{"hash", problem.key_hash},
                 {"key", problem.key_text},
                 {"spec", problem.spec_text},
                 {"op", problem.op},
                 {"dtype", problem.dtype},
                 {"arch", problem.arch},
                 {"shape", shape_text(problem.shape_json)},
                 {"created_at", iso_time(problem.created_ms)},
                 {"created_at_ms", problem.created_ms}};
  object["decisions"] = json::array();
  for (const auto &decision : details.decisions)
    object["decisions"].push_back(decision_json(decision));
  object["results"] = json::array();
  int rank = 0;
  for (const auto &result : details.results)
    object["results"].push_back(result_json(result, ++rank));
  object["binaries"] = json::array();
  for (const auto &binary : details.binaries)
    object["binaries"].push_back(binary_json(binary));
  object["dispatch_entries"] = json::array();
  int table_index = 0;
  for (const auto &table : details.dispatch_tables) {
    ++table_index;
    for (const auto &entry : table.entries)
      object["dispatch_entries"].push_back({{"table", table_index},
                                            {"arch", table.arch},
                                            {"tuner_version", table.tuner_version},
                                            {"table_created_at", iso_time(table.created_ms)},
                                            {"table_created_at_ms", table.created_ms},
                                            {"implausible", table.implausible},
                                            {"bucket", entry.bucket},
                                            {"bucket_json", entry.dims_json},
                                            {"config", entry.config},
                                            {"config_json", entry.config_json},
                                            {"time_us", entry.time_us},
                                            {"time_from", entry.provenance}});
  }
  return object;
}

json prune_json(const DbPruneReport &report) {
  json object = {{"dry_run", report.dry_run},
                 {"binaries_removed", report.binaries_removed},
                 {"results_removed", report.results_removed},
                 {"problems_removed", report.problems_removed},
                 {"dispatch_tables_removed", report.dispatch_tables_removed}};
  object["rows"] = json::array();
  for (const auto &row : report.rows)
    object["rows"].push_back({{"kind", row.kind},
                              {"hash", row.hash},
                              {"key", row.key},
                              {"arch", row.arch},
                              {"config", row.config},
                              {"created_at", iso_time(row.created_ms)},
                              {"created_at_ms", row.created_ms},
                              {"why", row.why}});
  object["kernels_missing"] = json::array();
  for (const auto &missing : report.kernels_missing)
    object["kernels_missing"].push_back({{"hash", missing.hash},
                                         {"key", missing.key},
                                         {"arch", missing.arch},
                                         {"config", missing.config}});
  return object;
}

json rebuild_json(const DbRebuildReport &report) {
  json object = {
      {"compiled", report.compiled}, {"present", report.present}, {"failed", report.failed}};
  object["kernels"] = json::array();
  for (const auto &kernel : report.kernels)
    object["kernels"].push_back({{"hash", kernel.hash},
                                 {"key", kernel.key},
                                 {"arch", kernel.arch},
                                 {"config", kernel.config},
                                 {"status", kernel.status},
                                 {"message", kernel.message},
                                 {"compile_ms", kernel.compile_ms}});
  return object;
}

} // namespace tcjit::cli
