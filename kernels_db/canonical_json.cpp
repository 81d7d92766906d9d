#include "kernels_db/canonical_json.h"

#include "kernels_db/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace tcjit::kernels_db {
namespace {

nlohmann::json parse(std::string_view text, std::string_view what) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    return nlohmann::json::object();
  check_json_depth(text, what);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception &error) {
    throw DbError(DbErrorKind::invalid_argument,
                  std::string(what) + " is not valid JSON: " + error.what(), std::string(what),
                  "pass a JSON object such as {\"tile_m\":128,\"tile_n\":128}");
  }
}

} // namespace

int json_nesting_depth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

void check_json_depth(std::string_view text, std::string_view what) {
  const int depth = json_nesting_depth(text);
  if (depth > kMaxJsonDepth)
    throw DbError(DbErrorKind::invalid_argument,
                  std::string(what) + " nests arrays or objects " + std::to_string(depth) +
                      " deep (at most " + std::to_string(kMaxJsonDepth) + ")",
                  std::string(what), "pass a flat JSON object such as {\"m\":1024,\"n\":1024}");
}

std::string canonical_json(std::string_view text, std::string_view what) {
  // nlohmann::json objects are std::maps: dump() writes sorted keys and no whitespace.
  return parse(text, what).dump();
}

std::string canonical_json_object(std::string_view text, std::string_view what) {
  nlohmann::json value = parse(text, what);
  if (!value.is_object())
    throw DbError(DbErrorKind::invalid_argument, std::string(what) + " must be a JSON object",
                  std::string(what), "pass a JSON object such as {\"m\":1024,\"n\":1024}");
  return value.dump();
}

} // namespace tcjit::kernels_db
