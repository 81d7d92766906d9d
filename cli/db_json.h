// The --json documents of `tcjit db ls`, `show`, `prune` and `rebuild` (docs/cli.md,
// docs/schemas/db-*.schema.json): flat objects of scalars (arrays of flat objects for the rows),
// timestamps as `*_at` (ISO 8601 UTC text) and `*_at_ms` (Unix milliseconds), times as `*_us`.
#pragma once

#include "tcjit/db.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace tcjit::cli {

// "2026-11-25T14:02:07.123Z".
std::string iso_time(int64_t unix_ms);

// A stored shape ({"m":64,"n":64,"k":64}) as text: "m=64 n=64 k=64"; malformed: the stored text.
std::string shape_text(const std::string &shape_json);

nlohmann::json ls_json(const std::vector<DbProblemSummary> &problems);
nlohmann::json show_json(const DbProblemDetails &details);
nlohmann::json prune_json(const DbPruneReport &report);
nlohmann::json rebuild_json(const DbRebuildReport &report);

} // namespace tcjit::cli
