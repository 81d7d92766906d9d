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

// Metadata columns of a binary reached through a link (l) or by identity (no link: NULL config);
// ptx and cubin are read separately by rowid (read_cell).
constexpr std::string_view kBinaryColumns =
    "b.arch, b.toolkit_version, b.compiler_version, b.id, b.cubin_sha256, b.resources_json, "
    "b.compile_options, b.compile_ms, b.created_ms, b.mac, b.kernel_identity";

// Reads kBinaryColumns from column `first` on; key.problem_key and key.config_json are the
// caller's. `wanted_identity`, when set, is the only identity the binary is trusted for.
BinaryRecord read_binary_row(Connection &connection, const Statement &statement, int first,
                             const std::string &trust_key,
                             const std::optional<std::string> &wanted_identity) {
  BinaryRecord binary;
  binary.key.arch = statement.column_text(first);
  binary.key.toolkit_version = statement.column_text(first + 1);
  binary.key.compiler_version = statement.column_text(first + 2);
  const int64_t rowid = statement.column_int64(first + 3);
  read_cell(connection, "binaries", "ptx", rowid, binary.ptx);
  read_cell(connection, "binaries", "cubin", rowid, binary.cubin);
  binary.cubin_sha256 = statement.column_text(first + 4);
  binary.resources_json = statement.column_text(first + 5);
  binary.compile_options = statement.column_text(first + 6);
  binary.compile_ms = statement.column_double(first + 7);
  binary.created_ms = statement.column_int64(first + 8);
  binary.kernel_identity = statement.column_text(first + 10);
  if (!trust_key.empty() && !statement.is_null(first + 9) &&
      (!wanted_identity || *wanted_identity == binary.kernel_identity))
    binary.trusted = same_mac(statement.column_text(first + 9), binary_mac(trust_key, binary));
  return binary;
}

int64_t problem_id_of(Connection &connection, const BinaryKey &key) {
  const auto problem_id = find_problem_id(connection, key.problem_key);
  if (!problem_id)
    throw DbError(DbErrorKind::not_found, "binary for unknown problem '" + key.problem_key + "'",
                  connection.path(), "store the problem (put_problem) before its binaries");
  if (key.arch.empty() || key.toolkit_version.empty() || key.compiler_version.empty())
    throw DbError(DbErrorKind::invalid_argument,
                  "binary key needs arch, toolkit version and compiler version", key.problem_key,
                  "fill in every BinaryKey field");
  return *problem_id;
}

// The record as it is stored: config and resources canonical, identity, cubin_sha256 and
// created_ms set.
BinaryRecord stored_form(const BinaryRecord &binary) {
  BinaryRecord stored = binary;
  stored.key.config_json = canonical_json(binary.key.config_json, "binary config_json");
  stored.resources_json = canonical_json_object(binary.resources_json, "binary resources_json");
  stored.cubin_sha256 = sha256_hex(binary.cubin);
  if (stored.kernel_identity.empty())
    stored.kernel_identity = "unshared:" + stored.key.problem_key + " " + stored.key.config_json;
  if (stored.created_ms == 0)
    stored.created_ms = now_unix_ms();
  return stored;
}

constexpr std::string_view kInsertBinary =
    "INSERT INTO binaries (kernel_identity, arch, toolkit_version, compiler_version, ptx, cubin, "
    "cubin_sha256, resources_json, compile_options, compile_ms, created_ms, mac) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) "
    "ON CONFLICT (kernel_identity, arch, toolkit_version, compiler_version) ";

void bind_binary(Statement &statement, const BinaryRecord &stored, const std::string &mac) {
  statement.bind(1, stored.kernel_identity);
  statement.bind(2, stored.key.arch);
  statement.bind(3, stored.key.toolkit_version);
  statement.bind(4, stored.key.compiler_version);
  statement.bind(5, stored.ptx);
  statement.bind_blob(6, stored.cubin);
  statement.bind(7, stored.cubin_sha256);
  statement.bind(8, stored.resources_json);
  statement.bind(9, stored.compile_options);
  statement.bind(10, stored.compile_ms);
  statement.bind(11, stored.created_ms);
  if (mac.empty())
    statement.bind_null(12);
  else
    statement.bind(12, mac);
}

std::optional<int64_t> binary_id_of(Connection &connection, const std::string &identity,
                                    const BinaryKey &key) {
  auto statement =
      connection.cached("SELECT id FROM binaries WHERE kernel_identity = ?1 AND arch = ?2 AND "
                        "toolkit_version = ?3 AND compiler_version = ?4");
  statement->bind(1, identity);
  statement->bind(2, key.arch);
  statement->bind(3, key.toolkit_version);
  statement->bind(4, key.compiler_version);
  if (!statement->step())
    return std::nullopt;
  return statement->column_int64(0);
}

// The binary linked to (problem, config) for key's arch and versions, if any.
std::optional<int64_t> linked_binary_id(Connection &connection, int64_t problem_id,
                                        const std::string &config_json, const BinaryKey &key) {
  auto statement = connection.cached(
      "SELECT b.id FROM problem_binaries l JOIN binaries b ON b.id = l.binary_id "
      "WHERE l.problem_id = ?1 AND l.config_json = ?2 AND b.arch = ?3 AND b.toolkit_version = ?4 "
      "AND b.compiler_version = ?5");
  statement->bind(1, problem_id);
  statement->bind(2, config_json);
  statement->bind(3, key.arch);
  statement->bind(4, key.toolkit_version);
  statement->bind(5, key.compiler_version);
  if (!statement->step())
    return std::nullopt;
  return statement->column_int64(0);
}

// Links (problem, config) to `binary_id` (a link kept as it is: created_ms is when the problem was
// linked), in place of a link to another binary of the same arch and versions; that one is deleted
// when no link is left to it.
void relink(Connection &connection, int64_t problem_id, const std::string &config_json,
            const BinaryKey &key, int64_t binary_id, int64_t created_ms) {
  const std::optional<int64_t> old = linked_binary_id(connection, problem_id, config_json, key);
  if (old && *old != binary_id) {
    auto unlink = connection.cached("DELETE FROM problem_binaries WHERE problem_id = ?1 AND "
                                    "config_json = ?2 AND binary_id = ?3");
    unlink->bind(1, problem_id);
    unlink->bind(2, config_json);
    unlink->bind(3, *old);
    unlink->run();
    auto orphan = connection.cached("DELETE FROM binaries WHERE id = ?1 AND NOT EXISTS (SELECT 1 "
                                    "FROM problem_binaries l WHERE l.binary_id = ?1)");
    orphan->bind(1, *old);
    orphan->run();
  }
  auto link = connection.cached(
      "INSERT INTO problem_binaries (problem_id, config_json, binary_id, created_ms) "
      "VALUES (?1, ?2, ?3, ?4) ON CONFLICT (problem_id, config_json, binary_id) DO NOTHING");
  link->bind(1, problem_id);
  link->bind(2, config_json);
  link->bind(3, binary_id);
  link->bind(4, created_ms);
  link->run();
}

} // namespace

void upsert_binary(Connection &connection, const BinaryRecord &binary,
                   const std::string &trust_key) {
  const int64_t problem_id = problem_id_of(connection, binary.key);
  const BinaryRecord stored = stored_form(binary);
  auto statement = connection.cached(
      std::string(kInsertBinary) +
      "DO UPDATE SET ptx = excluded.ptx, cubin = excluded.cubin, cubin_sha256 = "
      "excluded.cubin_sha256, resources_json = excluded.resources_json, compile_options = "
      "excluded.compile_options, compile_ms = excluded.compile_ms, created_ms = "
      "excluded.created_ms, mac = excluded.mac");
  bind_binary(*statement, stored, trust_key.empty() ? "" : binary_mac(trust_key, stored));
  statement->run();
  const auto binary_id = binary_id_of(connection, stored.kernel_identity, stored.key);
  // The problem's link dates from the binary's store (its created_ms: now, unless the record says
  // when it was built), so that `prune --older-than` treats the two alike.
  relink(connection, problem_id, stored.key.config_json, stored.key, *binary_id, stored.created_ms);
}

bool link_binary(Connection &connection, const BinaryKey &key, const std::string &kernel_identity) {
  const int64_t problem_id = problem_id_of(connection, key);
  const auto binary_id = binary_id_of(connection, kernel_identity, key);
  if (!binary_id)
    return false;
  relink(connection, problem_id, canonical_json(key.config_json, "binary config_json"), key,
         *binary_id, now_unix_ms());
  return true;
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
  const int64_t problem_id = problem_id_of(connection, binary.key);
  const BinaryRecord stored = stored_form(binary);
  if (linked_binary_id(connection, problem_id, stored.key.config_json, stored.key))
    return false; // never over a stored binary
  std::optional<int64_t> binary_id = binary_id_of(connection, stored.kernel_identity, stored.key);
  if (!binary_id) {
    auto statement = connection.cached(std::string(kInsertBinary) + "DO NOTHING");
    bind_binary(*statement, stored, "");
    statement->run();
    binary_id = binary_id_of(connection, stored.kernel_identity, stored.key);
  }
  relink(connection, problem_id, stored.key.config_json, stored.key, *binary_id, stored.created_ms);
  return true;
}

bool delete_binary(Connection &connection, const BinaryKey &key) {
  auto statement = connection.cached(
      "DELETE FROM binaries WHERE id IN (SELECT l.binary_id FROM problem_binaries l "
      "JOIN problems p ON p.id = l.problem_id WHERE p.key_text = ?1 AND l.config_json = ?2) "
      "AND arch = ?3 AND toolkit_version = ?4 AND compiler_version = ?5");
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
  const std::optional<std::string> config =
      query.config_json ? std::optional(canonical_json(*query.config_json, "lookup config_json"))
                        : std::nullopt;
  std::optional<int64_t> visited;
  if (query.kernel_identity) {
    auto statement = connection.cached(
        "SELECT " + std::string(kBinaryColumns) +
        ", EXISTS (SELECT 1 FROM problem_binaries l JOIN problems p ON p.id = l.problem_id "
        "  WHERE l.binary_id = b.id AND p.key_text = ?5 AND (?6 IS NULL OR l.config_json = ?6)) "
        "FROM binaries b WHERE b.kernel_identity = ?1 AND b.arch = ?2 AND b.toolkit_version = ?3 "
        "AND b.compiler_version = ?4");
    statement->bind(1, *query.kernel_identity);
    statement->bind(2, query.arch);
    statement->bind(3, query.toolkit_version);
    statement->bind(4, query.compiler_version);
    statement->bind(5, query.problem_key);
    if (config)
      statement->bind(6, *config);
    else
      statement->bind_null(6);
    if (statement->step()) {
      visited = statement->column_int64(3);
      const bool linked = statement->column_int64(11) != 0;
      BinaryRecord binary =
          read_binary_row(connection, *statement, 0, trust_key, query.kernel_identity);
      binary.key.problem_key = query.problem_key;
      binary.key.config_json = config.value_or("");
      binary.linked = linked;
      statement->reset();
      if (visit(std::move(binary)))
        return;
    }
  }
  // ?5 is NULL when any config will do.
  auto statement = connection.cached(
      "SELECT p.key_text, l.config_json, " + std::string(kBinaryColumns) +
      ", (SELECT MIN(r.median_us) FROM results r WHERE r.problem_id = l.problem_id "
      "   AND r.config_json = l.config_json AND r.arch = b.arch AND r.provenance = 'measured' "
      "   AND " +
      plausible_result_sql("r", "?6", "?7") +
      ") AS best_us "
      "FROM problem_binaries l JOIN binaries b ON b.id = l.binary_id "
      "JOIN problems p ON p.id = l.problem_id "
      "WHERE p.key_text = ?1 AND b.arch = ?2 AND b.toolkit_version = ?3 "
      "AND b.compiler_version = ?4 AND (?5 IS NULL OR l.config_json = ?5) "
      "ORDER BY best_us IS NULL, best_us, b.created_ms DESC, b.id DESC");
  statement->bind(1, query.problem_key);
  statement->bind(2, query.arch);
  statement->bind(3, query.toolkit_version);
  statement->bind(4, query.compiler_version);
  if (config)
    statement->bind(5, *config);
  else
    statement->bind_null(5);
  bind_rules(*statement, 6, 7, query.rules);
  while (statement->step()) {
    if (visited && statement->column_int64(5) == *visited)
      continue;
    BinaryRecord binary =
        read_binary_row(connection, *statement, 2, trust_key, query.kernel_identity);
    binary.key.problem_key = statement->column_text(0);
    binary.key.config_json = statement->column_text(1);
    if (visit(std::move(binary)))
      return;
  }
}

std::vector<BinaryInfo> list_binaries(Connection &connection, std::string_view problem_key) {
  auto statement = connection.cached(
      "SELECT p.key_text, l.config_json, b.arch, b.toolkit_version, b.compiler_version, "
      "b.cubin_sha256, length(b.cubin), length(b.ptx), b.resources_json, b.compile_options, "
      "b.compile_ms, b.created_ms, b.kernel_identity, "
      "(SELECT COUNT(*) FROM problem_binaries s WHERE s.binary_id = b.id) "
      "FROM problem_binaries l JOIN binaries b ON b.id = l.binary_id "
      "JOIN problems p ON p.id = l.problem_id "
      "WHERE p.key_text = ?1 ORDER BY b.arch, b.toolkit_version, b.compiler_version, "
      "l.config_json");
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
    info.kernel_identity = statement->column_text(12);
    info.problems = statement->column_int64(13);
    binaries.push_back(std::move(info));
  }
  return binaries;
}

std::optional<BinaryRecord> read_binary(Connection &connection, const BinaryKey &key,
                                        const std::string &trust_key) {
  auto statement =
      connection.cached("SELECT p.key_text, l.config_json, " + std::string(kBinaryColumns) +
                        " FROM problem_binaries l JOIN binaries b ON b.id = l.binary_id "
                        "JOIN problems p ON p.id = l.problem_id WHERE p.key_text = ?1 "
                        "AND l.config_json = ?2 AND b.arch = ?3 AND b.toolkit_version = ?4 "
                        "AND b.compiler_version = ?5");
  statement->bind(1, key.problem_key);
  statement->bind(2, canonical_json(key.config_json, "binary config_json"));
  statement->bind(3, key.arch);
  statement->bind(4, key.toolkit_version);
  statement->bind(5, key.compiler_version);
  if (!statement->step())
    return std::nullopt;
  BinaryRecord binary = read_binary_row(connection, *statement, 2, trust_key, std::nullopt);
  binary.key.problem_key = statement->column_text(0);
  binary.key.config_json = statement->column_text(1);
  return binary;
}

} // namespace tcjit::kernels_db
