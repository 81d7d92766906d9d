// Dispatch tables without the database: the bucket format, validation and the lookup of the
// bucket that holds concrete sizes. Pure: no SQLite, no compiler, no device.
//
// A bucket (DispatchEntry::dims_json) is a JSON object that maps dimension names to CLOSED
// integer intervals [lo, hi]:
//
//   {"m":[1,16]}                    1 <= m <= 16, any n, k, batch
//   {"m":[17,64],"n":[4096,4096]}   17 <= m <= 64 and n == 4096
//   {}                              every size (a catch-all; it then must be the only bucket)
//
// * Dimension names: "m", "n", "k", "batch". A dimension the bucket does not name is
//   unconstrained.
// * Bounds are integers with 0 <= lo <= hi (lo > hi is an empty bucket: rejected).
// * The buckets of one table are pairwise disjoint (no size lies in two of them): a lookup has at
//   most one answer, whatever the order of the entries. Gaps are allowed: sizes in no bucket
//   find nothing (the caller falls back, e.g. to a heuristic or to tuning that size).
// * A table has at least one entry; each entry's config is a JSON object and its time a finite,
//   non-negative number of microseconds.
//
// Closed intervals were chosen because tuned ranges are written that way (`m=1..8192`) and a
// bucket of one size reads [s, s].
#pragma once

#include "kernels_db/records.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tcjit::kernels_db {

// The sizes of one launch.
struct DispatchSizes {
  int64_t m = 1;
  int64_t n = 1;
  int64_t k = 1;
  int64_t batch = 1;
};

// The dimension names of a bucket, in the order of DispatchBucket's arrays.
inline constexpr std::array<std::string_view, 4> kDispatchDimensions = {"m", "n", "k", "batch"};

// A parsed bucket: [lo[d], hi[d]] per dimension d of kDispatchDimensions; an unconstrained
// dimension is [0, INT64_MAX] and `named[d]` false.
struct DispatchBucket {
  std::array<int64_t, 4> lo{};
  std::array<int64_t, 4> hi{};
  std::array<bool, 4> named{};

  bool contains(const DispatchSizes &sizes) const;
  bool overlaps(const DispatchBucket &other) const;
};

// Parses a bucket; throws DbError(invalid_argument) saying what is wrong (not JSON, not an
// object, unknown dimension, not [lo, hi] integers, negative, lo > hi).
DispatchBucket parse_dispatch_bucket(std::string_view dims_json);
// The canonical text of a bucket ({"m":[1,16]}: sorted names, no whitespace); validates it.
std::string canonical_dispatch_dims(std::string_view dims_json);
// {"m":[1,16]} from a parsed bucket (only the named dimensions).
std::string dispatch_dims_text(const DispatchBucket &bucket);

// Validates a whole table (problem key, arch, at least one entry, every bucket, configs, times,
// pairwise disjoint buckets) and returns its parsed buckets, one per entry. Throws
// DbError(invalid_argument) naming the entries at fault, e.g.
//   "dispatch table buckets overlap: entry 0 {"m":[1,16]} and entry 1 {"m":[16,32]} both hold
//    m=16"
std::vector<DispatchBucket> validate_dispatch_table(const DispatchTable &table);

// A validated table ready for repeated lookups (parse and validation done once).
class DispatchIndex {
public:
  // Throws as validate_dispatch_table.
  explicit DispatchIndex(DispatchTable table);

  const DispatchTable &table() const { return table_; }
  // The entry whose bucket holds `sizes`, or nullptr. Linear in the number of entries.
  const DispatchEntry *find(const DispatchSizes &sizes) const;

private:
  DispatchTable table_;
  std::vector<DispatchBucket> buckets_;
};

// One-off lookup: validates `table` (throws as validate_dispatch_table), then returns the entry
// whose bucket holds `sizes`, or nullopt when none does.
std::optional<DispatchEntry> lookup_dispatch(const DispatchTable &table,
                                             const DispatchSizes &sizes);

} // namespace tcjit::kernels_db
