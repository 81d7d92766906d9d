// Removal of stale binaries (other toolkit or compiler version) and of old rows.
#pragma once

#include "kernels_db/connection.h"
#include "kernels_db/current_versions.h"

#include <chrono>
#include <optional>

namespace tcjit::kernels_db {

struct PruneOptions {
  // Remove binaries built by another toolkit or compiler version than `current`.
  std::optional<CurrentVersions> stale_versions;
  // Remove problems' links to binaries, results and dispatch tables created before now -
  // older_than, binaries older than that which no problem links any more, and problems older than
  // that which keep none of them. (Dispatch tables are never "stale": they name configs, not
  // binaries.)
  std::optional<std::chrono::milliseconds> older_than;
  int64_t now_ms = 0; // 0: now
};

struct PruneReport {
  int64_t binaries_removed = 0;
  int64_t results_removed = 0;
  int64_t problems_removed = 0;
  int64_t dispatch_tables_removed = 0;
};

// One write transaction. Does nothing when neither option is set.
PruneReport prune(Connection &connection, const PruneOptions &options);

} // namespace tcjit::kernels_db
