#include "kernels_db/result_store.h"

#include "kernels_db/canonical_json.h"
#include "kernels_db/clock.h"
#include "kernels_db/decision.h"
#include "kernels_db/error.h"
#include "kernels_db/problem_store.h"
#include "kernels_db/record_json.h"
#include "kernels_db/sha256.h"

#include <nlohmann/json.hpp>

namespace tcjit::kernels_db {
namespace {

constexpr std::string_view kResultColumns =
    "p.key_text, r.config_json, r.arch, r.status, r.median_us, r.min_us, r.max_us, r.stddev_us, "
    "r.tflops, r.provenance, r.device, r.driver, r.clock_mhz, r.model, r.tuner_version, "
    "r.measured_ms, r.message";

// Best first: ok rows with a time (measured, emulated, predicted; fastest first), then ok rows
// without one (emulated runs that were not timed), then failed and illegal ones. A row without a
// time never ranks above one with a time. Ties: the newest measurement, then the row id.
constexpr std::string_view kResultRanking =
    " ORDER BY r.status <> 'ok', r.median_us IS NULL, CASE r.provenance WHEN 'measured' THEN 0 "
    "WHEN 'emulated' THEN 1 ELSE 2 END, r.median_us, r.measured_ms DESC, r.id";

ResultRecord read_result_row(const Statement &statement) {
  ResultRecord result;
  result.problem_key = statement.column_text(0);
  result.config_json = statement.column_text(1);
  result.arch = statement.column_text(2);
  result.status = parse_result_status(statement.column_text(3));
  if (!statement.is_null(4))
    result.timing = Timing{statement.column_double(4), statement.column_double(5),
                           statement.column_double(6), statement.column_double(7)};
  result.tflops = statement.column_optional_double(8);
  result.provenance.kind = parse_provenance_kind(statement.column_text(9));
  result.provenance.device = statement.column_text(10);
  result.provenance.driver = statement.column_text(11);
  result.provenance.clock_mhz = statement.column_optional_int64(12);
  result.provenance.model = statement.column_text(13);
  result.tuner_version = statement.column_text(14);
  result.measured_ms = statement.column_int64(15);
  result.message = statement.column_text(16);
  return result;
}

} // namespace

std::string result_content_sha256(const ResultRecord &result) {
  return sha256_hex(dump_json(result_to_json(result)));
}

bool insert_result(Connection &connection, const ResultRecord &input) {
  const auto problem_id = find_problem_id(connection, input.problem_key);
  if (!problem_id)
    throw DbError(DbErrorKind::not_found, "result for unknown problem '" + input.problem_key + "'",
                  connection.path(), "store the problem (put_problem) before its results");
  ResultRecord result = input;
  result.config_json = canonical_json(result.config_json, "result config_json");
  if (result.measured_ms == 0)
    result.measured_ms = now_unix_ms();
  if (result.status == ResultStatus::ok && !result.timing &&
      result.provenance.kind != ProvenanceKind::emulated)
    throw DbError(DbErrorKind::invalid_argument, "an ok result needs a timing", result.problem_key,
                  "fill in ResultRecord::timing (median/min/max/stddev us)");
  auto statement = connection.cached(
      "INSERT INTO results (problem_id, config_json, arch, status, median_us, min_us, max_us, "
      "stddev_us, tflops, provenance, device, driver, clock_mhz, model, tuner_version, "
      "measured_ms, message, content_sha256) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, "
      "?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18) ON CONFLICT (content_sha256) DO NOTHING");
  statement->bind(1, *problem_id);
  statement->bind(2, result.config_json);
  statement->bind(3, result.arch);
  statement->bind(4, to_string(result.status));
  if (result.timing) {
    statement->bind(5, result.timing->median_us);
    statement->bind(6, result.timing->min_us);
    statement->bind(7, result.timing->max_us);
    statement->bind(8, result.timing->stddev_us);
  }
  statement->bind(9, result.tflops);
  statement->bind(10, to_string(result.provenance.kind));
  statement->bind(11, result.provenance.device);
  statement->bind(12, result.provenance.driver);
  statement->bind(13, result.provenance.clock_mhz);
  statement->bind(14, result.provenance.model);
  statement->bind(15, result.tuner_version);
  statement->bind(16, result.measured_ms);
  statement->bind(17, result.message);
  statement->bind(18, result_content_sha256(result));
  statement->run();
  return connection.changes() > 0;
}

std::vector<ResultRecord> ranked_results(Connection &connection, std::string_view problem_key) {
  auto statement = connection.cached("SELECT " + std::string(kResultColumns) +
                                     " FROM results r JOIN problems p ON p.id = r.problem_id "
                                     "WHERE p.key_text = ?1" +
                                     std::string(kResultRanking));
  statement->bind(1, problem_key);
  std::vector<ResultRecord> results;
  while (statement->step())
    results.push_back(read_result_row(*statement));
  return results;
}

std::vector<std::pair<int64_t, ResultRecord>> all_results(Connection &connection) {
  Statement statement = connection.prepare("SELECT " + std::string(kResultColumns) +
                                           ", r.id FROM results r JOIN problems p ON p.id = "
                                           "r.problem_id ORDER BY r.id");
  std::vector<std::pair<int64_t, ResultRecord>> results;
  while (statement.step())
    results.emplace_back(statement.column_int64(17), read_result_row(statement));
  return results;
}

std::optional<ResultRecord> best_result(Connection &connection, std::string_view problem_key,
                                        std::string_view arch,
                                        std::optional<std::string_view> device,
                                        const DecisionRules &rules) {
  auto statement = connection.cached(
      "SELECT " + std::string(kResultColumns) +
      " FROM results r JOIN problems p ON p.id = r.problem_id WHERE p.key_text = ?1 "
      "AND r.arch = ?2 AND r.median_us IS NOT NULL AND (?3 IS NULL OR r.device = ?3) AND " +
      plausible_result_sql("r", "?4", "?5") + std::string(kResultRanking) + " LIMIT 1");
  statement->bind(1, problem_key);
  statement->bind(2, arch);
  if (device)
    statement->bind(3, *device);
  else
    statement->bind_null(3);
  bind_rules(*statement, 4, 5, rules);
  if (!statement->step())
    return std::nullopt;
  return read_result_row(*statement);
}

void bind_rules(Statement &statement, int now_limit, int tuner_format, const DecisionRules &rules) {
  if (rules.now_ms)
    statement.bind(now_limit, *rules.now_ms + kClockSkewMs);
  else
    statement.bind_null(now_limit);
  if (rules.tuner_format)
    statement.bind(tuner_format, *rules.tuner_format);
  else
    statement.bind_null(tuner_format);
}

} // namespace tcjit::kernels_db
