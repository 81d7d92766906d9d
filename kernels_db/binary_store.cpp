#include "kernels_db/binary_store.h"

#include "kernels_db/canonical_json.h"
#include "kernels_db/clock.h"
#include "kernels_db/error.h"
#include "kernels_db/problem_store.h"
#include "kernels_db/result_store.h"
#include "kernels_db/sha256.h"
#include "kernels_db/sqlite_blob.h"
#include "kernels_db/trust_key.h"

#include <algorithm>
#include <iterator>

namespace tcjit::kernels_db {
namespace {

// Metadata columns; ptx and cubin are read separately by rowid (read_cell).
constexpr std::string_view kBinaryColumns =
    "p.key_text, b.config_json, b.arch, b.toolkit_version, b.compiler_version, b.id, "
    "b.cubin_sha256, b.resources_json, b.compile_options, b.compile_ms, b.created_ms, b.mac";

BinaryRecord read_binary_row(Connection &connection, const Statement &statement,
                             const std::string &trust_key) {
  BinaryRecord binary;
  binary.key.problem_key = statement.column_text(0);
  binary.key.config_json = statement.column_text(1);
  binary.key.arch = statement.column_text(2);
  binary.key.toolkit_version = statement.column_text(3);
  binary.key.compiler_version = statement.column_text(4);
  const int64_t rowid = statement.column_int64(5);
  read_cell(connection, "binaries", "ptx", rowid, binary.ptx);
  read_cell(connection, "binaries", "cubin", rowid, binary.cubin);
  binary.cubin_sha256 = statement.column_text(6);
  binary.resources_json = statement.column_text(7);
  binary.compile_options = statement.column_text(8);
  binary.compile_ms = statement.column_double(9);
  binary.created_ms = statement.column_int64(10);
  if (!trust_key.empty() && !statement.is_null(11))
    binary.trusted = same_mac(statement.column_text(11), binary_mac(trust_key, binary));
  return binary;
}

int64_t problem_id_of(Connection &connection, const BinaryRecord &binary) {
  const auto problem_id = find_problem_id(connection, binary.key.problem_key);
  if (!problem_id)
    throw DbError(DbErrorKind::not_found,
                  "binary for unknown problem '" + binary.key.problem_key + "'", connection.path(),
                  "store the problem (put_problem) before its binaries");
  if (binary.key.arch.empty() || binary.key.toolkit_version.empty() ||
      binary.key.compiler_version.empty())
    throw DbError(DbErrorKind::invalid_argument,
                  "binary key needs arch, toolkit version and compiler version",
                  binary.key.problem_key, "fill in every BinaryKey field");
  return *problem_id;
}

// The record as it is stored: config and resources canonical, created_ms set.
BinaryRecord stored_form(const BinaryRecord &binary) {
  BinaryRecord stored = binary;
  stored.key.config_json = canonical_json(binary.key.config_json, "binary config_json");
  stored.resources_json = canonical_json_object(binary.resources_json, "binary resources_json");
  stored.cubin_sha256 = sha256_hex(binary.cubin);
  if (stored.created_ms == 0)
    stored.created_ms = now_unix_ms();
  return stored;
}

void bind_binary(Statement &statement, int64_t problem_id, const BinaryRecord &stored) {
  statement.bind(1, problem_id);
  statement.bind(2, stored.key.config_json);
  statement.bind(3, stored.key.arch);
  statement.bind(4, stored.key.toolkit_version);
  statement.bind(5, stored.key.compiler_version);
  statement.bind(6, stored.ptx);
  statement.bind_blob(7, stored.cubin);
  statement.bind(8, stored.cubin_sha256);
  statement.bind(9, stored.resources_json);
  statement.bind(10, stored.compile_options);
  statement.bind(11, stored.compile_ms);
  statement.bind(12, stored.created_ms);
}

constexpr std::string_view kInsertBinary =
    "INSERT INTO binaries (problem_id, config_json, arch, toolkit_version, compiler_version, "
    "ptx, cubin, cubin_sha256, resources_json, compile_options, compile_ms, created_ms, mac) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13) "
    "ON CONFLICT (problem_id, config_json, arch, toolkit_version, compiler_version) ";

} // namespace

void upsert_binary(Connection &connection, const BinaryRecord &binary,
                   const std::string &trust_key) {
  const int64_t problem_id = problem_id_of(connection, binary);
  const BinaryRecord stored = stored_form(binary);
  auto statement = connection.cached(
      std::string(kInsertBinary) +
      "DO UPDATE SET ptx = excluded.ptx, cubin = excluded.cubin, cubin_sha256 = "
      "excluded.cubin_sha256, resources_json = excluded.resources_json, compile_options = "
      "excluded.compile_options, compile_ms = excluded.compile_ms, created_ms = "
      "excluded.created_ms, mac = excluded.mac");
  bind_binary(*statement, problem_id, stored);
  const std::string mac = trust_key.empty() ? "" : binary_mac(trust_key, stored);
  if (mac.empty())
    statement->bind_null(13);
  else
    statement->bind(13, mac);
  statement->run();
}

bool insert_foreign_binary(Connection &connection, const BinaryRecord &binary) {
  if (binary.ptx.empty())
    throw DbError(DbErrorKind::invalid_argument, "binary with an empty PTX", binary.key.problem_key,
                  "export the binary again with `tcjit db export`");
  static constexpr uint8_t kElfMagic[] = {0x7f, 'E', 'L', 'F'};
  if (!binary.cubin.empty() &&
      (binary.cubin.size() < sizeof kElfMagic ||
       !std::equal(std::begin(kElfMagic), std::end(kElfMagic), binary.cubin.begin())))
    throw DbError(DbErrorKind::invalid_argument, "binary whose cubin is not an ELF file",
                  binary.key.problem_key, "export the binary again with `tcjit db export`");
  const int64_t problem_id = problem_id_of(connection, binary);
  const BinaryRecord stored = stored_form(binary);
  auto statement = connection.cached(std::string(kInsertBinary) + "DO NOTHING");
  bind_binary(*statement, problem_id, stored);
  statement->bind_null(13);
  statement->run();
  return connection.changes() > 0;
}

bool delete_binary(Connection &connection, const BinaryKey &key) {
  auto statement = connection.cached(
      "DELETE FROM binaries WHERE problem_id = (SELECT id FROM problems WHERE key_text = ?1) "
      "AND config_json = ?2 AND arch = ?3 AND toolkit_version = ?4 AND compiler_version = ?5");
  statement->bind(1, key.problem_key);
  statement->bind(2, canonical_json(key.config_json, "binary config_json"));
  statement->bind(3, key.arch);
  statement->bind(4, key.toolkit_version);
  statement->bind(5, key.compiler_version);
  statement->run();
  return connection.changes() > 0;
}

void visit_binary_candidates(Connection &connection, const BinaryQuery &query,
                             const std::function<bool(BinaryRecord &&)> &visit,
                             const std::string &trust_key) {
  // ?5 is NULL when any config will do.
  auto statement = connection.cached(
      "SELECT " + std::string(kBinaryColumns) +
      ", (SELECT MIN(r.median_us) FROM results r WHERE r.problem_id = b.problem_id "
      "   AND r.config_json = b.config_json AND r.arch = b.arch AND r.provenance = 'measured' "
      "   AND " +
      plausible_result_sql("r", "?6", "?7") +
      ") AS best_us "
      "FROM binaries b JOIN problems p ON p.id = b.problem_id "
      "WHERE p.key_text = ?1 AND b.arch = ?2 AND b.toolkit_version = ?3 "
      "AND b.compiler_version = ?4 AND (?5 IS NULL OR b.config_json = ?5) "
      "ORDER BY best_us IS NULL, best_us, b.created_ms DESC, b.id DESC");
  statement->bind(1, query.problem_key);
  statement->bind(2, query.arch);
  statement->bind(3, query.toolkit_version);
  statement->bind(4, query.compiler_version);
  if (query.config_json)
    statement->bind(5, canonical_json(*query.config_json, "lookup config_json"));
  else
    statement->bind_null(5);
  bind_rules(*statement, 6, 7, query.rules);
  while (statement->step())
    if (visit(read_binary_row(connection, *statement, trust_key)))
      return;
}

std::vector<BinaryInfo> list_binaries(Connection &connection, std::string_view problem_key) {
  auto statement = connection.cached(
      "SELECT p.key_text, b.config_json, b.arch, b.toolkit_version, b.compiler_version, "
      "b.cubin_sha256, length(b.cubin), length(b.ptx), b.resources_json, b.compile_options, "
      "b.compile_ms, b.created_ms FROM binaries b JOIN problems p ON p.id = b.problem_id "
      "WHERE p.key_text = ?1 ORDER BY b.arch, b.toolkit_version, b.compiler_version, "
      "b.config_json");
  statement->bind(1, problem_key);
  std::vector<BinaryInfo> binaries;
  while (statement->step()) {
    BinaryInfo info;
    info.key = {statement->column_text(0), statement->column_text(1), statement->column_text(2),
                statement->column_text(3), statement->column_text(4)};
    info.cubin_sha256 = statement->column_text(5);
    info.cubin_bytes = statement->column_int64(6);
    info.ptx_bytes = statement->column_int64(7);
    info.resources_json = statement->column_text(8);
    info.compile_options = statement->column_text(9);
    info.compile_ms = statement->column_double(10);
    info.created_ms = statement->column_int64(11);
    binaries.push_back(std::move(info));
  }
  return binaries;
}

std::optional<BinaryRecord> read_binary(Connection &connection, const BinaryKey &key,
                                        const std::string &trust_key) {
  auto statement = connection.cached(
      "SELECT " + std::string(kBinaryColumns) +
      " FROM binaries b JOIN problems p ON p.id = b.problem_id WHERE p.key_text = ?1 "
      "AND b.config_json = ?2 AND b.arch = ?3 AND b.toolkit_version = ?4 "
      "AND b.compiler_version = ?5");
  statement->bind(1, key.problem_key);
  statement->bind(2, canonical_json(key.config_json, "binary config_json"));
  statement->bind(3, key.arch);
  statement->bind(4, key.toolkit_version);
  statement->bind(5, key.compiler_version);
  if (!statement->step())
    return std::nullopt;
  return read_binary_row(connection, *statement, trust_key);
}

} // namespace tcjit::kernels_db
