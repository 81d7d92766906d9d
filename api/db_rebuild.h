// db.hpp's db_rebuild on an open database: every decided config's kernel compiled for this build
// (after a toolkit upgrade or `tcjit db prune --stale`) and stored where the runtime finds it.
#pragma once

#include "kernels_db/kernels_db.h"
#include "tcjit/db.hpp"

namespace tcjit::api {

// Throws kernels_db::DbError for a database failure; a config that does not compile is reported.
DbRebuildReport rebuild_decided_kernels(kernels_db::KernelsDb &db, const DbRebuildRequest &request);

} // namespace tcjit::api
