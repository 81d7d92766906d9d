#include "kernels_db/problem_store.h"

#include "kernels_db/canonical_json.h"
#include "kernels_db/clock.h"
#include "kernels_db/error.h"
#include "kernels_db/key_hash.h"

#include <string>

namespace tcjit::kernels_db {

int64_t upsert_problem(Connection &connection, const ProblemRecord &problem) {
  if (problem.key_text.empty())
    throw DbError(DbErrorKind::invalid_argument, "problem key text is empty", connection.path(),
                  "pass the canonical key of the problem");
  const std::string shape = canonical_json_object(problem.shape_json, "problem shape_json");
  auto statement = connection.cached(
      "INSERT INTO problems (key_text, key_hash, op, dtype, arch, spec_text, shape_json, "
      "created_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) "
      "ON CONFLICT (key_text) DO UPDATE SET key_hash = excluded.key_hash, op = excluded.op, "
      "dtype = excluded.dtype, arch = excluded.arch, spec_text = excluded.spec_text, "
      "shape_json = excluded.shape_json RETURNING id");
  statement->bind(1, problem.key_text);
  statement->bind(2, hash_to_sql(problem.key_hash));
  statement->bind(3, problem.op);
  statement->bind(4, problem.dtype);
  statement->bind(5, problem.arch);
  statement->bind(6, problem.spec_text);
  statement->bind(7, shape);
  statement->bind(8, problem.created_ms != 0 ? problem.created_ms : now_unix_ms());
  if (!statement->step())
    throw DbError(DbErrorKind::sqlite, "upsert of a problem returned no id", connection.path(),
                  "please report this");
  const int64_t id = statement->column_int64(0);
  statement->run();
  return id;
}

std::optional<int64_t> find_problem_id(Connection &connection, std::string_view key_text) {
  auto statement = connection.cached("SELECT id FROM problems WHERE key_text = ?1");
  statement->bind(1, key_text);
  if (!statement->step())
    return std::nullopt;
  return statement->column_int64(0);
}

ProblemRecord read_problem(const Statement &statement, int first_column) {
  ProblemRecord problem;
  problem.key_text = statement.column_text(first_column);
  problem.key_hash = hash_from_sql(statement.column_int64(first_column + 1));
  problem.op = statement.column_text(first_column + 2);
  problem.dtype = statement.column_text(first_column + 3);
  problem.arch = statement.column_text(first_column + 4);
  problem.spec_text = statement.column_text(first_column + 5);
  problem.shape_json = statement.column_text(first_column + 6);
  problem.created_ms = statement.column_int64(first_column + 7);
  return problem;
}

std::optional<ProblemRecord> find_problem(Connection &connection, std::string_view key_text) {
  auto statement = connection.cached("SELECT " + std::string(kProblemColumns) +
                                     " FROM problems p WHERE p.key_text = ?1");
  statement->bind(1, key_text);
  if (!statement->step())
    return std::nullopt;
  return read_problem(*statement, 0);
}

std::vector<ProblemRecord> find_problems_by_hash(Connection &connection, uint64_t key_hash) {
  auto statement = connection.cached("SELECT " + std::string(kProblemColumns) +
                                     " FROM problems p WHERE p.key_hash = ?1 ORDER BY p.key_text");
  statement->bind(1, hash_to_sql(key_hash));
  std::vector<ProblemRecord> problems;
  while (statement->step())
    problems.push_back(read_problem(*statement, 0));
  return problems;
}

} // namespace tcjit::kernels_db
