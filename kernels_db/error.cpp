#include "kernels_db/error.h"

#include <utility>

namespace tcjit::kernels_db {
namespace {

std::string compose(const std::string &problem, const std::string &where,
                    const std::string &how_to_fix) {
  std::string text = problem;
  if (!where.empty())
    text += " [" + where + "]";
  if (!how_to_fix.empty())
    text += ". How to fix: " + how_to_fix;
  return text;
}

} // namespace

DbError::DbError(DbErrorKind kind, std::string problem, std::string where, std::string how_to_fix,
                 int sqlite_code)
    : std::runtime_error(compose(problem, where, how_to_fix)), kind_(kind),
      problem_(std::move(problem)), where_(std::move(where)), how_to_fix_(std::move(how_to_fix)),
      sqlite_code_(sqlite_code) {}

} // namespace tcjit::kernels_db
