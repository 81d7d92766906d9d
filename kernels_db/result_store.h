// Tuning results: every measurement is kept, stored by value (canonical config JSON). Identical
// rows (same content hash) are stored once.
// Write functions expect the caller to hold a WriteTransaction.
#pragma once

#include "kernels_db/connection.h"
#include "kernels_db/decision.h"
#include "kernels_db/records.h"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tcjit::kernels_db {

// The SHA-256 of the result's canonical JSON form: two rows are identical when it matches.
std::string result_content_sha256(const ResultRecord &result);

// Inserts the result; false when an identical row is already stored. `result.config_json` is
// canonicalized; measured_ms = 0 means now. Throws DbError(not_found) for an unknown problem.
bool insert_result(Connection &connection, const ResultRecord &result);

// Every result of a problem, best first: ok before failed/illegal, a row with a time before one
// without, measured before emulated before predicted, then by median time.
std::vector<ResultRecord> ranked_results(Connection &connection, std::string_view problem_key);

// Every result of the database with its rowid, in rowid order (for merge).
std::vector<std::pair<int64_t, ResultRecord>> all_results(Connection &connection);

// The best plausible ok result of a problem on `arch` (and on `device` when given), measured
// results first (the ranking above); an implausible one (decision.h, judged by `rules`) is ignored.
std::optional<ResultRecord> best_result(Connection &connection, std::string_view problem_key,
                                        std::string_view arch,
                                        std::optional<std::string_view> device = std::nullopt,
                                        const DecisionRules &rules = {});

// Binds the parameters of plausible_result_sql (decision.h): now_ms + kClockSkewMs and the tuner
// format, each NULL when `rules` leaves it unset.
void bind_rules(Statement &statement, int now_limit, int tuner_format, const DecisionRules &rules);

} // namespace tcjit::kernels_db
