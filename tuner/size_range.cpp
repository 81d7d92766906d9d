#include "tuner/size_range.h"

#include "compiler/reference/bind_dims.h"
#include "compiler/spec/validate.h"
#include "engine/kernel_records.h"
#include "tuner/candidate.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <stdexcept>

namespace tcjit::tuner {

namespace {

constexpr const char *kDimNames[4] = {"m", "n", "k", "batch"};

const Dim &dim_of(const GemmSpec &g, int i) {
  return i == 0 ? g.m : i == 1 ? g.n : i == 2 ? g.k : g.batch;
}

int64_t size_of(const OpSpec &spec, int i) {
  return dim_of(spec.gemm, i).value;
}

// lo, the powers of two strictly inside (lo, hi), hi; thinned to at most `most` points (keeping
// both ends).
std::vector<int64_t> points(int64_t lo, int64_t hi, size_t most) {
  std::vector<int64_t> p = {lo};
  for (int64_t v = 1; v < hi && v > 0; v *= 2)
    if (v > lo)
      p.push_back(v);
  if (hi != lo)
    p.push_back(hi);
  while (p.size() > most && p.size() > 2) {
    std::vector<int64_t> thin;
    for (size_t i = 0; i < p.size(); i += 2)
      thin.push_back(p[i]);
    if (thin.back() != p.back())
      thin.push_back(p.back());
    p = std::move(thin);
  }
  return p;
}

// The sizes of one ranged dimension each representative point covers: up to the geometric mean
// of it and the next point.
std::vector<std::pair<int64_t, int64_t>> intervals(const std::vector<int64_t> &p, int64_t lo,
                                                   int64_t hi) {
  std::vector<std::pair<int64_t, int64_t>> out;
  int64_t start = lo;
  for (size_t i = 0; i < p.size(); ++i) {
    int64_t end = hi;
    if (i + 1 < p.size())
      end = std::max(p[i], int64_t(std::floor(std::sqrt(double(p[i]) * double(p[i + 1])))));
    out.push_back({start, end});
    start = end + 1;
  }
  return out;
}

} // namespace

std::vector<TuneTask> representative_tasks(const TuneTask &ranged, std::string &error) {
  const GemmSpec &g = ranged.spec.gemm;
  std::vector<int> dims;
  for (int i = 0; i < 4; ++i) {
    const Dim &d = dim_of(g, i);
    if (d.kind == Dim::Kind::any) {
      error = std::string(kDimNames[i]) +
              "=? cannot be tuned: give the sizes it will take as a range (e.g. " + kDimNames[i] +
              "=1..8192), or a size";
      return {};
    }
    if (d.kind == Dim::Kind::range)
      dims.push_back(i);
  }
  const size_t per_dim = dims.size() <= 1 ? 64 : dims.size() == 2 ? 8 : dims.size() == 3 ? 4 : 2;
  std::vector<std::vector<int64_t>> grid;
  for (int i : dims)
    grid.push_back(points(dim_of(g, i).lo, dim_of(g, i).hi, per_dim));
  std::vector<TuneTask> out;
  std::vector<size_t> at(dims.size(), 0);
  const codegen::TileConfig widest = codegen::resolve_vectors(ranged.spec, {});
  while (true) {
    GemmSizes s;
    int64_t *fields[4] = {&s.m, &s.n, &s.k, &s.batch};
    for (int i = 0; i < 4; ++i)
      *fields[i] = dim_of(g, i).is_fixed() ? dim_of(g, i).value : 1;
    for (size_t d = 0; d < dims.size(); ++d)
      *fields[dims[d]] = grid[d][at[d]];
    TuneTask t = ranged;
    try {
      t.spec = bind_gemm_sizes(ranged.spec, s);
    } catch (const std::invalid_argument &e) {
      error = e.what();
      return {};
    }
    if (const auto errors = validate_spec(t.spec); !errors.empty()) {
      error = "the representative size m=" + std::to_string(s.m) + " n=" + std::to_string(s.n) +
              " k=" + std::to_string(s.k) + " is not valid: " + errors.front().message;
      return {};
    }
    t.key = make_problem_key(t.spec, t.arch, t.tf32_off);
    // Caps only where the range allows less than this size does: otherwise the size is tuned as
    // the ordinary problem it is (and shares that tune).
    const codegen::TileConfig own = codegen::resolve_vectors(t.spec, {});
    t.max_vec_a = widest.vec_a < own.vec_a ? widest.vec_a : 0;
    t.max_vec_b = widest.vec_b < own.vec_b ? widest.vec_b : 0;
    out.push_back(std::move(t));
    size_t d = 0;
    while (d < dims.size() && ++at[d] == grid[d].size())
      at[d++] = 0;
    if (d == dims.size())
      break;
  }
  return out;
}

std::vector<SizeBucket> dispatch_buckets(const TuneTask &ranged, const std::vector<TuneTask> &sizes,
                                         const std::vector<TuneResult> &results) {
  const GemmSpec &g = ranged.spec.gemm;
  std::vector<int> dims;
  std::vector<std::vector<int64_t>> grid;
  for (int i = 0; i < 4; ++i)
    if (dim_of(g, i).kind == Dim::Kind::range) {
      dims.push_back(i);
      std::set<int64_t> values;
      for (const TuneTask &t : sizes)
        values.insert(size_of(t.spec, i));
      grid.emplace_back(values.begin(), values.end());
    }
  std::vector<SizeBucket> buckets;
  for (size_t s = 0; s < sizes.size() && s < results.size(); ++s) {
    SizeBucket b;
    for (size_t d = 0; d < dims.size(); ++d) {
      const Dim &dim = dim_of(g, dims[d]);
      const auto iv = intervals(grid[d], dim.lo, dim.hi);
      const size_t at =
          size_t(std::lower_bound(grid[d].begin(), grid[d].end(), size_of(sizes[s].spec, dims[d])) -
                 grid[d].begin());
      b.ranges[kDimNames[dims[d]]] = iv[at];
    }
    // A size without a winner takes its predecessor's (or the next one's) config.
    const TuneResult *r = &results[s];
    for (size_t j = 1; !r->best && j < sizes.size(); ++j) {
      if (s >= j && results[s - j].best)
        r = &results[s - j];
      else if (s + j < results.size() && results[s + j].best)
        r = &results[s + j];
    }
    if (!r->best)
      return {};
    // The ranged spec may allow narrower vectors than a representative size (k=1..4096 is
    // aligned to 1 element, k=4096 to 8): the bucket's kernel loads what every size allows.
    b.config = *r->best;
    const codegen::TileConfig widest = codegen::resolve_vectors(ranged.spec, {});
    b.config.vec_a = std::min(b.config.vec_a, widest.vec_a);
    b.config.vec_b = std::min(b.config.vec_b, widest.vec_b);
    b.measurement = r->best_measurement;
    buckets.push_back(std::move(b));
  }
  // One ranged dimension: neighbours with the same config become one bucket.
  if (dims.size() == 1) {
    const std::string name = kDimNames[dims[0]];
    std::vector<SizeBucket> merged;
    for (SizeBucket &b : buckets) {
      if (!merged.empty() && merged.back().config == b.config) {
        merged.back().ranges[name].second = b.ranges[name].second;
        continue;
      }
      merged.push_back(std::move(b));
    }
    buckets = std::move(merged);
  }
  return buckets;
}

} // namespace tcjit::tuner

namespace tcjit::tuner {

int store_dispatch_table(const TuneTask &ranged, const std::vector<TuneTask> &sizes,
                         const std::vector<TuneResult> &results, kernels_db::KernelsDb &db) {
  const std::vector<SizeBucket> buckets = dispatch_buckets(ranged, sizes, results);
  if (buckets.empty())
    return 0;
  kernels_db::DispatchTable table;
  table.problem_key = ranged.key.text;
  table.arch = ranged.arch;
  for (const TuneResult &r : results)
    if (r.best) {
      table.tuner_version = r.tuner_version;
      break;
    }
  for (const SizeBucket &b : buckets) {
    nlohmann::json dims = nlohmann::json::object();
    for (const auto &[name, range] : b.ranges)
      dims[name] = {range.first, range.second};
    kernels_db::DispatchEntry e;
    e.dims_json = dims.dump();
    e.config_json = engine::config_json(b.config);
    e.time_us = b.measurement.timing ? b.measurement.timing->median_us : 0;
    e.provenance = b.measurement.provenance.kind;
    table.entries.push_back(std::move(e));
  }
  db.put_problem(engine::problem_record(ranged.spec, ranged.key, ranged.arch));
  // The kernel of each distinct config, compiled for the ranged spec (sizes given at launch) and
  // stored under its key, so the runtime loads them from the database.
  std::vector<codegen::TileConfig> built;
  for (const SizeBucket &b : buckets) {
    if (std::find(built.begin(), built.end(), b.config) != built.end())
      continue;
    built.push_back(b.config);
    const BuiltCandidate candidate =
        build_candidate(ranged.spec, b.config, ranged.arch, ranged.tf32_off, ranged.backend);
    if (!candidate.usable())
      throw std::invalid_argument("the dispatch table's config " + codegen::to_string(b.config) +
                                  " does not build for " + ranged.key.hash_hex() + ": " +
                                  candidate.failure);
    store_binary(db, ranged, candidate);
  }
  db.put_dispatch_table(table);
  return int(table.entries.size());
}

} // namespace tcjit::tuner
