// Canonical JSON text: object keys sorted, no whitespace. Configs are stored and compared by this
// text (by value, never by an index), so equal configs written differently match.
#pragma once

#include <string>
#include <string_view>

namespace tcjit::kernels_db {

// The deepest nesting of arrays and objects kernels_db parses: records, configs and shapes need a
// few levels; a deeper text is refused before parsing (printing and comparing JSON recurse).
inline constexpr int kMaxJsonDepth = 64;

// The nesting depth of arrays and objects in `text` (a scan; the text need not be valid JSON).
int json_nesting_depth(std::string_view text);
// Throws DbError(invalid_argument) naming `what` when `text` nests deeper than kMaxJsonDepth.
void check_json_depth(std::string_view text, std::string_view what);

// Throws DbError(invalid_argument) naming `what` when `text` is not JSON. An empty text stands for
// `{}` (for `what`s that allow it: see require_object).
std::string canonical_json(std::string_view text, std::string_view what);
// As canonical_json, and requires a JSON object.
std::string canonical_json_object(std::string_view text, std::string_view what);

} // namespace tcjit::kernels_db
