// explain_op (include/tcjit/tools.hpp) and `tcjit explain`: what a spec asks of the hardware
// (compiler/spec/explain.h), the roofline of the arch's GPU (the arch table), the config the
// runtime would compile with its prediction, and the kernel path of that config.
#include "tcjit/tools.hpp"

#include "api/calibrated_model.h"
#include "api/spec_check.h"
#include "compiler/codegen/pipeline.h"
#include "compiler/codegen/plan/kernel_path.h"
#include "compiler/codegen/plan/tile_config.h"
#include "compiler/spec/explain.h"
#include "compiler/spec/shape.h"
#include "compiler/target/arch.h"
#include "kernels_db/record_json.h"
#include "tuner/cost_model.h"
#include "tuner/heuristic.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <optional>

namespace tcjit {

namespace {

nlohmann::json dim_json(const Dim &d) {
  switch (d.kind) {
  case Dim::Kind::fixed: return d.value;
  case Dim::Kind::any: return "?";
  case Dim::Kind::range: return std::to_string(d.lo) + ".." + std::to_string(d.hi);
  }
  return nullptr;
}

nlohmann::json to_json(const WorkloadEntry &entry, const Explanation &e) {
  nlohmann::json j;
  if (!entry.name.empty())
    j["name"] = entry.name;
  j["weight"] = entry.weight;
  j["spec"] = e.canonical;
  j["key"] = e.key.text;
  j["hash"] = e.key.hash_hex();
  j["arch"] = e.arch;
  j["gemm"] = {{"m", dim_json(e.gemm.m)},
               {"n", dim_json(e.gemm.n)},
               {"k", dim_json(e.gemm.k)},
               {"batch", dim_json(e.gemm.batch)},
               {"groups", e.gemm.groups}};
  if (e.conv_output)
    j["output"] = {{"o", e.conv_output->o}, {"p", e.conv_output->p}, {"q", e.conv_output->q}};
  j["flops"] = e.flops ? nlohmann::json(*e.flops) : nlohmann::json(nullptr);
  j["bytes"] = e.bytes ? nlohmann::json(*e.bytes) : nlohmann::json(nullptr);
  j["arithmetic_intensity"] =
      e.arithmetic_intensity ? nlohmann::json(*e.arithmetic_intensity) : nlohmann::json(nullptr);
  for (const OperandAlignment &a : e.alignment)
    j["alignment"][a.operand] = {{"elements", a.elements},
                                 {"bytes", a.bytes()},
                                 {"max_elements", a.max_elements},
                                 {"limited_by", a.limited_by}};
  j["roofline"] = {
      {"gpu", e.roofline_gpu},
      {"peak_ops", e.peak_ops},
      {"bandwidth_bytes_per_s", e.bandwidth},
      {"bound_ops", e.roofline_ops ? nlohmann::json(*e.roofline_ops) : nlohmann::json(nullptr)}};
  j["tensor_cores"] = e.mma.tensor_cores;
  j["mma"] = e.mma.instruction;
  j["mma_note"] = e.mma.note;
  j["findings"] = nlohmann::json::array();
  for (const RuleFinding &f : e.findings)
    j["findings"].push_back({{"rule", f.rule}, {"problem", f.problem}, {"fix", f.fix}});
  return j;
}

// The config the runtime would compile on a cache miss (the default chooser: the cost model's best
// legal config) and its predicted time on the arch's GPU; nullopt when the code generator does
// not compile the spec.
struct ChosenConfig {
  codegen::TileConfig config;
  tuner::Prediction prediction;
  std::string gpu;
  std::string calibration; // "calibrated on ..." (tcjit calibrate); "" for the model's constants
  bool given = false;      // the request's --config, not the chooser's
};

// The request's config words over the default config, checked as `tcjit compile` checks them.
codegen::TileConfig given_config(const OpSpec &spec, const ExplainRequest &request, bool tf32_off) {
  codegen::TileConfig c = codegen::default_tile_config(spec, request.arch, tf32_off);
  std::string error;
  if (!codegen::parse_tile_config(request.config, c, error))
    throw Error(ErrorCode::invalid_argument, "--config '" + request.config + "': " + error,
                "explain", "");
  std::string text;
  for (const codegen::ConfigError &e :
       codegen::validate_tile_config(spec, c, request.arch, tf32_off))
    text += (text.empty() ? "" : "\n") + (e.field.empty() ? "" : e.field + ": ") + e.message;
  if (!text.empty())
    throw Error(ErrorCode::invalid_argument, "--config '" + request.config + "': " + text,
                "explain", "");
  return c;
}

std::optional<ChosenConfig> chosen_config(const OpSpec &spec, const ExplainRequest &request,
                                          bool tf32_off) {
  if (!codegen::check_codegen_support(spec, request.arch, tf32_off).empty())
    return std::nullopt;
  codegen::TileConfig config;
  if (!request.config.empty()) {
    config = given_config(spec, request, tf32_off);
  } else {
    const std::vector<codegen::TileConfig> configs =
        tuner::heuristic_configs(spec, request.arch, tf32_off);
    if (configs.empty())
      return std::nullopt;
    config = configs.front();
  }
  const tuner::GpuModel gpu =
      api::calibrated_gpu_model(request.db_path, request.arch, "", "explain");
  return ChosenConfig{config, tuner::predict_config(gpu, spec, config, tf32_off), gpu.name,
                      gpu.calibration, !request.config.empty()};
}

std::string render_chosen(const ChosenConfig &c, bool concrete) {
  char line[256];
  std::snprintf(line, sizeof line,
                "predicted %.2f us on %s (%.1f TFLOP/s, %.0f%% of peak, %s-bound)",
                c.prediction.seconds * 1e6, c.gpu.c_str(), c.prediction.tflops,
                100 * c.prediction.fraction_of_peak, c.prediction.bound.c_str());
  return "config:      " + codegen::to_string(c.config) +
         (c.given ? " (given with --config)\n"
                  : " (the cost model's best legal config; `tcjit tune` searches further)\n") +
         "             " + line + (concrete ? "" : " at nominal sizes") +
         "; a prediction, not a measurement\n" + "             the model: " +
         (c.calibration.empty() ? "uncalibrated (tcjit calibrate fits it to measured results)"
                                : c.calibration) +
         "\n";
}

} // namespace

OpExplanation explain_op(const WorkloadEntry &entry, const ExplainRequest &request) {
  if (!find_arch(request.arch))
    throw Error(ErrorCode::invalid_argument,
                "unknown arch '" + request.arch + "' (tcjit targets " +
                    std::string(known_arch_list()) + ")",
                "explain", "");
  api::throw_if_invalid(entry.spec, "explain");
  const bool tf32_off = tf32_disabled_by_environment();
  const Explanation e = explain_spec(entry.spec, request.arch, tf32_off);
  const std::optional<ChosenConfig> chosen = chosen_config(entry.spec, request, tf32_off);
  OpExplanation out;
  nlohmann::json j = to_json(entry, e);
  // What `tcjit compile` does with the spec (when it refuses the dtypes, mma_note says why).
  j["compiles"] = codegen::check_codegen_support(entry.spec, request.arch, tf32_off).empty();
  out.text = render_explanation(e);
  if (chosen) {
    out.config = codegen::to_string(chosen->config);
    out.text += render_chosen(*chosen, is_concrete(entry.spec));
    const codegen::KernelPlan plan =
        codegen::plan_kernel(entry.spec, chosen->config, request.arch, tf32_off);
    nlohmann::json path = nlohmann::json::object();
    std::string last;
    for (const codegen::KernelPathLine &l : codegen::describe_kernel_path(entry.spec, plan)) {
      out.text += (l.label.empty() ? std::string(13, ' ')
                                   : l.label + ":" + std::string(12 - l.label.size(), ' ')) +
                  l.text + "\n";
      last = l.label.empty() ? last : l.label;
      if (path.contains(last))
        path[last] = path[last].get<std::string>() + "; " + l.text;
      else
        path[last] = l.text;
    }
    j["kernel_path"] = path;
    j["chosen_config"] = {{"config", out.config},
                          {"predicted_us", chosen->prediction.seconds * 1e6},
                          {"predicted_tflops", chosen->prediction.tflops},
                          {"fraction_of_peak", chosen->prediction.fraction_of_peak},
                          {"bound", chosen->prediction.bound},
                          {"gpu", chosen->gpu},
                          {"calibration", chosen->calibration},
                          {"given", chosen->given},
                          {"provenance", "predicted"}};
  }
  out.json = kernels_db::dump_json(j, -1);
  return out;
}

} // namespace tcjit
