// Where the kernel database lives by default: $TCJIT_DB, else $XDG_CACHE_HOME/tcjit/kernels.db,
// else ~/.cache/tcjit/kernels.db.
#pragma once

#include <filesystem>

namespace tcjit::kernels_db {

// Throws DbError(io) when no location can be determined (no $TCJIT_DB, $XDG_CACHE_HOME, $HOME).
// Directories are created when the database is opened (Connection::open).
std::filesystem::path default_db_path();

} // namespace tcjit::kernels_db
