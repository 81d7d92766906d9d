#include "kernels_db/canonical_json.h"

#include "kernels_db/error.h"

#include <nlohmann/json.hpp>

namespace tcjit::kernels_db {
namespace {

nlohmann::json parse(std::string_view text, std::string_view what) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    return nlohmann::json::object();
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception &error) {
    throw DbError(DbErrorKind::invalid_argument,
                  std::string(what) + " is not valid JSON: " + error.what(), std::string(what),
                  "pass a JSON object such as {\"tile_m\":128,\"tile_n\":128}");
  }
}

} // namespace

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
