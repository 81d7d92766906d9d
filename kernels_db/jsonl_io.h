// Export to and import from JSON Lines: one record a line, first a header line.
//   {"type":"tcjit-kernels-db","schema":3}
//   {"type":"problem", ...problem_to_json}
//   {"type":"binary", ...binary_to_json}   (cubin as base64)
//   {"type":"result", ...result_to_json}
//   {"type":"dispatch", ...dispatch_table_to_json}   (schema >= 3)
#pragma once

#include "kernels_db/connection.h"

#include <istream>
#include <ostream>
#include <string>
#include <vector>

namespace tcjit::kernels_db {

// A record that import or merge refused: where it is ("import line 7", "OTHER.db binaries row
// 3") and why.
struct RejectedRecord {
  std::string where;
  std::string reason;
};

struct TransferCounts {
  int64_t problems = 0;
  int64_t binaries = 0;
  int64_t binaries_rejected = 0; // cubin does not match its sha256: not copied
  int64_t results_added = 0;
  int64_t results_already_present = 0;
  int64_t dispatch_tables = 0; // stored (import: each replaces its (problem, arch, tuner) table)
  int64_t dispatch_tables_rejected = 0; // merge: invalid tables (overlapping buckets, ...)
  std::vector<RejectedRecord> rejected; // import and merge: every record not stored, and why
  std::vector<std::string> warnings;    // export: records written with invalid stored JSON
};

// Writes every row from one snapshot. A row whose stored JSON column is malformed is written with
// that column as a string and "invalid_json" naming it (see record_json.h), and a warning.
TransferCounts export_jsonl(Connection &connection, std::ostream &out);

// Imports in one write transaction. The header line must come first (else DbError
// invalid_argument, nothing stored; a newer schema: DbError newer_schema). Every later record is
// validated and stored on its own (a savepoint): one that is not JSON, nests deeper than
// kMaxJsonDepth, has a field of the wrong type, refers to an unknown problem, or is a binary whose
// cubin_sha256 is missing, empty or does not match its cubin, is not stored and is listed in
// `rejected` with its line number and the reason; the good records are kept. Problems and
// binaries are upserted, results added unless identical ones exist, dispatch tables replace the
// stored table of the same (problem, arch, tuner version).
TransferCounts import_jsonl(Connection &connection, std::istream &in);

} // namespace tcjit::kernels_db
