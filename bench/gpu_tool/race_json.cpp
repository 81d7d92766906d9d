#include "bench/gpu_tool/race_json.h"

#include <cmath>

namespace tcjit::bench {

namespace {

using json = nlohmann::json;

json verification_json(const Verification &v) {
  json j{{"checked", v.checked}};
  if (!v.checked) {
    j["why_unchecked"] = v.why_unchecked;
    return j;
  }
  j["ok"] = v.ok;
  j["part"] = v.part;
  j["elements"] = v.elements;
  j["mismatches"] = v.mismatches;
  j["max_abs_error"] = v.max_abs_error;
  // Infinity (an exact element that differs) is not JSON: null, with the worst element's text.
  j["max_error_over_tolerance"] =
      std::isfinite(v.max_error_over_tolerance) ? json(v.max_error_over_tolerance) : json(nullptr);
  if (!v.ok)
    j["worst"] = v.worst;
  return j;
}

json column_json(const ColumnResult &c) {
  json j{{"column", c.column}, {"source", c.source}, {"variant", c.variant}, {"measured", c.ok}};
  if (!c.pick.empty())
    j["pick"] = c.pick;
  if (!c.config.empty())
    j["config"] = c.config;
  if (!c.origin.empty())
    j["origin"] = c.origin;
  if (!c.ok)
    j["error"] = c.error;
  if (c.timing) {
    j["timing"] = timing_json(*c.timing);
    j["tflops"] = c.tflops;
    j["percent_of_peak"] = c.percent_of_peak ? json(*c.percent_of_peak) : json(nullptr);
  }
  j["verification"] = c.verification ? verification_json(*c.verification) : json(nullptr);
  if (!c.candidates.empty()) {
    json cands = json::array();
    for (const CandidateTime &t : c.candidates) {
      json cj{{"rank", t.rank}, {"description", t.description}};
      if (t.timing)
        cj["timing"] = timing_json(*t.timing);
      else
        cj["error"] = t.error;
      cands.push_back(cj);
    }
    j["candidates"] = cands;
  }
  return j;
}

} // namespace

json timing_json(const TimingResult &t) {
  return {{"median_us", t.median_us}, {"min_us", t.min_us},
          {"max_us", t.max_us},       {"p25_us", t.p25_us},
          {"p75_us", t.p75_us},       {"reps", t.reps},
          {"warmup", t.warmup},       {"l2_flush_bytes", t.flush_bytes}};
}

json problem_json(const ProblemResult &p) {
  json columns = json::array();
  for (const ColumnResult &c : p.columns)
    columns.push_back(column_json(c));
  json j{{"kind", p.kind},     {"name", p.name},    {"dtype", p.dtype},
         {"spec", p.spec},     {"flops", p.flops},  {"math_unit", p.math_unit},
         {"columns", columns}, {"errors", p.errors}};
  if (p.kind == "gemm")
    j["bias_gelu"] = p.bias_gelu;
  else
    j["pass"] = p.pass;
  return j;
}

json race_json(const json &device, const RaceOptions &options, bool quick,
               const std::vector<ProblemResult> &problems) {
  json list = json::array();
  for (const ProblemResult &p : problems)
    list.push_back(problem_json(p));
  return {{"tool", "tcjit_gpu_bench race"},
          {"measured", true},
          {"device", device},
          {"options",
           {{"quick", quick},
            {"reps", options.timing.reps},
            {"warmup", options.timing.warmup},
            {"l2_flush", options.timing.flush_l2},
            {"database", options.db_path},
            {"tune", options.tune},
            {"tune_budget", options.tune_budget},
            {"anchor_top", options.anchor_top},
            {"verify_max_macs", options.verify_max_macs}}},
          {"timing_method",
           "per column: warm-up launches, then each repetition an L2 flush (memset of twice the "
           "L2) and CUDA events around one launch on the device's stream; median and spread "
           "of the repetitions"},
          {"problems", list}};
}

} // namespace tcjit::bench
