#include "tuner/search_space.h"

#include "compiler/codegen/plan/conv_lowering.h"
#include "compiler/spec/alignment.h"
#include "compiler/target/arch.h"
#include "compiler/target/mma_table.h"
#include "tuner/cost_model.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace tcjit::tuner {

namespace {

using codegen::TileConfig;

std::string num(int64_t v) {
  return std::to_string(v);
}

int64_t nominal(const Dim &d, int64_t unknown) {
  switch (d.kind) {
  case Dim::Kind::fixed: return d.value;
  case Dim::Kind::range:
    return std::max<int64_t>(1, std::llround(std::sqrt(double(d.lo) * double(d.hi))));
  case Dim::Kind::any: return unknown;
  }
  return unknown;
}

// Bits per element of the multiplied inputs (s4 4, b1 1: K-tiles and vectors count bits).
int element_bits(const OpSpec &spec) {
  return dtype_bits(codegen::gemm_view(spec).gemm.a.dtype);
}

// The rule name of a code generator's ConfigError (validate_tile_config).
std::string rule_of(const codegen::ConfigError &e) {
  if (e.message.find("shared memory") != std::string::npos)
    return "shared_memory";
  if (e.message.find("warps per CTA") != std::string::npos)
    return "threads";
  if (e.message.find("accumulator registers") != std::string::npos)
    return "registers";
  if (e.field == "vec_a" || e.field == "vec_b")
    return "alignment";
  if (e.message.find("larger than the CTA tile") != std::string::npos)
    return "divisibility";
  return "codegen";
}

} // namespace

std::string SearchSpace::pruned_summary() const {
  std::map<std::string, size_t> counts;
  for (const PrunedConfig &p : pruned)
    ++counts[p.rule];
  std::vector<std::pair<std::string, size_t>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto &a, const auto &b) { return a.second > b.second; });
  std::string out;
  for (const auto &[rule, count] : sorted)
    out += (out.empty() ? "" : ", ") + num(int64_t(count)) + " " + rule;
  return out;
}

NominalSizes nominal_sizes(const OpSpec &spec) {
  const OpSpec view = codegen::gemm_view(spec);
  const GemmSpec &g = view.gemm;
  return {nominal(g.m, 1024), nominal(g.n, 1024), nominal(g.k, 1024), nominal(g.batch, 1)};
}

namespace {

// What the rules read of one spec with one channel padding, derived once (every config of a space
// shares them): the spec's rule errors (support, padding) and its facts.
struct SpecRules {
  std::vector<codegen::ConfigError> spec_errors; // check_codegen_support, channel_padding_errors
  codegen::SpecFacts facts;
  NominalSizes nominal;
};

SpecRules spec_rules(const OpSpec &spec, int pad_c, std::string_view arch, bool tf32_off) {
  SpecRules r;
  r.spec_errors = codegen::check_codegen_support(spec, arch, tf32_off);
  if (r.spec_errors.empty())
    r.spec_errors = codegen::channel_padding_errors(spec, pad_c);
  if (!r.spec_errors.empty())
    return r;
  r.facts = codegen::spec_facts(spec, tf32_off, pad_c);
  r.nominal = nominal_sizes(spec);
  return r;
}

// prune_reasons with the spec's part derived (`rules`, of the config's pad_c).
std::vector<PrunedConfig> config_prune_reasons(const SpecRules &rules, const TileConfig &c,
                                               std::string_view arch, const GpuModel &gpu) {
  std::vector<PrunedConfig> out;
  auto prune = [&](std::string rule, std::string reason) {
    out.push_back({c, std::move(rule), std::move(reason)});
  };
  for (const codegen::ConfigError &e : rules.spec_errors.empty()
                                           ? codegen::tile_rule_errors(rules.facts, c, arch)
                                           : rules.spec_errors)
    prune(rule_of(e), e.field + ": " + e.message);
  if (!out.empty())
    return out;
  const codegen::MmaForm &f = rules.facts.mma;
  if (f.kind != codegen::MmaKind::simt_f32 && (c.wm % f.m != 0 || c.wn % f.n != 0))
    prune("divisibility", "the warp tile " + num(c.wm) + "x" + num(c.wn) +
                              " is not a multiple of the mma shape m" + num(f.m) + "n" + num(f.n));
  const int registers = estimated_registers(rules.facts, c);
  if (registers > 255)
    prune("registers", "an estimated " + num(registers) +
                           " registers per thread (accumulators, double-buffered fragments, "
                           "addresses) exceed 255: it would spill");
  std::string why;
  if (ctas_per_sm(gpu, kernel_features(rules.facts, c), &why) == 0)
    prune("occupancy", "not one CTA fits on an SM of " + gpu.name + ": " + why);
  // The implicit GEMM the kernel runs: with channel padding, K counts the padded channels (the
  // split-K rule's K-tiles are the kernel's); M and N are the spec's own.
  const GemmSpec &g = rules.facts.view.gemm;
  auto oversized = [&](const char *field, int tile, const Dim &d, const char *dim) {
    if (d.is_fixed() && tile >= 32 && tile >= 2 * d.value)
      prune("oversized_tile", std::string(field) + "=" + num(tile) + " is at least twice " + dim +
                                  "=" + num(d.value) + ": most of every CTA would compute nothing");
  };
  oversized("bm", c.bm, g.m, "m");
  oversized("bn", c.bn, g.n, "n");
  if (c.split_k > 1) {
    if (!g.k.is_fixed()) {
      prune("split_k",
            "split_k=" + num(c.split_k) + " needs a fixed K (the slices are planned for one K)");
    } else {
      const int64_t ktiles = (g.k.value + c.bk - 1) / c.bk;
      const int64_t per_slice = (ktiles + c.split_k - 1) / c.split_k;
      if (per_slice < c.stages)
        prune("split_k", "split_k=" + num(c.split_k) + " leaves " + num(per_slice) +
                             " K-tiles per slice of k=" + num(g.k.value) + ", fewer than the " +
                             num(c.stages) + " pipeline stages");
    }
  }
  if (c.raster_group > 1) {
    const int64_t rows = (rules.nominal.m + c.bm - 1) / c.bm;
    if (rows <= c.raster_group)
      prune("raster_group", "raster_group=" + num(c.raster_group) + " with only " + num(rows) +
                                " CTA rows along m: the same order as raster_group=1");
  }
  return out;
}

} // namespace

std::vector<PrunedConfig> prune_reasons(const OpSpec &spec, const TileConfig &c,
                                        std::string_view arch, bool tf32_off, const GpuModel &gpu) {
  return config_prune_reasons(spec_rules(spec, c.pad_c, arch, tf32_off), c, arch, gpu);
}

SpaceOptions heuristic_space_options(const OpSpec &spec, bool tf32_off) {
  SpaceOptions o;
  const codegen::TileConfig d = codegen::default_tile_config(spec, "sm_80", tf32_off);
  o.cta_sizes = {16, 32, 64, 128, 256};
  o.k_bytes = {d.bk * element_bits(spec) / 8};
  o.warp_sizes = {16, 32, 64};
  o.warp_counts = {1, 2, 4, 8};
  o.stages = {d.stages};
  o.split_k = {1, 2, 4, 8, 16};
  o.raster_groups = {1};
  o.narrower_vectors = false;
  return o;
}

SearchSpace enumerate_space(const OpSpec &spec, std::string_view arch, bool tf32_off,
                            const GpuModel &gpu, const SpaceOptions &o) {
  SearchSpace space;
  if (!codegen::check_codegen_support(spec, arch, tf32_off).empty())
    return space;
  const int ebits = element_bits(spec);
  // Vector widths (elements): the widest the alignment allows, then narrower ones down to 4 bytes.
  // Channel strategies: the channels as they are, and (where it applies) padded to a 16-byte
  // vector of channels (TileConfig::pad_c) with the padded problem's vector widths.
  std::vector<int> pads = {0};
  if (const std::optional<int64_t> target = codegen::channel_padding_target(spec);
      target && o.channel_padding)
    pads.push_back(int(*target));
  for (int pad_c : pads) {
    const SpecRules rules = spec_rules(spec, pad_c, arch, tf32_off);
    const codegen::ViewVectorLimits &limits = rules.facts.vectors;
    auto widths = [&](const std::string &operand) {
      int widest = std::min(operand == "a" ? limits.a : limits.b, 128 / ebits);
      const int cap = operand == "a" ? o.max_vec_a : o.max_vec_b;
      if (cap > 0)
        widest = std::min(widest, cap);
      std::vector<int> w = {widest};
      if (o.narrower_vectors)
        for (int v = widest / 2; v >= 1 && v * ebits >= 32; v /= 2)
          w.push_back(v);
      return w;
    };
    const std::vector<int> va = widths("a"), vb = widths("b");
    for (int bm : o.cta_sizes)
      for (int bn : o.cta_sizes)
        for (int kb : o.k_bytes) {
          const int bk = kb * 8 / ebits;
          if (bk < 1)
            continue;
          for (int wm : o.warp_sizes)
            for (int wn : o.warp_sizes) {
              if (wm > bm || wn > bn)
                continue;
              const int warps = (bm / wm) * (bn / wn);
              if (std::find(o.warp_counts.begin(), o.warp_counts.end(), warps) ==
                  o.warp_counts.end())
                continue;
              for (int stages : o.stages)
                for (int split : o.split_k)
                  for (int group : o.raster_groups)
                    for (int a : va)
                      for (int b : vb) {
                        const TileConfig c{bm, bn, bk, wm, wn, stages, split, group, a, b, pad_c};
                        std::vector<PrunedConfig> why = config_prune_reasons(rules, c, arch, gpu);
                        if (why.empty())
                          space.legal.push_back(c);
                        else
                          space.pruned.push_back(std::move(why.front()));
                      }
            }
        }
  }
  return space;
}

} // namespace tcjit::tuner
