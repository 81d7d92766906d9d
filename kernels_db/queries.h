// Read-only queries behind `tcjit db ls`, `show` and `stats`.
#pragma once

#include "kernels_db/connection.h"
#include "kernels_db/current_versions.h"
#include "kernels_db/decision.h"
#include "kernels_db/records.h"

#include <optional>
#include <string>
#include <vector>

namespace tcjit::kernels_db {

struct ListFilter {
  std::optional<std::string> op;    // exact, e.g. "gemm"
  std::optional<std::string> dtype; // exact, e.g. "f16"
  std::optional<std::string> arch;  // exact, e.g. "sm_80"
  std::string where;                // see where_expr.h, e.g. "m>=1024 and k=64"
  int64_t limit = 0;                // 0: no limit
  DecisionRules rules = {};         // best_median_us: plausible results only (decision.h)
};

struct ProblemSummary {
  ProblemRecord problem;
  int64_t binaries = 0;
  int64_t results = 0;
  int64_t dispatch_tables = 0;
  std::optional<double> best_median_us; // fastest plausible ok measured result, any device
};

// Problems matching the filter, ordered by op, dtype, arch, key.
// Throws DbError(invalid_argument) for a malformed `where`.
std::vector<ProblemSummary> list_problems(Connection &connection, const ListFilter &filter);

struct ProblemDetails {
  ProblemRecord problem;
  std::vector<ResultRecord> results; // best first (ranked_results)
  std::vector<BinaryInfo> binaries;
  std::vector<DispatchTable> dispatch_tables; // newest first
};

// Finds problems by exact key text, else by hash (16 hex digits or 0x...). Several problems when
// keys share a hash; empty when nothing matches.
std::vector<ProblemDetails> show_problems(Connection &connection, std::string_view key_or_hash);

struct DbStats {
  int64_t problems = 0;
  int64_t binaries = 0;
  int64_t results = 0;
  int64_t dispatch_tables = 0;
  int64_t dispatch_entries = 0;
  int64_t stale_binaries = 0; // built by another toolkit or compiler version than `current`
  int64_t cubin_bytes = 0;
  int64_t ptx_bytes = 0;
  int64_t file_bytes = 0; // database file (page_count * page_size)
  int64_t wal_bytes = 0;  // size of the -wal file, 0 if none
  int64_t free_pages = 0;
  int schema_version = 0;
  CurrentVersions current;
  std::vector<std::pair<std::string, int64_t>> results_by_status;
  std::vector<std::pair<std::string, int64_t>> binaries_by_arch;
};

DbStats compute_stats(Connection &connection, const CurrentVersions &current);

} // namespace tcjit::kernels_db
