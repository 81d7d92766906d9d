// Problems: canonical key text + 64-bit hash, op, dtype, arch, spec text and shape fields.
// Write functions expect the caller to hold a WriteTransaction.
#pragma once

#include "kernels_db/connection.h"
#include "kernels_db/records.h"

#include <optional>
#include <string_view>
#include <vector>

namespace tcjit::kernels_db {

// Inserts the problem or updates the row with the same key text; returns its row id.
int64_t upsert_problem(Connection &connection, const ProblemRecord &problem);

std::optional<int64_t> find_problem_id(Connection &connection, std::string_view key_text);
std::optional<ProblemRecord> find_problem(Connection &connection, std::string_view key_text);
// Several when different keys share a hash.
std::vector<ProblemRecord> find_problems_by_hash(Connection &connection, uint64_t key_hash);

// The problem columns as selected from table alias `p`, and how to read them back.
inline constexpr std::string_view kProblemColumns =
    "p.key_text, p.key_hash, p.op, p.dtype, p.arch, p.spec_text, p.shape_json, p.created_ms";
inline constexpr int kProblemColumnCount = 8;
ProblemRecord read_problem(const Statement &statement, int first_column);

} // namespace tcjit::kernels_db
