// The check every `--db PATH` option of the CLI takes: an empty path is refused (it would
// otherwise fall back to the default database, and a writing command would write there).
#pragma once

#include <CLI/CLI.hpp>

#include <string>

namespace tcjit::cli {

inline CLI::Validator non_empty_db_path() {
  return CLI::Validator(
      [](std::string &path) {
        return path.empty() ? std::string("an empty path is not a database file; pass a file "
                                          "path, or leave --db out for the default database")
                            : std::string();
      },
      "PATH");
}

} // namespace tcjit::cli
