#include "kernels_db/prune_preview.h"

#include "kernels_db/clock.h"
#include "kernels_db/key_hash.h"
#include "kernels_db/transaction.h"

#include <set>
#include <utility>

namespace tcjit::kernels_db {
namespace {

// Appends the rows of `sql` (id, problem key, arch, config, time, toolkit, compiler, key hash) to
// `rows`, each id once (`seen`): a binary both stale and old is removed, and listed, once. `why`
// "" says "stale: toolkit ..., compiler ..." from the row.
void read_rows(Connection &connection, const std::string &sql,
               const std::vector<std::pair<int, std::string>> &texts,
               const std::vector<std::pair<int, int64_t>> &integers, const char *kind,
               const std::string &why, std::set<int64_t> &seen, std::vector<PrunedRow> &rows) {
  Statement statement = connection.prepare(sql);
  for (const auto &[index, text] : texts)
    statement.bind(index, text);
  for (const auto &[index, value] : integers)
    statement.bind(index, value);
  while (statement.step()) {
    if (!seen.insert(statement.column_int64(0)).second)
      continue;
    PrunedRow row;
    row.kind = kind;
    row.problem_key = statement.column_text(1);
    row.arch = statement.column_text(2);
    row.config_json = statement.column_text(3);
    row.created_ms = statement.column_int64(4);
    row.key_hash = hash_from_sql(statement.column_int64(7));
    row.why = why.empty() ? "stale: toolkit " + statement.column_text(5) + ", compiler " +
                                statement.column_text(6)
                          : why;
    rows.push_back(std::move(row));
  }
}

} // namespace

PrunePreview preview_prune(Connection &connection, const PruneOptions &options) {
  PrunePreview preview;
  if (!options.stale_versions && !options.older_than)
    return preview;
  ReadTransaction snapshot(connection);
  std::set<int64_t> binaries, results, tables, problems;
  // A binary serves every problem linked to it (problem_binaries): listed with its first link's
  // problem and config ("" for a binary no problem links).
  const std::string binary_columns =
      "SELECT b.id, COALESCE(p.key_text, ''), b.arch, COALESCE(l.config_json, ''), b.created_ms, "
      "b.toolkit_version, b.compiler_version, COALESCE(p.key_hash, 0) FROM binaries b "
      "LEFT JOIN problem_binaries l ON l.binary_id = b.id LEFT JOIN problems p ON p.id = "
      "l.problem_id WHERE ";
  // The same conditions as prune() (prune.cpp), in the same order.
  if (options.stale_versions)
    read_rows(connection, binary_columns + kStaleBinarySql + " ORDER BY b.id, l.problem_id",
              {{1, options.stale_versions->toolkit_version},
               {2, options.stale_versions->compiler_version}},
              {}, "binary", "", binaries, preview.rows);
  if (options.older_than) {
    const int64_t now = options.now_ms != 0 ? options.now_ms : now_unix_ms();
    const int64_t cutoff = now - options.older_than->count();
    const std::string why = "older than " + format_utc(cutoff);
    // Links older than the cutoff go first; a binary that old goes when no newer link keeps it.
    read_rows(connection,
              binary_columns +
                  "b.created_ms < ?1 AND NOT EXISTS (SELECT 1 FROM problem_binaries k WHERE "
                  "k.binary_id = b.id AND k.created_ms >= ?1) ORDER BY b.id, l.problem_id",
              {}, {{1, cutoff}}, "binary", why, binaries, preview.rows);
    read_rows(connection,
              "SELECT r.id, p.key_text, r.arch, r.config_json, r.measured_ms, '', '', p.key_hash "
              "FROM results "
              "r JOIN problems p ON p.id = r.problem_id WHERE r.measured_ms < ?1 ORDER BY r.id",
              {}, {{1, cutoff}}, "result", why, results, preview.rows);
    read_rows(connection,
              "SELECT d.id, p.key_text, d.arch, '', d.created_ms, '', '', p.key_hash FROM "
              "dispatch_tables d "
              "JOIN problems p ON p.id = d.problem_id WHERE d.created_ms < ?1 ORDER BY d.id",
              {}, {{1, cutoff}}, "dispatch table", why, tables, preview.rows);
    // A problem goes when it is old and keeps nothing once the rows above are gone (prune()
    // deletes them first). ?1, ?2: the current versions (kStaleBinarySql); ?3: the cutoff.
    const std::string link_kept =
        "l.created_ms >= ?3" +
        (options.stale_versions ? " AND NOT " + std::string(kStaleBinarySql) : std::string());
    std::vector<std::pair<int, std::string>> versions;
    if (options.stale_versions)
      versions = {{1, options.stale_versions->toolkit_version},
                  {2, options.stale_versions->compiler_version}};
    read_rows(
        connection,
        "SELECT p.id, p.key_text, '', '', p.created_ms, '', '', p.key_hash FROM problems p WHERE "
        "p.created_ms < ?3 AND NOT EXISTS (SELECT 1 FROM problem_binaries l JOIN binaries b ON "
        "b.id = l.binary_id WHERE l.problem_id = p.id AND " +
            link_kept +
            ") AND NOT EXISTS (SELECT 1 FROM results r WHERE r.problem_id = p.id AND "
            "r.measured_ms >= ?3) AND NOT EXISTS (SELECT 1 FROM dispatch_tables d WHERE "
            "d.problem_id = p.id AND d.created_ms >= ?3) ORDER BY p.id",
        versions, {{3, cutoff}}, "problem", why, problems, preview.rows);
  }
  preview.counts.binaries_removed = static_cast<int64_t>(binaries.size());
  preview.counts.results_removed = static_cast<int64_t>(results.size());
  preview.counts.dispatch_tables_removed = static_cast<int64_t>(tables.size());
  preview.counts.problems_removed = static_cast<int64_t>(problems.size());
  return preview;
}

} // namespace tcjit::kernels_db
