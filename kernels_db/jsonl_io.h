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

namespace tcjit::kernels_db {

struct TransferCounts {
  int64_t problems = 0;
  int64_t binaries = 0;
  int64_t binaries_rejected = 0; // cubin does not match its sha256: not copied
  int64_t results_added = 0;
  int64_t results_already_present = 0;
  int64_t dispatch_tables = 0; // stored (import: each replaces its (problem, arch, tuner) table)
  int64_t dispatch_tables_rejected = 0; // merge: invalid tables (overlapping buckets, ...)
};

// Writes every row from one snapshot.
TransferCounts export_jsonl(Connection &connection, std::ostream &out);

// Imports in one write transaction (all or nothing). Problems and binaries are upserted (a binary
// whose cubin does not match its cubin_sha256 is rejected), results added unless identical ones
// exist, dispatch tables replace the stored table of the same (problem, arch, tuner version).
// Throws DbError(invalid_argument) naming the line.
TransferCounts import_jsonl(Connection &connection, std::istream &in);

} // namespace tcjit::kernels_db
