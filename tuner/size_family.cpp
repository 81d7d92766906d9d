#include "tuner/size_family.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <tuple>

namespace tcjit::tuner {

namespace {

constexpr int64_t kAnySize = std::numeric_limits<int64_t>::max();

// The key's space-separated tokens.
std::vector<std::string_view> tokens_of(std::string_view text) {
  std::vector<std::string_view> out;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(' ', start), text.size());
    if (end > start)
      out.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

bool is_free_size(std::string_view op, std::string_view name) {
  if (op == "gemm")
    return name == "m" || name == "n" || name == "k" || name == "batch";
  return name == "n"; // a convolution's batch
}

std::optional<int64_t> number(std::string_view text) {
  int64_t v = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (error != std::errc() || end != text.data() + text.size())
    return std::nullopt;
  return v;
}

std::optional<SizeInterval> interval_of(std::string_view value) {
  if (value == "?")
    return SizeInterval{1, kAnySize};
  if (const size_t dots = value.find(".."); dots != std::string_view::npos) {
    const auto lo = number(value.substr(0, dots));
    const auto hi = number(value.substr(dots + 2));
    if (lo && hi)
      return SizeInterval{*lo, *hi};
    return std::nullopt;
  }
  if (const auto v = number(value))
    return SizeInterval{*v, *v};
  return std::nullopt;
}

// Calls `f(name, interval, token_index)` for every free size of the key.
template <typename F> void for_each_free_size(std::string_view key_text, F &&f) {
  const std::vector<std::string_view> tokens = tokens_of(key_text);
  if (tokens.empty())
    return;
  for (size_t i = 1; i < tokens.size(); ++i) {
    const size_t eq = tokens[i].find('=');
    if (eq == std::string_view::npos || !is_free_size(tokens[0], tokens[i].substr(0, eq)))
      continue;
    if (const auto interval = interval_of(tokens[i].substr(eq + 1)))
      f(tokens[i].substr(0, eq), *interval, i);
  }
}

double log2_of(int64_t v) {
  return std::log2(static_cast<double>(std::max<int64_t>(v, 1)));
}

// 0 when the intervals overlap, else log2 of the ratio across the gap.
double log2_gap(const SizeInterval &a, const SizeInterval &b) {
  if (a.hi < b.lo)
    return log2_of(b.lo) - log2_of(a.hi);
  if (b.hi < a.lo)
    return log2_of(a.lo) - log2_of(b.hi);
  return 0;
}

Dim dim_of(const SizeInterval &s) {
  if (s.lo == s.hi)
    return Dim::fixed_size(s.lo);
  if (s.lo == 1 && s.hi == kAnySize)
    return Dim::any_size();
  return Dim::range_of(s.lo, s.hi);
}

// How well a family table's problem fits the problem's sizes (rules 2a-2d of
// serving_dispatch_table): smaller is better.
struct FamilyRank {
  bool contains = false;
  double gap = 0;
  double width = 0;
  int64_t created_ms = 0;
  auto order() const { return std::make_tuple(!contains, gap, -width, -created_ms); }
};

FamilyRank rank_of(const std::vector<std::pair<std::string, SizeInterval>> &wanted,
                   const kernels_db::DispatchTable &table) {
  FamilyRank rank;
  rank.contains = true;
  rank.created_ms = table.created_ms;
  const auto tuned = family_sizes(table.problem_key);
  for (const auto &[name, want] : wanted)
    for (const auto &[tuned_name, have] : tuned) {
      if (tuned_name != name)
        continue;
      rank.contains = rank.contains && have.lo <= want.lo && want.hi <= have.hi;
      rank.gap += log2_gap(want, have);
      rank.width += log2_of(have.hi) - log2_of(have.lo);
    }
  return rank;
}

} // namespace

std::string family_key(std::string_view key_text) {
  std::vector<std::string_view> tokens = tokens_of(key_text);
  std::vector<std::string> erased(tokens.begin(), tokens.end());
  for_each_free_size(key_text, [&](std::string_view name, const SizeInterval &, size_t i) {
    erased[i] = std::string(name) + "=*";
  });
  std::string out;
  for (const std::string &t : erased)
    out += (out.empty() ? "" : " ") + t;
  return out;
}

std::vector<std::pair<std::string, SizeInterval>> family_sizes(std::string_view key_text) {
  std::vector<std::pair<std::string, SizeInterval>> out;
  for_each_free_size(key_text, [&](std::string_view name, const SizeInterval &s, size_t) {
    out.emplace_back(std::string(name), s);
  });
  return out;
}

OpSpec with_family_sizes(const OpSpec &spec, std::string_view key_text) {
  OpSpec out = spec;
  for (const auto &[name, s] : family_sizes(key_text)) {
    if (spec.kind != OpKind::gemm)
      out.conv.n = dim_of(s);
    else if (name == "m")
      out.gemm.m = dim_of(s);
    else if (name == "n")
      out.gemm.n = dim_of(s);
    else if (name == "k")
      out.gemm.k = dim_of(s);
    else
      out.gemm.batch = dim_of(s);
  }
  return out;
}

std::optional<ServingTable> serving_dispatch_table(kernels_db::KernelsDb &db,
                                                   std::string_view key_text,
                                                   std::string_view arch) {
  const kernels_db::DecisionRules rules = decision_rules();
  if (auto own = db.decided_dispatch_table(key_text, arch, rules))
    return ServingTable{std::move(*own), true};
  const std::string family = family_key(key_text);
  const auto wanted = family_sizes(key_text);
  const std::string op(key_text.substr(0, key_text.find(' ')));
  std::optional<ServingTable> best;
  FamilyRank best_rank;
  for (kernels_db::DispatchTable &table : db.decided_dispatch_tables_of_op(op, arch, rules)) {
    if (table.problem_key == key_text || family_key(table.problem_key) != family)
      continue;
    const FamilyRank rank = rank_of(wanted, table);
    if (!best || rank.order() < best_rank.order()) {
      best = ServingTable{std::move(table), false};
      best_rank = rank;
    }
  }
  return best;
}

const kernels_db::DispatchEntry &serving_entry(const kernels_db::DispatchIndex &table,
                                               const kernels_db::DispatchSizes &sizes) {
  if (const kernels_db::DispatchEntry *entry = table.find(sizes))
    return *entry;
  const std::array<int64_t, 4> at = {sizes.m, sizes.n, sizes.k, sizes.batch};
  const std::vector<kernels_db::DispatchEntry> &entries = table.table().entries;
  size_t nearest = 0;
  double nearest_gap = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < entries.size(); ++i) {
    const kernels_db::DispatchBucket bucket =
        kernels_db::parse_dispatch_bucket(entries[i].dims_json);
    double gap = 0;
    for (size_t d = 0; d < at.size(); ++d)
      if (bucket.named[d])
        gap += log2_gap({at[d], at[d]}, {bucket.lo[d], bucket.hi[d]});
    if (gap < nearest_gap) {
      nearest = i;
      nearest_gap = gap;
    }
  }
  return entries[nearest];
}

std::optional<ServingDecision> serving_decision(kernels_db::KernelsDb &db,
                                                std::string_view key_text, std::string_view arch,
                                                const kernels_db::DispatchSizes &sizes) {
  if (auto own = decide(db, key_text, arch, sizes))
    return ServingDecision{std::move(*own), std::string(key_text), false};
  const auto served = serving_dispatch_table(db, key_text, arch);
  if (!served)
    return std::nullopt;
  const kernels_db::DispatchIndex index(served->table); // decided tables are valid
  const kernels_db::DispatchEntry &entry = serving_entry(index, sizes);
  ServingDecision out;
  out.decision.config_json = entry.config_json;
  out.decision.time_us = entry.time_us;
  out.decision.provenance = entry.provenance;
  out.decision.tuner_version = served->table.tuner_version;
  out.decision.from_dispatch_table = true;
  out.decision.buckets = served->table.entries.size();
  out.problem_key = served->table.problem_key;
  out.family = true;
  return out;
}

} // namespace tcjit::tuner
