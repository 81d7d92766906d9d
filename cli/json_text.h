// How every command prints JSON: text from the command line, a file or the database may hold any
// bytes, so invalid UTF-8 is written as U+FFFD instead of ending in nlohmann's type_error 316.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace tcjit::cli {

// `value` as text; indent < 0: one line.
inline std::string json_text(const nlohmann::json &value, int indent = -1) {
  return value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace);
}

} // namespace tcjit::cli
