// Kernel binaries: one per (kernel identity, arch, toolkit version, compiler version) -> PTX,
// cubin, cubin SHA-256, ptxas resource use, compile options and time; and the links
// (problem_binaries) from (problem, config) to the binary that serves it, so that every problem
// whose config plans the same kernel shares one binary. Write functions expect the caller to hold a
// WriteTransaction.
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
  // The identity of the kernel that the config plans (BinaryRecord::kernel_identity): when set, the
  // stored binary of that identity comes first, linked to the problem or not (a new size of a
  // stored kernel), then the problem's linked binaries. A binary is `trusted` only for its own
  // identity: a linked binary of another identity is returned untrusted.
  std::optional<std::string> kernel_identity = std::nullopt;
};

// Inserts or replaces the binary of the record's kernel identity (and arch and versions), and links
// the record's problem and config to it (replacing its link to another binary of the same arch and
// versions; a binary left without links by that, a placeholder's, is deleted). Computes
// cubin_sha256 itself (the record's value is ignored) and, when `trust_key` is not empty, the
// row's MAC (binary_mac over the stored, canonical values); an empty key stores the row without
// one (foreign). Throws DbError(not_found) when the problem is not stored.
void upsert_binary(Connection &connection, const BinaryRecord &binary,
                   const std::string &trust_key = "");

// Links the problem and config of `key` to the stored binary of `kernel_identity` (and key's arch
// and versions), as upsert_binary does; false when no such binary is stored. Throws
// DbError(not_found) when the problem is not stored.
bool link_binary(Connection &connection, const BinaryKey &key, const std::string &kernel_identity);

// Stores a binary that comes from elsewhere (import, merge): without a MAC, and never over a
// stored binary: when the problem and config already have a binary of that arch and versions
// nothing is stored (returns false); else they are linked to the stored binary of that identity,
// or to this one, stored anew. Throws DbError(invalid_argument) for an empty PTX or a cubin that
// is neither empty (PTX only) nor an ELF file, and DbError(not_found) when the problem is not
// stored.
bool insert_foreign_binary(Connection &connection, const BinaryRecord &binary);

// Deletes the binary linked to `key` (for every problem that shares it: a kernel set aside);
// false when there was none.
bool delete_binary(Connection &connection, const BinaryKey &key);

// Visits the binaries matching `query` in order of preference until `visit` returns true.
// Hashes are not verified here (see KernelsDb::find_binary); `trusted` is set when `trust_key` is
// not empty and the row's MAC is binary_mac under it.
void visit_binary_candidates(Connection &connection, const BinaryQuery &query,
                             const std::function<bool(BinaryRecord &&)> &visit,
                             const std::string &trust_key = "");

// Metadata of every binary linked to a problem, current or stale.
std::vector<BinaryInfo> list_binaries(Connection &connection, std::string_view problem_key);

// Reads a binary by its exact key (any versions), without hash verification; `trusted` as in
// visit_binary_candidates.
std::optional<BinaryRecord> read_binary(Connection &connection, const BinaryKey &key,
                                        const std::string &trust_key = "");

} // namespace tcjit::kernels_db
