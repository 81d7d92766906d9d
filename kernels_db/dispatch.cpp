#include "kernels_db/dispatch.h"

#include "kernels_db/canonical_json.h"
#include "kernels_db/error.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

namespace tcjit::kernels_db {
namespace {

using nlohmann::json;

constexpr int64_t kUnbounded = std::numeric_limits<int64_t>::max();
constexpr const char *kBucketFix =
    "write a bucket as a JSON object of closed intervals, e.g. {\"m\":[1,16],\"n\":[4096,4096]} "
    "(dimensions m, n, k, batch; integers 0 <= lo <= hi)";

[[noreturn]] void bad_bucket(std::string_view dims_json, const std::string &problem) {
  throw DbError(DbErrorKind::invalid_argument,
                "bad dispatch bucket " + std::string(dims_json) + ": " + problem, "dispatch table",
                kBucketFix);
}

std::array<int64_t, 4> values_of(const DispatchSizes &sizes) {
  return {sizes.m, sizes.n, sizes.k, sizes.batch};
}

std::string where_of(const DispatchTable &table) {
  return "dispatch table of '" + table.problem_key + "' on " + table.arch + " (tuner " +
         table.tuner_version + ")";
}

[[noreturn]] void bad_table(const DispatchTable &table, const std::string &problem,
                            const std::string &how_to_fix) {
  throw DbError(DbErrorKind::invalid_argument, problem, where_of(table), how_to_fix);
}

} // namespace

bool DispatchBucket::contains(const DispatchSizes &sizes) const {
  const std::array<int64_t, 4> values = values_of(sizes);
  for (size_t d = 0; d < values.size(); ++d)
    if (values[d] < lo[d] || values[d] > hi[d])
      return false;
  return true;
}

bool DispatchBucket::overlaps(const DispatchBucket &other) const {
  for (size_t d = 0; d < lo.size(); ++d)
    if (std::max(lo[d], other.lo[d]) > std::min(hi[d], other.hi[d]))
      return false;
  return true;
}

DispatchBucket parse_dispatch_bucket(std::string_view dims_json) {
  json object;
  try {
    object = json::parse(dims_json);
  } catch (const json::exception &error) {
    bad_bucket(dims_json, std::string("not JSON (") + error.what() + ")");
  }
  if (!object.is_object())
    bad_bucket(dims_json, "not a JSON object");
  DispatchBucket bucket;
  bucket.lo.fill(0);
  bucket.hi.fill(kUnbounded);
  for (const auto &[name, range] : object.items()) {
    const auto found = std::find(kDispatchDimensions.begin(), kDispatchDimensions.end(), name);
    if (found == kDispatchDimensions.end())
      bad_bucket(dims_json, "unknown dimension '" + name + "'");
    const auto d = static_cast<size_t>(found - kDispatchDimensions.begin());
    if (!range.is_array() || range.size() != 2 || !range[0].is_number_integer() ||
        !range[1].is_number_integer())
      bad_bucket(dims_json, "'" + name + "' is not [lo, hi] with integer bounds");
    // Unsigned JSON integers above INT64_MAX would wrap: they are out of range anyway.
    if ((range[0].is_number_unsigned() && range[0].get<uint64_t>() > uint64_t(kUnbounded)) ||
        (range[1].is_number_unsigned() && range[1].get<uint64_t>() > uint64_t(kUnbounded)))
      bad_bucket(dims_json, "'" + name + "' has a bound above 2^63-1");
    const auto lo = range[0].get<int64_t>();
    const auto hi = range[1].get<int64_t>();
    if (lo < 0)
      bad_bucket(dims_json, "'" + name + "' has a negative bound");
    if (lo > hi)
      bad_bucket(dims_json, "'" + name + "' [" + std::to_string(lo) + "," + std::to_string(hi) +
                                "] is empty (lo > hi; intervals are closed: [s,s] holds s)");
    bucket.lo[d] = lo;
    bucket.hi[d] = hi;
    bucket.named[d] = true;
  }
  return bucket;
}

std::string dispatch_dims_text(const DispatchBucket &bucket) {
  json object = json::object();
  for (size_t d = 0; d < kDispatchDimensions.size(); ++d)
    if (bucket.named[d])
      object[std::string(kDispatchDimensions[d])] = json::array({bucket.lo[d], bucket.hi[d]});
  return object.dump();
}

std::string canonical_dispatch_dims(std::string_view dims_json) {
  return dispatch_dims_text(parse_dispatch_bucket(dims_json));
}

std::vector<DispatchBucket> validate_dispatch_table(const DispatchTable &table) {
  if (table.problem_key.empty())
    bad_table(table, "the dispatch table has no problem key",
              "set DispatchTable::problem_key to the ranged problem's canonical key");
  if (table.arch.empty())
    bad_table(table, "the dispatch table has no arch", "set DispatchTable::arch, e.g. sm_80");
  if (table.entries.empty())
    bad_table(table, "the dispatch table has no entries",
              "give at least one bucket and its config");
  std::vector<DispatchBucket> buckets;
  buckets.reserve(table.entries.size());
  for (size_t i = 0; i < table.entries.size(); ++i) {
    const DispatchEntry &entry = table.entries[i];
    const std::string name = "entry " + std::to_string(i);
    try {
      buckets.push_back(parse_dispatch_bucket(entry.dims_json));
      canonical_json_object(entry.config_json, "config_json");
    } catch (const DbError &error) {
      bad_table(table, name + ": " + error.problem(), error.how_to_fix());
    }
    if (!std::isfinite(entry.time_us) || entry.time_us < 0)
      bad_table(table,
                name + ": time_us " + std::to_string(entry.time_us) +
                    " is not a finite, non-negative number of microseconds",
                "store the bucket's measured or predicted time in microseconds");
  }
  for (size_t i = 0; i < buckets.size(); ++i)
    for (size_t j = i + 1; j < buckets.size(); ++j) {
      if (!buckets[i].overlaps(buckets[j]))
        continue;
      // A size both hold: the lowest corner of the intersection.
      std::string witness;
      for (size_t d = 0; d < kDispatchDimensions.size(); ++d) {
        if (!buckets[i].named[d] && !buckets[j].named[d])
          continue;
        witness += (witness.empty() ? "" : " ") + std::string(kDispatchDimensions[d]) + "=" +
                   std::to_string(std::max(buckets[i].lo[d], buckets[j].lo[d]));
      }
      if (witness.empty())
        witness = "every size";
      bad_table(table,
                "dispatch table buckets overlap: entry " + std::to_string(i) + " " +
                    dispatch_dims_text(buckets[i]) + " and entry " + std::to_string(j) + " " +
                    dispatch_dims_text(buckets[j]) + " both hold " + witness,
                "make the buckets disjoint (closed intervals: [1,16] and [17,32] do not overlap, "
                "[1,16] and [16,32] do)");
    }
  return buckets;
}

DispatchIndex::DispatchIndex(DispatchTable table)
    : table_(std::move(table)), buckets_(validate_dispatch_table(table_)) {}

const DispatchEntry *DispatchIndex::find(const DispatchSizes &sizes) const {
  for (size_t i = 0; i < buckets_.size(); ++i)
    if (buckets_[i].contains(sizes))
      return &table_.entries[i];
  return nullptr;
}

std::optional<DispatchEntry> lookup_dispatch(const DispatchTable &table,
                                             const DispatchSizes &sizes) {
  const std::vector<DispatchBucket> buckets = validate_dispatch_table(table);
  for (size_t i = 0; i < buckets.size(); ++i)
    if (buckets[i].contains(sizes))
      return table.entries[i];
  return std::nullopt;
}

} // namespace tcjit::kernels_db
