#include "kernels_db/decision.h"

#include <cmath>
#include <cstdio>
#include <limits>

namespace tcjit::kernels_db {
namespace {

constexpr std::string_view kTunerPrefix = "tcjit-tuner ";
constexpr std::string_view kSeparator = " / ";
constexpr size_t kMaxFormatDigits = 9;

std::string number_text(double value) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value > 0 ? "inf" : "-inf";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.9g", value);
  return buffer;
}

// A time in microseconds: finite, > 0 and at most kMaxTimeUs.
bool plausible_time(double us) {
  return std::isfinite(us) && us > 0 && us <= kMaxTimeUs;
}

std::optional<std::string> time_problem(const char *field, double us) {
  if (plausible_time(us))
    return std::nullopt;
  return std::string(field) + " " + number_text(us) +
         " is not a time in microseconds (finite, > 0, at most 3.6e9)";
}

std::optional<std::string> tuner_problem(std::string_view tuner_version,
                                         const DecisionRules &rules) {
  if (!rules.tuner_format)
    return std::nullopt;
  const auto format = tuner_format_of(tuner_version);
  if (!format)
    return "tuner version '" + std::string(tuner_version) +
           "' is not one this tcjit knows (\"tcjit-tuner N / COMPILER / MEASURER\")";
  if (*format > *rules.tuner_format)
    return "tuner version '" + std::string(tuner_version) + "' is newer than this tcjit's (" +
           std::to_string(*rules.tuner_format) + ")";
  return std::nullopt;
}

// The weakest evidence among a table's entries.
int table_evidence(const DispatchTable &table) {
  int rank = 0;
  for (const DispatchEntry &entry : table.entries)
    rank = std::max(rank, evidence_rank(entry.provenance));
  return rank;
}

bool same_buckets(const DispatchTable &a, const DispatchTable &b) {
  if (a.entries.size() != b.entries.size())
    return false;
  for (size_t i = 0; i < a.entries.size(); ++i)
    if (a.entries[i].dims_json != b.entries[i].dims_json)
      return false;
  return true;
}

double total_time(const DispatchTable &table) {
  double sum = 0;
  for (const DispatchEntry &entry : table.entries)
    sum += entry.time_us;
  return sum;
}

std::string entries_text(const DispatchTable &table) {
  std::string text;
  for (const DispatchEntry &entry : table.entries)
    text += entry.dims_json + "\n" + entry.config_json + "\n";
  return text;
}

} // namespace

std::optional<int64_t> tuner_format_of(std::string_view text) {
  if (text.substr(0, kTunerPrefix.size()) != kTunerPrefix)
    return std::nullopt;
  text.remove_prefix(kTunerPrefix.size());
  const size_t end = text.find(kSeparator);
  if (end == std::string_view::npos || end == 0 || end > kMaxFormatDigits)
    return std::nullopt;
  int64_t format = 0;
  for (size_t i = 0; i < end; ++i) {
    if (text[i] < '0' || text[i] > '9')
      return std::nullopt;
    format = format * 10 + (text[i] - '0');
  }
  if (format < 1)
    return std::nullopt;
  return format;
}

std::optional<std::string> future_date_problem(const char *field, int64_t unix_ms,
                                               const DecisionRules &rules) {
  if (!rules.now_ms || unix_ms <= *rules.now_ms || unix_ms - *rules.now_ms <= kClockSkewMs)
    return std::nullopt;
  return std::string(field) + " " + std::to_string(unix_ms) +
         " lies in the future (more than 1 hour after this machine's clock)";
}

std::optional<std::string> result_value_problem(const ResultRecord &result) {
  if (result.timing) {
    const Timing &t = *result.timing;
    for (const auto &[field, value] :
         {std::pair{"median_us", t.median_us}, std::pair{"min_us", t.min_us},
          std::pair{"max_us", t.max_us}})
      if (auto problem = time_problem(field, value))
        return problem;
    if (!(t.min_us <= t.median_us && t.median_us <= t.max_us))
      return "min_us " + number_text(t.min_us) + ", median_us " + number_text(t.median_us) +
             ", max_us " + number_text(t.max_us) + " are not in order (min <= median <= max)";
    if (!std::isfinite(t.stddev_us) || t.stddev_us < 0 || t.stddev_us > kMaxTimeUs)
      return "stddev_us " + number_text(t.stddev_us) + " is not finite and >= 0";
  }
  if (result.tflops &&
      !(std::isfinite(*result.tflops) && *result.tflops >= 0 && *result.tflops <= kMaxTflops))
    return "tflops " + number_text(*result.tflops) + " is not in [0, 1e6]";
  if (result.provenance.clock_mhz &&
      (*result.provenance.clock_mhz < 1 || *result.provenance.clock_mhz > kMaxClockMhz))
    return "clock_mhz " + std::to_string(*result.provenance.clock_mhz) + " is not in [1, 100000]";
  if (result.measured_ms < 0)
    return "measured_ms " + std::to_string(result.measured_ms) + " is negative";
  return std::nullopt;
}

std::optional<std::string> dispatch_value_problem(const DispatchTable &table) {
  for (size_t i = 0; i < table.entries.size(); ++i)
    if (auto problem = time_problem("time_us", table.entries[i].time_us))
      return "entry " + std::to_string(i) + ": " + *problem;
  if (table.created_ms < 0)
    return "created_ms " + std::to_string(table.created_ms) + " is negative";
  return std::nullopt;
}

std::optional<std::string> binary_value_problem(double compile_ms, int64_t created_ms) {
  if (!std::isfinite(compile_ms) || compile_ms < 0 || compile_ms > kMaxCompileMs)
    return "compile_ms " + number_text(compile_ms) + " is not in [0, 8.64e7] (at most a day)";
  if (created_ms < 0)
    return "created_ms " + std::to_string(created_ms) + " is negative";
  return std::nullopt;
}

std::optional<std::string> implausible_result(const ResultRecord &result,
                                              const DecisionRules &rules) {
  if (auto problem = result_value_problem(result))
    return problem;
  if (auto problem = future_date_problem("measured_ms", result.measured_ms, rules))
    return problem;
  // Only a result with a time can decide a config; the others (`tcjit run`'s verification records,
  // "tcjit run VERSION", failed and illegal configs) are not judged by their tuner version.
  if (result.status != ResultStatus::ok || !result.timing)
    return std::nullopt;
  return tuner_problem(result.tuner_version, rules);
}

std::optional<std::string> implausible_dispatch_table(const DispatchTable &table,
                                                      const DecisionRules &rules) {
  if (auto problem = dispatch_value_problem(table))
    return problem;
  if (auto problem = future_date_problem("created_ms", table.created_ms, rules))
    return problem;
  return tuner_problem(table.tuner_version, rules);
}

std::string plausible_result_sql(std::string_view alias, std::string_view now_limit,
                                 std::string_view tuner_format) {
  const std::string r = std::string(alias) + ".";
  const std::string max_us = "3.6e9";
  const std::string version = r + "tuner_version";
  // The digits between "tcjit-tuner " (12 characters) and the first " / ".
  const std::string at = "instr(substr(" + version + ", 13), ' / ')";
  const std::string digits = "substr(" + version + ", 13, " + at + " - 1)";
  const std::string now(now_limit), format(tuner_format);
  return "(" + r + "status = 'ok' AND " + r + "median_us > 0 AND " + r + "median_us <= " + max_us +
         " AND " + r + "min_us > 0 AND " + r + "min_us <= " + r + "median_us AND " + r +
         "max_us >= " + r + "median_us AND " + r + "max_us <= " + max_us + " AND " + r +
         "stddev_us >= 0 AND " + r + "stddev_us <= " + max_us + " AND (" + r +
         "tflops IS NULL OR (" + r + "tflops >= 0 AND " + r + "tflops <= 1e6)) AND (" + r +
         "clock_mhz IS NULL OR " + r + "clock_mhz BETWEEN 1 AND " + std::to_string(kMaxClockMhz) +
         ") AND " + r + "measured_ms >= 0 AND (" + now + " IS NULL OR " + r +
         "measured_ms <= " + now + ") AND (" + format + " IS NULL OR (substr(" + version +
         ", 1, 12) = 'tcjit-tuner ' AND " + at + " BETWEEN 2 AND 10 AND " + digits +
         " NOT GLOB '*[^0-9]*' AND CAST(" + digits + " AS INTEGER) BETWEEN 1 AND " + format + ")))";
}

int evidence_rank(ProvenanceKind kind) {
  switch (kind) {
  case ProvenanceKind::measured: return 0;
  case ProvenanceKind::emulated: return 1;
  case ProvenanceKind::predicted: return 2;
  }
  return 3;
}

bool better_dispatch_table(const DispatchTable &a, const DispatchTable &b) {
  const int evidence_a = table_evidence(a), evidence_b = table_evidence(b);
  if (evidence_a != evidence_b)
    return evidence_a < evidence_b;
  if (a.tuner_version == b.tuner_version && same_buckets(a, b)) {
    const double time_a = total_time(a), time_b = total_time(b);
    if (time_a != time_b)
      return time_a < time_b;
  } else if (a.created_ms != b.created_ms) {
    return a.created_ms > b.created_ms;
  }
  if (a.tuner_version != b.tuner_version)
    return a.tuner_version < b.tuner_version;
  return entries_text(a) < entries_text(b);
}

} // namespace tcjit::kernels_db
