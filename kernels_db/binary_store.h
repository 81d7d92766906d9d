// Kernel binaries: (problem, config, arch, toolkit version, compiler version) -> PTX, cubin,
// cubin SHA-256, ptxas resource use, compile options and time.
// Write functions expect the caller to hold a WriteTransaction.
#pragma once

#include "kernels_db/connection.h"
#include "kernels_db/decision.h"
#include "kernels_db/records.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tcjit::kernels_db {

// What find_binary looks for. Every version field must match exactly (sm_86 is not sm_80).
// Without a config, the binary of the fastest measured config on that arch comes first (of the
// results that are plausible decisions by `rules`, decision.h), then the most recently built.
struct BinaryQuery {
  std::string problem_key;
  std::optional<std::string> config_json;
  std::string arch;
  std::string toolkit_version;
  std::string compiler_version;
  DecisionRules rules = {}; // unset parts are not judged (the value ranges always are)
};

// Inserts or replaces the binary with the same BinaryKey. Computes cubin_sha256 itself (the
// record's value is ignored). Throws DbError(not_found) when the problem is not stored.
void upsert_binary(Connection &connection, const BinaryRecord &binary);

// Visits the binaries matching `query` in order of preference until `visit` returns true.
// Hashes are not verified here (see KernelsDb::find_binary).
void visit_binary_candidates(Connection &connection, const BinaryQuery &query,
                             const std::function<bool(BinaryRecord &&)> &visit);

// Metadata of every binary of a problem, current or stale.
std::vector<BinaryInfo> list_binaries(Connection &connection, std::string_view problem_key);

// Reads a binary by its exact key (any versions), without hash verification.
std::optional<BinaryRecord> read_binary(Connection &connection, const BinaryKey &key);

} // namespace tcjit::kernels_db
