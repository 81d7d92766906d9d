// Merging another kernel database into this one (`tcjit db merge OTHER.db`).
#pragma once

#include "kernels_db/connection.h"
#include "kernels_db/decision.h"
#include "kernels_db/jsonl_io.h"

#include <filesystem>

namespace tcjit::kernels_db {

// Copies every problem, binary, result and dispatch table of `other` into `connection` in one
// write transaction. Every measurement is kept; identical results are stored once; for problems
// and binaries present in both, ours is kept (unless our cubin is damaged). For a dispatch table
// of the same (problem, arch, tuner version) in both, the better decision is kept
// (decision.h better_dispatch_table: stronger evidence, then the smaller time, then a
// deterministic tie-break), ours when they are equal; an invalid or implausible table of `other`
// is skipped (dispatch_tables_rejected), and so are results and binaries with values out of
// range or implausible results (`rejected`, each named). A calibration is judged like an import's
// (implausible_calibration: refused and named when it fails) and kept when newer than ours. "Best"
// per problem and device stays a query (best_result). `other` is never written or migrated: it is
// copied into memory through a read-only connection (immutable when no process uses it, so no
// -wal/-shm file appears next to it) and checked there; a copy of an older schema is migrated in
// memory. A newer one, another program's file and one with schema objects tcjit did not create
// (named) are refused. Only rows are copied, never a schema object.
TransferCounts merge_database(Connection &connection, const std::filesystem::path &other,
                              const DecisionRules &rules);

} // namespace tcjit::kernels_db
