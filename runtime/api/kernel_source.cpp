#include "runtime/api/kernel_source.h"

#include "compiler/spec/arch.h"
#include "runtime/api/kernel_records.h"
#include "runtime/device/device.h"
#include "runtime/jit/ptx_compiler.h"

#include <nlohmann/json.hpp>

#include <cstdio>

namespace tcjit::api {

namespace {

std::string fmt(const char *format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// The resources recorded by binary_record(); unknown fields stay -1.
KernelResources recorded_resources(const std::string &resources_json, int dynamic_shared) {
  KernelResources r;
  r.shared_bytes = dynamic_shared;
  const nlohmann::json res = nlohmann::json::parse(resources_json, nullptr, false);
  if (!res.is_object())
    return r;
  if (res.contains("registers") && res["registers"].is_number_integer())
    r.registers = res["registers"].get<int>();
  if (res.contains("spill_stores") && res.contains("spill_loads"))
    r.spill_bytes = res.value("spill_stores", 0) + res.value("spill_loads", 0);
  if (res.contains("shared_bytes") && res["shared_bytes"].is_number_integer())
    r.shared_bytes += res["shared_bytes"].get<int>();
  return r;
}

// Links `k.ptx` to a cubin for `arch` with nvJitLink. Returns false with `note` saying why there
// is none (nvJitLink missing, or it refused the PTX: the kernel still runs from its PTX).
bool link_cubin(const codegen::CompiledKernel &k, std::vector<uint8_t> &cubin, std::string &note) {
  const jit::NvJitLinkLibrary &library = jit::nvjitlink_library();
  if (!library.loaded) {
    note = "no cubin: nvJitLink cannot be loaded (" + library.error + ")";
    return false;
  }
  jit::PtxCompileOptions options;
  options.sm_arch = k.plan.sm;
  try {
    const jit::CompiledPtx linked = jit::compile_ptx(k.ptx, k.plan.kernel_name, options, library);
    cubin.assign(linked.cubin.begin(), linked.cubin.end());
    note = "cubin " + std::to_string(cubin.size()) + " B by nvJitLink " +
           std::to_string(library.major) + "." + std::to_string(library.minor) + " in " +
           fmt("%.1f ms", linked.compile_milliseconds);
    return !cubin.empty();
  } catch (const device::DeviceError &e) {
    note = std::string("no cubin: nvJitLink refused the PTX: ") + e.what();
    return false;
  }
}

} // namespace

std::string target_arch(std::string_view requested, const device::DeviceInfo &device,
                        std::string &error) {
  if (!requested.empty()) {
    if (find_arch(requested))
      return std::string(requested);
    error = "unknown arch '" + std::string(requested) + "' (tcjit targets " +
            std::string(known_arch_list()) + ")";
    return "";
  }
  const std::string arch = "sm_" + std::to_string(device.sm_arch);
  if (find_arch(arch))
    return arch;
  error = "the device is " + arch + ", which tcjit does not target (" +
          std::string(known_arch_list()) + ")";
  return "";
}

KernelSource find_or_compile_gemm(const OpSpec &spec, const ProblemKey &key,
                                  const KernelRequest &request, kernels_db::KernelsDb *db) {
  KernelSource out;
  const codegen::TileConfig config = codegen::resolve_vectors(
      spec, request.config ? *request.config
                           : codegen::default_tile_config(spec, request.arch, request.tf32_off));
  const auto config_errors =
      codegen::validate_tile_config(spec, config, request.arch, request.tf32_off);
  if (!config_errors.empty()) {
    for (const codegen::ConfigError &e : config_errors)
      out.errors.push_back("config " + codegen::to_string(config) + ": " + e.field + ": " +
                           e.message);
    return out;
  }
  if (db) {
    const auto found = db->find_binary(
        {key.text, config_json(config), request.arch, toolkit_version(), compiler_version()});
    out.warnings = found.warnings;
    if (found.status == kernels_db::LookupStatus::hit) {
      out.kernel.config = config;
      out.kernel.plan = codegen::plan_kernel(spec, config, request.arch, request.tf32_off);
      out.kernel.ptx = found.binary->ptx;
      out.cubin = found.binary->cubin;
      out.origin = KernelOrigin::database;
      out.resources = recorded_resources(found.binary->resources_json, out.kernel.plan.smem_bytes);
      out.how = "hit (database " + db->path() + ", compiled " +
                fmt("%.1f ms", found.binary->compile_ms) + " earlier, " +
                (out.cubin.empty() ? std::string("PTX only")
                                   : "cubin " + std::to_string(out.cubin.size()) + " B") +
                ")";
      return out;
    }
  }
  if (!request.compile_on_miss) {
    out.missed = true;
    out.errors.push_back("no kernel for " + key.hash_hex() + " (config " +
                         codegen::to_string(config) + ", " + request.arch + ") in " +
                         (db ? "the database " + db->path() : "a runtime without a database") +
                         ", and the miss policy is fail");
    return out;
  }
  codegen::CompileOptions copt;
  copt.arch = request.arch;
  copt.tf32_off = request.tf32_off;
  copt.config = config;
  copt.run_ptxas = true;
  out.kernel = codegen::compile_gemm(spec, copt);
  if (!out.kernel.ok()) {
    for (const codegen::ConfigError &e : out.kernel.errors)
      out.errors.push_back(e.field + ": " + e.message);
    return out;
  }
  if (out.kernel.ptxas && !out.kernel.ptxas->ok) {
    out.errors.push_back("internal error: ptxas rejected the generated PTX for " + request.arch +
                         ":\n" + out.kernel.ptxas->log);
    return out;
  }
  out.origin = KernelOrigin::compiled_now;
  out.resources.shared_bytes = out.kernel.plan.smem_bytes;
  out.how = "miss, compiled in " + fmt("%.1f ms", out.kernel.total_ms());
  if (out.kernel.ptxas) {
    const codegen::PtxasResult &p = *out.kernel.ptxas;
    out.resources.registers = p.registers;
    out.resources.spill_bytes = p.spill_stores + p.spill_loads;
    out.resources.shared_bytes += p.shared_bytes;
    out.how += " (ptxas: " + std::to_string(p.registers) + " registers, " +
               std::to_string(p.spill_stores + p.spill_loads) + " spill bytes, " +
               std::to_string(out.kernel.plan.smem_bytes) + " B shared)";
  }
  if (db) {
    kernels_db::BinaryRecord record = binary_record(key, out.kernel, request.arch);
    // The cubin for request.arch is stored with the PTX, so that a GPU loads it without
    // compiling; without nvJitLink the PTX alone (a GPU compiles it when it loads it).
    std::string note;
    if (link_cubin(out.kernel, out.cubin, note)) {
      record.cubin = out.cubin;
      record.compile_options += " + nvJitLink -arch=" + request.arch;
    }
    out.how += ", " + note;
    db->put_problem(problem_record(spec, key, request.arch));
    db->put_binary(record);
    out.how += ", stored in " + db->path();
  }
  return out;
}

} // namespace tcjit::api
