// Merging another kernel database into this one (`tcjit db merge OTHER.db`).
#pragma once

#include "kernels_db/connection.h"
#include "kernels_db/jsonl_io.h"

#include <filesystem>

namespace tcjit::kernels_db {

// Copies every problem, binary and result of `other` into `connection` in one write
// transaction. Every measurement is kept; identical results are stored once; for problems and
// binaries present in both, ours is kept (unless our cubin is damaged). "Best" per problem and
// device stays a query (best_result). `other` is read-only, except that a database with an older
// schema is migrated first; a newer one is refused.
TransferCounts merge_database(Connection &connection, const std::filesystem::path &other);

} // namespace tcjit::kernels_db
