// What a prune would remove, read without writing (`tcjit db prune --dry-run`): the same rows
// prune() deletes (prune.h), found by SELECTs with the same conditions, on a read-only connection.
// tests/kernels_db/prune_preview_test.cpp checks that the preview and the prune agree.
#pragma once

#include "kernels_db/connection.h"
#include "kernels_db/prune.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tcjit::kernels_db {

struct PrunedRow {
  std::string kind;        // "binary", "result", "dispatch table", "problem"
  std::string problem_key; // the problem's key text
  uint64_t key_hash = 0;   // and its hash
  std::string arch;        // "" for a problem
  std::string config_json; // binaries and results; "" otherwise
  int64_t created_ms = 0;  // created (binaries, tables, problems) or measured (results)
  std::string why;         // "stale: toolkit 11.0, compiler 0.1.0" or "older than the cutoff"
};

struct PrunePreview {
  PruneReport counts;          // what prune() would report
  std::vector<PrunedRow> rows; // binaries, results, dispatch tables, problems, in that order
};

// One read transaction; writes nothing. Empty when neither option is set.
PrunePreview preview_prune(Connection &connection, const PruneOptions &options);

} // namespace tcjit::kernels_db
