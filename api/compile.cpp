// compile (include/tcjit/tools.hpp) and `tcjit compile`: spec -> PTX by the code generator, then
// PTX -> cubin by the very step the runtime ships with (engine::build_cubin), with that compile's
// resources per kernel.
#include "tcjit/tools.hpp"

#include "compiler/codegen/pipeline.h"
#include "compiler/dsl/parser.h"
#include "compiler/spec/printer.h"
#include "compiler/target/arch.h"
#include "engine/kernel_compile.h"
#include "kernels_db/record_json.h"
#include "runtime/cuda/ptx_entry_params.h"
#include "runtime/jit/cuda_toolkit.h"
#include "runtime/jit/nvjitlink_library.h"
#include "runtime/jit/nvrtc_compiler.h"
#include "runtime/jit/ptxas_compiler.h"
#include "tuner/candidate.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <iomanip>
#include <optional>
#include <sstream>
#include <stdexcept>

namespace tcjit {

namespace {

// Fails before any work when the requested compiler cannot run.
void check_cubin_compiler(CubinCompiler cubin) {
  if (cubin == CubinCompiler::nvjitlink) {
    const jit::NvJitLinkLibrary &library = jit::nvjitlink_library();
    if (!library.loaded)
      throw Error(ErrorCode::unsupported,
                  "--nvjitlink needs nvJitLink, which cannot be loaded: " + library.error,
                  "compile", "");
  } else if (cubin == CubinCompiler::ptxas && !jit::ptxas_available()) {
    throw Error(ErrorCode::unsupported,
                "cannot run ptxas at '" + jit::ptxas_executable() +
                    "' (set TCJIT_PTXAS to the toolkit's bin/ptxas, or pass --no-ptxas for PTX "
                    "only)",
                "compile", "");
  }
}

CompiledModule compile_module(const OpSpec &spec, const CompileRequest &request,
                              std::optional<double> parse_ms) {
  if (!find_arch(request.arch))
    throw Error(ErrorCode::invalid_argument,
                "unknown arch '" + request.arch + "' (tcjit targets " +
                    std::string(known_arch_list()) + ")",
                "compile", "");
  const std::optional<codegen::Backend> backend = codegen::parse_backend(request.backend);
  if (!backend)
    throw Error(ErrorCode::invalid_argument,
                "--backend '" + request.backend + "' is not one of llvm, nvrtc", "compile", "");
  check_cubin_compiler(request.cubin);
  codegen::CompileOptions copt;
  copt.arch = request.arch;
  copt.tf32_off = tf32_disabled_by_environment();
  copt.libdevice = jit::current_cuda_toolkit().libdevice.path;
  copt.backend = *backend;
  if (!request.config.empty()) {
    codegen::TileConfig c;
    std::string error;
    if (!codegen::parse_tile_config(request.config, c, error))
      throw Error(ErrorCode::invalid_argument, "--config: " + error, "compile", "");
    copt.config = c;
  }
  codegen::CompiledKernel k;
  try {
    k = engine::compile_kernel(spec, copt);
  } catch (const std::logic_error &e) { // the generated source does not compile: a tcjit bug
    throw Error(ErrorCode::internal, e.what(), "compile", "");
  } catch (const std::runtime_error &e) { // NVRTC cannot be loaded
    throw Error(ErrorCode::unsupported, e.what(), "compile", "");
  }
  if (!k.ok()) {
    std::string text;
    for (const codegen::ConfigError &e : k.errors)
      text += (text.empty() ? "" : "\n") + (e.field.empty() ? "" : e.field + ": ") + e.message;
    // a spec the generator cannot compile is the spec's problem; a bad config the caller's
    const bool spec_problem = k.errors[0].field == "spec" || k.errors[0].field == "arch" ||
                              k.errors[0].field == "backend" || k.errors[0].field == "act";
    throw Error(spec_problem ? ErrorCode::bad_spec : ErrorCode::invalid_argument, text, "compile",
                "");
  }
  CompiledModule m;
  m.spec_text = print_spec(spec);
  m.arch = request.arch;
  m.config = codegen::to_string(k.config);
  m.default_config = request.config.empty();
  m.kernel_name = k.plan.kernel_name;
  m.identity = codegen::kernel_identity(k.plan);
  m.plan_text = codegen::describe(k.plan);
  m.threads = k.plan.threads;
  m.dynamic_shared_bytes = k.plan.smem_bytes;
  m.backend = codegen::to_string(*backend);
  m.cuda_source = k.cuda_source;
  m.ptx = k.ptx;
  for (const device::KernelInfo &info : cuda::parse_ptx_entries(k.ptx, k.plan.kernel_name + ".ptx"))
    m.kernels.push_back(info.name);
  if (parse_ms)
    m.times.push_back({"parse", *parse_ms});
  for (const codegen::StageTime &t : k.times)
    m.times.push_back({t.name, t.ms});

  std::ostringstream out;
  out << "config   " << m.config << (m.default_config ? "  (default)" : "") << "\n";
  out << m.plan_text;
  if (*backend == codegen::Backend::cuda_source)
    out << "backend  nvrtc (CUDA C++ " << m.cuda_source.size() << " bytes, NVRTC "
        << jit::nvrtc_library().major << "." << jit::nvrtc_library().minor << ")\n";
  nlohmann::json j = {{"spec", m.spec_text},
                      {"arch", m.arch},
                      {"backend", m.backend},
                      {"config", m.config},
                      {"config_source", m.default_config ? "default" : "--config"},
                      {"kernel", m.kernel_name},
                      {"identity", m.identity},
                      {"threads", m.threads},
                      {"dynamic_shared_bytes", m.dynamic_shared_bytes},
                      {"ptx_bytes", m.ptx.size()},
                      {"kernels", nlohmann::json::array()},
                      {"times_ms", nlohmann::json::object()}};
  if (request.cubin != CubinCompiler::none) {
    // PTX -> cubin once, as the runtime does it: the whole module (the GEMM kernel, and for
    // split-K its reduce kernel), for exactly the arch. The resources are this cubin's.
    const engine::CubinRoute route =
        request.cubin == CubinCompiler::ptxas       ? engine::CubinRoute::ptxas
        : request.cubin == CubinCompiler::nvjitlink ? engine::CubinRoute::nvjitlink
                                                    : engine::CubinRoute::automatic;
    engine::CubinBuild build = engine::build_cubin(k, route);
    if (!build.error.empty())
      throw Error(ErrorCode::internal,
                  build.error + "\n(a bug in tcjit: please report it with the spec)", "compile",
                  "");
    if (build.stage.empty())
      throw Error(ErrorCode::unsupported, build.note, "compile", "");
    m.cubin = std::move(build.cubin);
    m.cubin_compiler = build.stage;
    m.cubin_options = build.options;
    for (const jit::EntryResources &r : build.resources) {
      KernelUsage u;
      u.kernel = r.kernel;
      u.registers = r.registers;
      u.spill_store_bytes = r.spill_stores;
      u.spill_load_bytes = r.spill_loads;
      u.stack_bytes = r.stack_frame;
      u.shared_bytes =
          (r.kernel == m.kernel_name ? m.dynamic_shared_bytes : 0) + r.static_shared_bytes;
      m.usage.push_back(u);
      out << std::left << std::setw(9) << m.cubin_compiler << std::right << u.kernel << ": "
          << u.registers << " registers, " << u.spill_store_bytes << " B spill stores, "
          << u.spill_load_bytes << " B spill loads, " << u.stack_bytes << " B stack, "
          << u.shared_bytes << " B shared memory\n";
      j["kernels"].push_back({{"name", u.kernel},
                              {"registers", u.registers},
                              {"spill_stores", u.spill_store_bytes},
                              {"spill_loads", u.spill_load_bytes},
                              {"stack_bytes", u.stack_bytes},
                              {"shared_bytes", u.shared_bytes}});
    }
    j["cubin_by"] = m.cubin_compiler;
    m.times.push_back({build.stage == "ptxas" ? "ptxas" : "nvjitlink", build.ms});
  }
  out << "times    ";
  out << std::fixed << std::setprecision(2);
  for (size_t i = 0; i < m.times.size(); ++i) {
    const StageTime &t = m.times[i];
    out << (i ? ", " : "") << (t.stage == "nvjitlink" ? std::string("nvJitLink") : t.stage) << " "
        << t.ms << " ms";
    j["times_ms"][t.stage] = t.ms;
  }
  out << "\n";
  m.text = out.str();
  m.json = kernels_db::dump_json(j, -1);
  return m;
}

} // namespace

CompiledModule compile(const OpSpec &spec, const CompileRequest &request) {
  return compile_module(spec, request, std::nullopt);
}

CompiledModule compile(std::string_view dsl_text, std::string_view source_name,
                       const CompileRequest &request) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<WorkloadEntry> entries = parse_ops(dsl_text, source_name);
  const double parse_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (entries.size() != 1)
    throw Error(ErrorCode::invalid_argument,
                "give one operation (the workload has " + std::to_string(entries.size()) + ")",
                "compile", "");
  return compile_module(entries.front().spec, request, parse_ms);
}

} // namespace tcjit
