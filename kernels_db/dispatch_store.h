// Dispatch tables: one per (problem, arch, tuner version), its entries in their own table.
// Write functions expect the caller to hold a WriteTransaction.
#pragma once

#include "kernels_db/connection.h"
#include "kernels_db/decision.h"
#include "kernels_db/records.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tcjit::kernels_db {

// Validates the table (kernels_db/dispatch.h), canonicalizes its buckets and configs and replaces
// the stored table of the same (problem_key, arch, tuner_version). created_ms = 0 means now.
// Throws DbError(invalid_argument) for a bad table, DbError(not_found) for an unknown problem.
void replace_dispatch_table(Connection &connection, const DispatchTable &table);

// The newest table (created_ms, then last stored) of a problem on `arch`, of `tuner_version`
// when given.
std::optional<DispatchTable>
find_dispatch_table(Connection &connection, std::string_view problem_key, std::string_view arch,
                    std::optional<std::string_view> tuner_version = std::nullopt);

// The table that decides for a problem on `arch`: of its tables that are valid (dispatch.h) and
// plausible decisions by `rules` (decision.h), the best by better_dispatch_table; nullopt when
// none is. `ignored`, when given, receives "tuner VERSION: why" for every table passed over.
std::optional<DispatchTable>
decided_dispatch_table(Connection &connection, std::string_view problem_key, std::string_view arch,
                       const DecisionRules &rules, std::vector<std::string> *ignored = nullptr);

// The decided table (decided_dispatch_table) of every problem of operation `op` ("gemm",
// "conv2d", "conv3d") on `arch` that has one, in the order the problems were stored. What the
// runtime scans for the tables of a kernel family (tuner/size_family.h): the caller filters.
std::vector<DispatchTable> decided_dispatch_tables_of_op(Connection &connection,
                                                         std::string_view op, std::string_view arch,
                                                         const DecisionRules &rules);

// The stored table of exactly this (problem_key, arch, tuner_version).
std::optional<DispatchTable> read_dispatch_table(Connection &connection,
                                                 std::string_view problem_key,
                                                 std::string_view arch,
                                                 std::string_view tuner_version);

// Every table of a problem, newest first.
std::vector<DispatchTable> list_dispatch_tables(Connection &connection,
                                                std::string_view problem_key);

// Every table in the database in storage order (export, merge, check); entries read as stored,
// without validation.
std::vector<DispatchTable> all_dispatch_tables(Connection &connection);

} // namespace tcjit::kernels_db
