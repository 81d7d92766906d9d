#include "kernels_db/queries.h"

#include "kernels_db/binary_store.h"
#include "kernels_db/decision.h"
#include "kernels_db/dispatch_store.h"
#include "kernels_db/key_hash.h"
#include "kernels_db/problem_store.h"
#include "kernels_db/result_store.h"
#include "kernels_db/schema.h"
#include "kernels_db/transaction.h"
#include "kernels_db/where_expr.h"

#include <filesystem>
#include <system_error>

namespace tcjit::kernels_db {

std::vector<ProblemSummary> list_problems(Connection &connection, const ListFilter &filter) {
  const WhereExpr where = parse_where(filter.where);
  // Built only from fixed fragments; every value is a bound parameter.
  std::string sql = "SELECT " + std::string(kProblemColumns) +
                    ", (SELECT COUNT(*) FROM problem_binaries l WHERE l.problem_id = p.id)"
                    ", (SELECT COUNT(*) FROM results r WHERE r.problem_id = p.id)"
                    ", (SELECT COUNT(*) FROM dispatch_tables d WHERE d.problem_id = p.id)"
                    ", (SELECT MIN(r.median_us) FROM results r WHERE r.problem_id = p.id "
                    "AND r.provenance = 'measured' AND " +
                    plausible_result_sql("r", "?1", "?2") + ") FROM problems p WHERE 1";
  int parameter = 2; // ?1, ?2: the decision rules

  std::vector<std::pair<int, std::string>> texts;
  std::vector<std::pair<int, int64_t>> integers;
  auto text_condition = [&](const char *column, const std::optional<std::string> &value) {
    if (!value)
      return;
    sql += " AND " + std::string(column) + " = ?" + std::to_string(++parameter);
    texts.emplace_back(parameter, *value);
  };
  text_condition("p.op", filter.op);
  text_condition("p.dtype", filter.dtype);
  text_condition("p.arch", filter.arch);
  for (const WhereTerm &term : where.terms) {
    const int path = ++parameter;
    const int value = ++parameter;
    sql += " AND json_type(p.shape_json, ?" + std::to_string(path) +
           ") = 'integer' AND json_extract(p.shape_json, ?" + std::to_string(path) + ") " +
           std::string(sql_operator(term.comparison)) + " ?" + std::to_string(value);
    texts.emplace_back(path, "$." + term.field);
    integers.emplace_back(value, term.value);
  }
  sql += " ORDER BY p.op, p.dtype, p.arch, p.key_text";
  if (filter.limit > 0) {
    sql += " LIMIT ?" + std::to_string(++parameter);
    integers.emplace_back(parameter, filter.limit);
  }
  Statement statement = connection.prepare(sql);
  bind_rules(statement, 1, 2, filter.rules);
  for (const auto &[index, text] : texts)
    statement.bind(index, text);
  for (const auto &[index, value] : integers)
    statement.bind(index, value);
  std::vector<ProblemSummary> summaries;
  while (statement.step()) {
    ProblemSummary summary;
    summary.problem = read_problem(statement, 0);
    summary.binaries = statement.column_int64(kProblemColumnCount);
    summary.results = statement.column_int64(kProblemColumnCount + 1);
    summary.dispatch_tables = statement.column_int64(kProblemColumnCount + 2);
    summary.best_median_us = statement.column_optional_double(kProblemColumnCount + 3);
    summaries.push_back(std::move(summary));
  }
  return summaries;
}

std::vector<ProblemDetails> show_problems(Connection &connection, std::string_view key_or_hash) {
  ReadTransaction snapshot(connection);
  std::vector<ProblemRecord> problems;
  if (auto problem = find_problem(connection, key_or_hash))
    problems.push_back(std::move(*problem));
  else if (auto hash = parse_key_hash(key_or_hash))
    problems = find_problems_by_hash(connection, *hash);
  std::vector<ProblemDetails> details;
  for (ProblemRecord &problem : problems) {
    ProblemDetails detail;
    detail.results = ranked_results(connection, problem.key_text);
    detail.binaries = list_binaries(connection, problem.key_text);
    detail.dispatch_tables = list_dispatch_tables(connection, problem.key_text);
    detail.problem = std::move(problem);
    details.push_back(std::move(detail));
  }
  return details;
}

namespace {

std::vector<std::pair<std::string, int64_t>> grouped_counts(Connection &connection,
                                                            std::string_view sql) {
  Statement statement = connection.prepare(sql);
  std::vector<std::pair<std::string, int64_t>> counts;
  while (statement.step())
    counts.emplace_back(statement.column_text(0), statement.column_int64(1));
  return counts;
}

} // namespace

DbStats compute_stats(Connection &connection, const CurrentVersions &current) {
  ReadTransaction snapshot(connection);
  DbStats stats;
  stats.current = current;
  stats.schema_version = read_schema_version(connection);
  stats.problems = query_int64(connection, "SELECT COUNT(*) FROM problems");
  stats.binaries = query_int64(connection, "SELECT COUNT(*) FROM binaries");
  stats.results = query_int64(connection, "SELECT COUNT(*) FROM results");
  stats.dispatch_tables = query_int64(connection, "SELECT COUNT(*) FROM dispatch_tables");
  stats.dispatch_entries = query_int64(connection, "SELECT COUNT(*) FROM dispatch_entries");
  stats.cubin_bytes =
      query_int64(connection, "SELECT COALESCE(SUM(length(cubin)), 0) FROM binaries");
  stats.ptx_bytes = query_int64(connection, "SELECT COALESCE(SUM(length(ptx)), 0) FROM binaries");
  {
    Statement statement =
        connection.prepare(std::string("SELECT COUNT(*) FROM binaries WHERE ") + kStaleBinarySql);
    statement.bind(1, current.toolkit_version);
    statement.bind(2, current.compiler_version);
    statement.step();
    stats.stale_binaries = statement.column_int64(0);
  }
  stats.file_bytes =
      query_int64(connection, "PRAGMA page_count") * query_int64(connection, "PRAGMA page_size");
  stats.free_pages = query_int64(connection, "PRAGMA freelist_count");
  std::error_code ec;
  const auto wal_size = std::filesystem::file_size(connection.path() + "-wal", ec);
  stats.wal_bytes = ec ? 0 : static_cast<int64_t>(wal_size);
  stats.results_by_status =
      grouped_counts(connection, "SELECT status, COUNT(*) FROM results GROUP BY status "
                                 "ORDER BY status");
  stats.binaries_by_arch =
      grouped_counts(connection, "SELECT arch, COUNT(*) FROM binaries GROUP BY arch ORDER BY arch");
  return stats;
}

} // namespace tcjit::kernels_db
