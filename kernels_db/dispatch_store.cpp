#include "kernels_db/dispatch_store.h"

#include "kernels_db/canonical_json.h"
#include "kernels_db/clock.h"
#include "kernels_db/dispatch.h"
#include "kernels_db/error.h"
#include "kernels_db/problem_store.h"

#include <string>

namespace tcjit::kernels_db {
namespace {

constexpr std::string_view kTableColumns = "d.id, p.key_text, d.arch, d.tuner_version, "
                                           "d.created_ms FROM dispatch_tables d JOIN problems p "
                                           "ON p.id = d.problem_id";

std::vector<DispatchEntry> read_entries(Connection &connection, int64_t table_id) {
  auto statement = connection.cached("SELECT dims_json, config_json, time_us, provenance FROM "
                                     "dispatch_entries WHERE table_id = ?1 ORDER BY position");
  statement->bind(1, table_id);
  std::vector<DispatchEntry> entries;
  while (statement->step()) {
    DispatchEntry entry;
    entry.dims_json = statement->column_text(0);
    entry.config_json = statement->column_text(1);
    entry.time_us = statement->column_double(2);
    entry.provenance = parse_provenance_kind(statement->column_text(3));
    entries.push_back(std::move(entry));
  }
  return entries;
}

// Runs a SELECT of kTableColumns and reads every table with its entries.
std::vector<DispatchTable> read_tables(Connection &connection, Statement &statement) {
  std::vector<std::pair<int64_t, DispatchTable>> rows;
  while (statement.step()) {
    DispatchTable table;
    table.problem_key = statement.column_text(1);
    table.arch = statement.column_text(2);
    table.tuner_version = statement.column_text(3);
    table.created_ms = statement.column_int64(4);
    rows.emplace_back(statement.column_int64(0), std::move(table));
  }
  statement.reset();
  std::vector<DispatchTable> tables;
  for (auto &[id, table] : rows) {
    table.entries = read_entries(connection, id);
    tables.push_back(std::move(table));
  }
  return tables;
}

} // namespace

void replace_dispatch_table(Connection &connection, const DispatchTable &input) {
  validate_dispatch_table(input);
  const auto problem_id = find_problem_id(connection, input.problem_key);
  if (!problem_id)
    throw DbError(DbErrorKind::not_found,
                  "dispatch table for unknown problem '" + input.problem_key + "'",
                  connection.path(), "store the problem (put_problem) before its dispatch table");
  {
    auto remove = connection.cached(
        "DELETE FROM dispatch_tables WHERE problem_id = ?1 AND arch = ?2 AND tuner_version = ?3");
    remove->bind(1, *problem_id);
    remove->bind(2, input.arch);
    remove->bind(3, input.tuner_version);
    remove->run(); // its entries go by ON DELETE CASCADE
  }
  int64_t table_id = 0;
  {
    auto insert = connection.cached("INSERT INTO dispatch_tables (problem_id, arch, "
                                    "tuner_version, created_ms) VALUES (?1, ?2, ?3, ?4) "
                                    "RETURNING id");
    insert->bind(1, *problem_id);
    insert->bind(2, input.arch);
    insert->bind(3, input.tuner_version);
    insert->bind(4, input.created_ms != 0 ? input.created_ms : now_unix_ms());
    if (!insert->step())
      throw DbError(DbErrorKind::sqlite, "insert of a dispatch table returned no id",
                    connection.path(), "please report this");
    table_id = insert->column_int64(0);
    insert->run();
  }
  auto entry_insert = connection.cached(
      "INSERT INTO dispatch_entries (table_id, position, dims_json, config_json, time_us, "
      "provenance) VALUES (?1, ?2, ?3, ?4, ?5, ?6)");
  for (size_t i = 0; i < input.entries.size(); ++i) {
    const DispatchEntry &entry = input.entries[i];
    entry_insert->bind(1, table_id);
    entry_insert->bind(2, static_cast<int64_t>(i));
    entry_insert->bind(3, canonical_dispatch_dims(entry.dims_json));
    entry_insert->bind(4, canonical_json_object(entry.config_json, "dispatch config_json"));
    entry_insert->bind(5, entry.time_us);
    entry_insert->bind(6, to_string(entry.provenance));
    entry_insert->run();
    entry_insert->reset();
  }
}

std::optional<DispatchTable> find_dispatch_table(Connection &connection,
                                                 std::string_view problem_key,
                                                 std::string_view arch,
                                                 std::optional<std::string_view> tuner_version) {
  auto statement = connection.cached(
      "SELECT " + std::string(kTableColumns) +
      " WHERE p.key_text = ?1 AND d.arch = ?2 AND (?3 IS NULL OR d.tuner_version = ?3) "
      "ORDER BY d.created_ms DESC, d.id DESC LIMIT 1");
  statement->bind(1, problem_key);
  statement->bind(2, arch);
  if (tuner_version)
    statement->bind(3, *tuner_version);
  else
    statement->bind_null(3);
  std::vector<DispatchTable> tables = read_tables(connection, *statement);
  if (tables.empty())
    return std::nullopt;
  return std::move(tables.front());
}

std::optional<DispatchTable>
decided_dispatch_table(Connection &connection, std::string_view problem_key, std::string_view arch,
                       const DecisionRules &rules, std::vector<std::string> *ignored) {
  auto statement = connection.cached("SELECT " + std::string(kTableColumns) +
                                     " WHERE p.key_text = ?1 AND d.arch = ?2 ORDER BY d.id");
  statement->bind(1, problem_key);
  statement->bind(2, arch);
  std::optional<DispatchTable> best;
  for (DispatchTable &table : read_tables(connection, *statement)) {
    std::optional<std::string> why = implausible_dispatch_table(table, rules);
    if (!why) {
      try {
        validate_dispatch_table(table);
      } catch (const DbError &error) {
        if (error.kind() != DbErrorKind::invalid_argument)
          throw;
        why = "invalid: " + error.problem();
      }
    }
    if (why) {
      if (ignored)
        ignored->push_back("tuner " + table.tuner_version + ": " + *why);
      continue;
    }
    if (!best || better_dispatch_table(table, *best))
      best = std::move(table);
  }
  return best;
}

std::vector<DispatchTable> decided_dispatch_tables_of_op(Connection &connection,
                                                         std::string_view op, std::string_view arch,
                                                         const DecisionRules &rules) {
  std::vector<std::string> keys;
  {
    auto statement = connection.cached(
        "SELECT DISTINCT p.key_text, p.id FROM dispatch_tables d JOIN problems p ON p.id = "
        "d.problem_id WHERE p.op = ?1 AND d.arch = ?2 ORDER BY p.id");
    statement->bind(1, op);
    statement->bind(2, arch);
    while (statement->step())
      keys.push_back(statement->column_text(0));
    statement->reset();
  }
  std::vector<DispatchTable> tables;
  for (const std::string &key : keys)
    if (auto table = decided_dispatch_table(connection, key, arch, rules))
      tables.push_back(std::move(*table));
  return tables;
}

std::optional<DispatchTable> read_dispatch_table(Connection &connection,
                                                 std::string_view problem_key,
                                                 std::string_view arch,
                                                 std::string_view tuner_version) {
  return find_dispatch_table(connection, problem_key, arch, tuner_version);
}

std::vector<DispatchTable> list_dispatch_tables(Connection &connection,
                                                std::string_view problem_key) {
  Statement statement =
      connection.prepare("SELECT " + std::string(kTableColumns) +
                         " WHERE p.key_text = ?1 ORDER BY d.created_ms DESC, d.id DESC");
  statement.bind(1, problem_key);
  return read_tables(connection, statement);
}

std::vector<DispatchTable> all_dispatch_tables(Connection &connection) {
  Statement statement =
      connection.prepare("SELECT " + std::string(kTableColumns) + " ORDER BY d.id");
  return read_tables(connection, statement);
}

} // namespace tcjit::kernels_db
