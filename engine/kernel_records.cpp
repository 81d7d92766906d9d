#include "engine/kernel_records.h"

#include "compiler/spec/printer.h"
#include "compiler/spec/shape.h"
#include "compiler/spec/validate.h"

#include <nlohmann/json.hpp>

namespace tcjit::engine {

std::string compiler_version() {
  return TCJIT_COMPILER_VERSION;
}
std::string compiler_version(codegen::Backend backend) {
  return backend == codegen::Backend::llvm ? compiler_version() : compiler_version() + "/nvrtc";
}
std::string toolkit_version() {
  return TCJIT_TOOLKIT_VERSION;
}

std::string config_json(const codegen::TileConfig &c) {
  nlohmann::json j = {{"bm", c.bm},           {"bn", c.bn},
                      {"bk", c.bk},           {"wm", c.wm},
                      {"wn", c.wn},           {"stages", c.stages},
                      {"split_k", c.split_k}, {"raster_group", c.raster_group},
                      {"vec_a", c.vec_a},     {"vec_b", c.vec_b}};
  if (c.pad_c != 0) // only where it is used: the keys of every other config stay as they were
    j["pad_c"] = c.pad_c;
  return j.dump(); // nlohmann::json objects keep keys sorted
}

std::optional<codegen::TileConfig> parse_config_json(std::string_view text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object())
    return std::nullopt;
  codegen::TileConfig c;
  auto get = [&](const char *name, int &field) {
    if (!j.contains(name) || !j[name].is_number_integer())
      return false;
    field = j[name].get<int>();
    return true;
  };
  if (!get("bm", c.bm) || !get("bn", c.bn) || !get("bk", c.bk) || !get("wm", c.wm) ||
      !get("wn", c.wn) || !get("stages", c.stages) || !get("split_k", c.split_k) ||
      !get("raster_group", c.raster_group) || !get("vec_a", c.vec_a) || !get("vec_b", c.vec_b))
    return std::nullopt;
  if (j.contains("pad_c") && !get("pad_c", c.pad_c))
    return std::nullopt;
  return c;
}

kernels_db::ProblemRecord problem_record(const OpSpec &spec, const ProblemKey &key,
                                         std::string_view arch) {
  kernels_db::ProblemRecord p;
  p.key_text = key.text;
  p.key_hash = key.hash;
  p.op = std::string(to_string(spec.kind));
  p.dtype = std::string(to_string(input_dtype(spec)));
  p.arch = std::string(arch);
  p.spec_text = print_spec(spec);
  nlohmann::json shape = nlohmann::json::object();
  const ImplicitGemm g = implicit_gemm(spec);
  auto put = [&](const char *name, const Dim &d) {
    if (d.is_fixed())
      shape[name] = d.value;
  };
  put("m", g.m);
  put("n", g.n);
  put("k", g.k);
  put("batch", g.batch);
  if (spec.kind != OpKind::gemm)
    shape["groups"] = g.groups;
  p.shape_json = shape.dump();
  return p;
}

kernels_db::BinaryRecord binary_record(const ProblemKey &key, const codegen::CompiledKernel &k,
                                       std::string_view arch,
                                       const std::vector<jit::EntryResources> &resources) {
  kernels_db::BinaryRecord b;
  b.key = {key.text, config_json(k.config), std::string(arch), toolkit_version(),
           compiler_version(k.cuda_source.empty() ? codegen::Backend::llvm
                                                  : codegen::Backend::cuda_source)};
  b.kernel_identity = codegen::kernel_identity(k.plan); // one binary per PTX, shared by sizes
  b.ptx = k.ptx;
  // The main kernel's figures at the top level (what `tcjit db show` lists), every kernel's under
  // "kernels". "shared_bytes" is the CTA's total: dynamic (the plan's) + static.
  nlohmann::json res = nlohmann::json::object();
  res["dynamic_shared_bytes"] = k.plan.smem_bytes;
  res["threads"] = k.plan.threads;
  nlohmann::json kernels = nlohmann::json::object();
  for (const jit::EntryResources &r : resources) {
    nlohmann::json one = {
        {"registers", r.registers},          {"spill_stores", r.spill_stores},
        {"spill_loads", r.spill_loads},      {"spill_bytes", r.spill_bytes()},
        {"stack_bytes", r.stack_frame},      {"static_shared_bytes", r.static_shared_bytes},
        {"constant_bytes", r.constant_bytes}};
    if (r.kernel == k.plan.kernel_name) {
      for (auto it = one.begin(); it != one.end(); ++it)
        res[it.key()] = it.value();
      res["shared_bytes"] = k.plan.smem_bytes + r.static_shared_bytes;
    }
    kernels[r.kernel] = std::move(one);
  }
  if (!kernels.empty())
    res["kernels"] = std::move(kernels);
  b.resources_json = res.dump();
  b.compile_options = "tcjit codegen --arch " + std::string(arch) +
                      (k.cuda_source.empty() ? "" : " --backend nvrtc");
  b.compile_ms = k.total_ms();
  return b;
}

} // namespace tcjit::engine
