// Canonical JSON text: object keys sorted, no whitespace. Configs are stored and compared by this
// text (by value, never by an index), so equal configs written differently match.
#pragma once

#include <string>
#include <string_view>

namespace tcjit::kernels_db {

// Throws DbError(invalid_argument) naming `what` when `text` is not JSON. An empty text stands for
// `{}` (for `what`s that allow it: see require_object).
std::string canonical_json(std::string_view text, std::string_view what);
// As canonical_json, and requires a JSON object.
std::string canonical_json_object(std::string_view text, std::string_view what);

} // namespace tcjit::kernels_db
