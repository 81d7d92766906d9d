#include "kernels_db/prune.h"

#include "kernels_db/clock.h"
#include "kernels_db/transaction.h"

namespace tcjit::kernels_db {

PruneReport prune(Connection &connection, const PruneOptions &options) {
  PruneReport report;
  if (!options.stale_versions && !options.older_than)
    return report;
  WriteTransaction transaction(connection);
  if (options.stale_versions) {
    Statement statement =
        connection.prepare(std::string("DELETE FROM binaries WHERE ") + kStaleBinarySql);
    statement.bind(1, options.stale_versions->toolkit_version);
    statement.bind(2, options.stale_versions->compiler_version);
    statement.run();
    report.binaries_removed += connection.changes();
  }
  if (options.older_than) {
    const int64_t now = options.now_ms != 0 ? options.now_ms : now_unix_ms();
    const int64_t cutoff = now - options.older_than->count();
    // A problem's link older than the cutoff goes; a binary goes only when it is that old too and
    // no problem uses it any more (one binary serves every problem of its kernel identity).
    Statement links = connection.prepare("DELETE FROM problem_binaries WHERE created_ms < ?1");
    links.bind(1, cutoff);
    links.run();
    Statement binaries = connection.prepare(
        "DELETE FROM binaries WHERE created_ms < ?1 "
        "AND NOT EXISTS (SELECT 1 FROM problem_binaries l WHERE l.binary_id = binaries.id)");
    binaries.bind(1, cutoff);
    binaries.run();
    report.binaries_removed += connection.changes();
    Statement results = connection.prepare("DELETE FROM results WHERE measured_ms < ?1");
    results.bind(1, cutoff);
    results.run();
    report.results_removed += connection.changes();
    Statement tables = connection.prepare("DELETE FROM dispatch_tables WHERE created_ms < ?1");
    tables.bind(1, cutoff);
    tables.run(); // entries go by ON DELETE CASCADE
    report.dispatch_tables_removed += connection.changes();
    Statement problems = connection.prepare(
        "DELETE FROM problems WHERE created_ms < ?1 "
        "AND NOT EXISTS (SELECT 1 FROM problem_binaries l WHERE l.problem_id = problems.id) "
        "AND NOT EXISTS (SELECT 1 FROM results r WHERE r.problem_id = problems.id) "
        "AND NOT EXISTS (SELECT 1 FROM dispatch_tables d WHERE d.problem_id = problems.id)");
    problems.bind(1, cutoff);
    problems.run();
    report.problems_removed += connection.changes();
  }
  transaction.commit();
  return report;
}

} // namespace tcjit::kernels_db
