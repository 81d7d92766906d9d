#include "kernels_db/default_path.h"

#include "kernels_db/error.h"

#include <cstdlib>

namespace tcjit::kernels_db {
namespace {

const char *non_empty_env(const char *name) {
  const char *value = std::getenv(name);
  return value != nullptr && *value != '\0' ? value : nullptr;
}

} // namespace

std::filesystem::path default_db_path() {
  if (const char *explicit_path = non_empty_env("TCJIT_DB"))
    return explicit_path;
  if (const char *cache = non_empty_env("XDG_CACHE_HOME"))
    return std::filesystem::path(cache) / "tcjit" / "kernels.db";
  if (const char *home = non_empty_env("HOME"))
    return std::filesystem::path(home) / ".cache" / "tcjit" / "kernels.db";
  throw DbError(DbErrorKind::io, "cannot choose a database location", "default_db_path",
                "set $TCJIT_DB (or $XDG_CACHE_HOME or $HOME), or pass --db PATH");
}

} // namespace tcjit::kernels_db
