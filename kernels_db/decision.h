// Decisions are data, judged. A decision is an ok result row (which config is fastest for a
// problem) or a dispatch table (size buckets -> config). A database someone hands over may hold
// decisions that must not decide: this file says which ones, without SQLite, a compiler or a
// device. The judgement is pure: the caller passes what kernels_db cannot know (the tuner format
// version of this build, which only the tuner knows) and the current time.
//
// A decision is IMPLAUSIBLE, and is ignored wherever it is used (`db check` reports it), when
//  * its tuner version is not "tcjit-tuner N / ..." (the format tuner/tune.cpp writes), or N is
//    newer than this build's;
//  * it is dated (measured_ms, created_ms) more than kClockSkewMs in the future;
//  * a value is out of range (value_problems below): a time that is not finite and > 0, ...
// Every row (decision or not) must hold values in range; `db import` and `db merge` refuse one
// that does not, naming the field.
#pragma once

#include "kernels_db/records.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tcjit::kernels_db {

// What the judgement needs from the layers above. A part left unset is not judged: the tuner
// layer (tuner/decision.h) sets both; kernels_db alone knows the clock but not the tuner, so its
// callers that state no rules get the value ranges (and, for import and merge, the clock) judged.
struct DecisionRules {
  std::optional<int64_t> tuner_format; // this build's N in "tcjit-tuner N / ..."
  std::optional<int64_t> now_ms;       // the current time, Unix milliseconds
  // What is wrong with a calibration's values for the cost model (its constants' names and
  // ranges, the arch), one sentence each; kernels_db checks only their form
  // (calibration_store.h). Unset: not judged.
  std::function<std::vector<std::string>(const CalibrationRecord &)> calibration_check = {};
};

// Allowed clock skew between the machine that wrote a row and this one: 1 hour.
inline constexpr int64_t kClockSkewMs = 60 * 60 * 1000;
// The longest plausible kernel time: 1 hour (3.6e9 us).
inline constexpr double kMaxTimeUs = 3.6e9;
// The highest plausible throughput and clock.
inline constexpr double kMaxTflops = 1e6;
inline constexpr int64_t kMaxClockMhz = 100000;
// The longest plausible compile: 1 day.
inline constexpr double kMaxCompileMs = 24.0 * 3600 * 1000;

// N of "tcjit-tuner N / REST" (N: 1 to 9 digits, >= 1); nullopt when the text has another form.
std::optional<int64_t> tuner_format_of(std::string_view tuner_version);

// Why a value of the row is out of range (a range check that needs no rules: times finite and
// > 0 with min <= median <= max <= kMaxTimeUs, stddev >= 0, tflops in [0, kMaxTflops], clock
// in [1, kMaxClockMhz] MHz, timestamps >= 0), or nullopt when every value is in range.
std::optional<std::string> result_value_problem(const ResultRecord &result);
std::optional<std::string> dispatch_value_problem(const DispatchTable &table);
std::optional<std::string> binary_value_problem(double compile_ms, int64_t created_ms);

// Why the row may not decide (value_problem, an unknown or newer tuner version, a date in the
// future), or nullopt when it is a plausible decision. A result that is not ok decides nothing:
// only its values and date are judged.
std::optional<std::string> implausible_result(const ResultRecord &result,
                                              const DecisionRules &rules);
std::optional<std::string> implausible_dispatch_table(const DispatchTable &table,
                                                      const DecisionRules &rules);
// Why a timestamp lies in the future beyond kClockSkewMs, or nullopt.
std::optional<std::string> future_date_problem(const char *field, int64_t unix_ms,
                                               const DecisionRules &rules);

// The same judgement of a result row in SQL, for queries that pick the fastest config: true for a
// plausible ok result with a time. `alias` names the results table ("r"); `now_limit` and
// `tuner_format` are SQL expressions (bound parameters such as "?4", or "NULL"): a row dated after
// now_limit (now_ms + kClockSkewMs) or of a tuner format newer than tuner_format is implausible;
// NULL skips that part (values only). tests/kernels_db/decision_test.cpp checks that it agrees
// with implausible_result.
std::string plausible_result_sql(std::string_view alias, std::string_view now_limit,
                                 std::string_view tuner_format);

// Rank of the evidence behind a time, lower is stronger: measured 0, emulated 1, predicted 2.
int evidence_rank(ProvenanceKind kind);

// Of two plausible, valid dispatch tables for the same (problem, arch), whether `a` is the better
// decision than `b`: the stronger evidence (the weakest entry's kind) first; times are compared
// only between tables of the same tuner version (same measurer) with the same buckets, the
// smaller sum of times winning; else the newer (created_ms); then the deterministic tie-break:
// smaller tuner version text, then smaller canonical entries text. Deterministic: the same pair
// gives the same answer whatever the order they were stored in.
bool better_dispatch_table(const DispatchTable &a, const DispatchTable &b);

} // namespace tcjit::kernels_db
