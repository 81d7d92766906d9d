// tcjit_bench: the C++ half of bench/run (bench/compare.py drives it). Three subcommands, each
// printing one JSON object on stdout:
//
//   compile  spec -> PTX -> cubin exactly as the runtime does it on a cache miss
//            (engine::find_or_compile_kernel into a fresh database), repeated; per-stage times, the
//            resources the runtime recorded, and the PTX and the stored cubin written to --out.
//   emu      runs a GEMM kernel on tcjit's PTX emulator with the inputs tcjit's own verification
//            uses (fill_random with seeds S, S+1, S+2) and checks D against the CPU reference
//            under the tolerance model: tcjit's kernel (--abi tcjit), or an anchor's PTX
//            (--abi triton: Triton's (a, b, c, M, N, K, lda, ldb, ldc, scratch...) signature;
//            --abi cutlass: CUTLASS's Params struct, whose bytes --params-program prints).
//   predict  the tuner's performance model (tuner/perf_model.h) for a kernel's features.
//
// Layer: a benchmark, on top of everything (it uses the runtime facade, the emulator and the
// tuner's model).
#include "compiler/codegen/pipeline.h"
#include "compiler/codegen/plan/tile_config.h"
#include "compiler/dsl/parser.h"
#include "compiler/reference/gemm_geometry.h"
#include "compiler/reference/gemm_reference.h"
#include "compiler/reference/random_fill.h"
#include "compiler/reference/tolerance.h"
#include "compiler/spec/problem_key.h"
#include "engine/kernel_cache.h"
#include "engine/verify_kernel.h"
#include "kernels_db/kernels_db.h"
#include "runtime/emu/emu_device.h"
#include "tuner/chosen_configs.h"
#include "tuner/perf_model.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace tcjit::bench {

namespace {

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

OpSpec parse_one(const std::string &text) {
  ParseResult r = parse_spec(text, "--spec");
  if (!r.ok() || r.entries.size() != 1)
    throw std::invalid_argument("--spec '" + text + "' is not one valid spec");
  return r.entries.front().spec;
}

std::optional<codegen::TileConfig> parse_config(const std::string &text) {
  if (text.empty())
    return std::nullopt;
  codegen::TileConfig c;
  std::string err;
  if (!codegen::parse_tile_config(text, c, err))
    throw std::invalid_argument("--config '" + text + "': " + err);
  return c;
}

void write_file(const fs::path &path, const void *data, size_t size) {
  std::ofstream f(path, std::ios::binary);
  f.write(static_cast<const char *>(data), static_cast<std::streamsize>(size));
  if (!f)
    throw std::runtime_error("cannot write " + path.string());
}

json counters_json(const emu::LaunchCounters &c) {
  json by_class = json::object();
  for (size_t i = 0; i < emu::kInstrClassCount; ++i)
    by_class[emu::instr_class_name(static_cast<emu::InstrClass>(i))] =
        c.warp_instructions_by_class[i];
  return {{"ctas", c.ctas},
          {"warp_instructions", c.warp_instructions},
          {"warp_instructions_by_class", by_class},
          {"mma_instructions", c.mma_instructions},
          {"shared_load_requests", c.shared_load_requests},
          {"shared_store_requests", c.shared_store_requests},
          {"ldmatrix_requests", c.ldmatrix_requests},
          {"shared_bank_conflicts", c.shared_bank_conflicts},
          {"shared_wavefronts", c.shared_wavefronts},
          {"global_load_requests", c.global_load_requests},
          {"global_store_requests", c.global_store_requests},
          {"cp_async_requests", c.cp_async_requests},
          {"global_load_sectors", c.global_load_sectors},
          {"global_store_sectors", c.global_store_sectors},
          {"global_load_efficiency", c.global_load_efficiency()},
          {"global_store_efficiency", c.global_store_efficiency()},
          {"barriers", c.barriers}};
}

json report_json(const CompareReport &r) {
  return {{"ok", r.ok()},
          {"count", r.count},
          {"mismatches", r.mismatches},
          {"max_abs_error", r.max_abs_error},
          {"max_error_over_tolerance", r.max_error_over_tolerance},
          {"summary", r.ok() ? std::string() : r.summary()}};
}

// ---- compile -------------------------------------------------------------------------------

struct CompileArgs {
  std::string spec, config, arch = "sm_80", out;
  int reps = 5;
};

json run_compile(const CompileArgs &a) {
  const bool tf32_off = tf32_disabled_by_environment();
  json runs = json::array();
  engine::ServedKernel last;
  const fs::path scratch =
      fs::temp_directory_path() / ("tcjit-bench-" + std::to_string(::getpid()));
  fs::create_directories(scratch);
  for (int rep = 0; rep < a.reps; ++rep) {
    const fs::path db_path = scratch / ("rep" + std::to_string(rep) + ".db");
    auto db = std::make_unique<kernels_db::KernelsDb>(kernels_db::KernelsDb::open(db_path));
    const auto t0 = Clock::now();
    const OpSpec spec = parse_one(a.spec);
    const double parse_ms = ms_since(t0);
    engine::KernelRequest request;
    request.arch = a.arch;
    request.tf32_off = tf32_off;
    request.config = parse_config(a.config);
    const ProblemKey key = make_problem_key(spec, a.arch, tf32_off);
    engine::ServedKernel src = tuner::serve_kernel(spec, key, request, db.get());
    const double total_ms = ms_since(t0);
    if (!src.ok())
      throw std::runtime_error("compile failed: " + src.errors.front());
    json stages = json::object();
    double spec_to_ptx = parse_ms, ptx_to_cubin = 0;
    for (const codegen::StageTime &s : src.kernel.times) {
      stages[s.name] = s.ms;
      if (s.name == "ptxas")
        ptx_to_cubin += s.ms;
      else
        spec_to_ptx += s.ms;
    }
    // What find_or_compile_kernel spent beyond the compiler's passes: nvJitLink and the store.
    const double rest = total_ms - parse_ms - src.kernel.total_ms();
    stages["link_and_store"] = rest;
    ptx_to_cubin += rest;
    runs.push_back({{"stages_ms", stages},
                    {"spec_to_ptx_ms", spec_to_ptx},
                    {"ptx_to_cubin_ms", ptx_to_cubin},
                    {"total_ms", total_ms}});
    db.reset();
    last = std::move(src);
  }
  fs::remove_all(scratch);
  json out = {{"runs", runs},
              {"kernel", last.kernel.plan.kernel_name},
              {"config", codegen::to_string(last.kernel.config)},
              {"threads", codegen::threads_per_cta(last.kernel.config)},
              {"shared_bytes", last.kernel.plan.smem_bytes},
              {"recorded_registers", last.resources.registers},
              {"recorded_spill_bytes", last.resources.spill_bytes},
              {"how", last.how}};
  if (!a.out.empty()) {
    fs::create_directories(a.out);
    write_file(fs::path(a.out) / "tcjit.ptx", last.kernel.ptx.data(), last.kernel.ptx.size());
    out["ptx"] = (fs::path(a.out) / "tcjit.ptx").string();
    if (!last.cubin.empty()) {
      write_file(fs::path(a.out) / "tcjit.cubin", last.cubin.data(), last.cubin.size());
      out["cubin"] = (fs::path(a.out) / "tcjit.cubin").string();
    }
  }
  return out;
}

// ---- emu -----------------------------------------------------------------------------------

struct EmuArgs {
  std::string spec, config, abi = "tcjit", ptx, kernel, params_program;
  std::vector<uint32_t> grid, block;
  uint32_t shared = 0;
  uint64_t seed = 1;
  unsigned threads = 0;
};

std::vector<std::byte> random_bytes(DType t, int64_t count, uint64_t seed) {
  std::vector<std::byte> v(static_cast<size_t>((count * dtype_bits(t) + 7) / 8));
  fill_random(t, v.data(), count, seed);
  return v;
}

std::string read_text(const std::string &path) {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    throw std::runtime_error("cannot read " + path);
  return {std::istreambuf_iterator<char>(f), {}};
}

// Runs `command` and returns its standard output; throws when it fails.
std::string capture(const std::string &command) {
  std::unique_ptr<FILE, int (*)(FILE *)> pipe(::popen(command.c_str(), "r"), ::pclose);
  if (!pipe)
    throw std::runtime_error("cannot run " + command);
  std::string out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe.get())) > 0)
    out.append(buf.data(), n);
  const int status = ::pclose(pipe.release());
  if (status != 0)
    throw std::runtime_error("'" + command + "' failed (status " + std::to_string(status) + ")");
  return out;
}

device::Dim3 dim3_of(const std::vector<uint32_t> &v, const char *flag) {
  if (v.empty() || v.size() > 3)
    throw std::invalid_argument(std::string(flag) + " needs 1 to 3 numbers");
  device::Dim3 d;
  d.x = v[0];
  d.y = v.size() > 1 ? v[1] : 1;
  d.z = v.size() > 2 ? v[2] : 1;
  return d;
}

json run_emu(const EmuArgs &a) {
  const OpSpec spec = parse_one(a.spec);
  const bool tf32_off = tf32_disabled_by_environment();
  emu::EmuDeviceOptions dopt;
  dopt.worker_threads = a.threads;
  emu::EmuDevice dev(dopt);
  json out = {{"abi", a.abi}};

  if (a.abi == "tcjit") {
    codegen::CompileOptions copt;
    copt.tf32_off = tf32_off;
    copt.config = parse_config(a.config);
    const codegen::CompiledKernel kernel = codegen::compile_gemm(spec, copt);
    if (!kernel.ok())
      throw std::runtime_error("compile failed: " + kernel.errors.front().message);
    const engine::KernelCheck check = engine::run_and_check_kernel(dev, kernel, spec, a.seed);
    out["report"] = report_json(check.report);
    out["device_ms"] = check.device_ms;
    out["counters"] = counters_json(*check.counters);
    return out;
  }

  const GemmGeometry geo = gemm_geometry(spec);
  const MathMode math = resolve_math(spec.math, tf32_off);
  const auto ga = random_bytes(geo.a.dtype, geo.batch * geo.a.batch_stride, a.seed);
  const auto gb = random_bytes(geo.b.dtype, geo.batch * geo.b.batch_stride, a.seed + 1);
  const auto gc = random_bytes(geo.c.dtype, geo.batch * geo.c.batch_stride, a.seed + 2);
  std::vector<std::byte> c_ref = gc;
  const ReferenceResult ref =
      reference_gemm(spec, {ga.data(), gb.data(), c_ref.data(), nullptr}, math);

  const auto t0 = Clock::now();
  auto upload = [&](const std::vector<std::byte> &host) {
    const device::DevicePtr p = dev.allocate(host.size());
    dev.copy_to_device(p, host.data(), host.size());
    return p;
  };
  const device::DevicePtr da = upload(ga), db = upload(gb), dc = upload(gc);
  const auto module = dev.load_module(read_text(a.ptx), a.ptx);
  const auto fn = dev.get_function(module, a.kernel);
  const device::KernelInfo &info = dev.kernel_info(fn);
  device::LaunchConfig launch;
  std::vector<std::byte> params;
  if (a.abi == "triton") {
    launch.grid = dim3_of(a.grid, "--grid");
    launch.block = dim3_of(a.block, "--block");
    launch.dynamic_shared_bytes = a.shared;
    device::ParamBuffer p(info);
    if (info.params.size() < 9)
      throw std::runtime_error(a.kernel + " has " + std::to_string(info.params.size()) +
                               " parameters; the Triton anchor has at least 9");
    p.set(0, da);
    p.set(1, db);
    p.set(2, dc);
    const int32_t sizes[6] = {int32_t(geo.m),
                              int32_t(geo.n),
                              int32_t(geo.k),
                              int32_t(geo.a.row_stride),
                              int32_t(geo.b.col_stride),
                              int32_t(geo.c.row_stride)};
    for (int i = 0; i < 6; ++i)
      p.set(size_t(3 + i), sizes[i]);
    for (size_t i = 9; i < info.params.size(); ++i)
      p.set(i, uint64_t{0}); // global/profile scratch: the anchor's kernel needs none
    params.assign(p.bytes().begin(), p.bytes().end());
  } else if (a.abi == "cutlass") {
    const std::string cmd = a.params_program + " " + std::to_string(geo.m) + " " +
                            std::to_string(geo.n) + " " + std::to_string(geo.k) + " " +
                            std::to_string(da) + " " + std::to_string(db) + " " +
                            std::to_string(dc) + " " + std::to_string(dc);
    const json shape = json::parse(capture(cmd));
    launch.grid = dim3_of(shape["grid"].get<std::vector<uint32_t>>(), "grid");
    launch.block = dim3_of(shape["block"].get<std::vector<uint32_t>>(), "block");
    launch.dynamic_shared_bytes = shape["shared"].get<uint32_t>();
    const std::string hex = shape["params"].get<std::string>();
    if (hex.size() != 2 * size_t(info.param_bytes))
      throw std::runtime_error("the Params from " + a.params_program + " have " +
                               std::to_string(hex.size() / 2) + " bytes; " + a.kernel + " takes " +
                               std::to_string(info.param_bytes));
    for (size_t i = 0; i < hex.size(); i += 2)
      params.push_back(std::byte(std::stoi(hex.substr(i, 2), nullptr, 16)));
  } else {
    throw std::invalid_argument("--abi must be tcjit, triton or cutlass");
  }
  dev.launch(fn, launch, params);
  dev.synchronize();
  std::vector<std::byte> result(gc.size());
  dev.copy_to_host(result.data(), dc, result.size());
  out["device_ms"] = ms_since(t0);
  out["counters"] = counters_json(dev.last_counters());
  out["report"] = report_json(compare_with_reference(spec, math, result.data(), ref));
  return out;
}

// ---- predict -------------------------------------------------------------------------------

struct PredictArgs {
  std::string gpu = "a100", math = "f16", tile = "128x128x32", mma = "16x8x16", bytes = "2,2,2";
  int threads = 128, registers = 0, shared = 0, split_k = 1;
  double ipm = 0;
  int64_t m = 0, n = 0, k = 0, batch = 1;
};

std::array<int, 3> three_ints(const std::string &text, char sep, const char *flag) {
  std::array<int, 3> v{};
  size_t pos = 0;
  for (int i = 0; i < 3; ++i) {
    const size_t end = text.find(sep, pos);
    if ((i < 2) == (end == std::string::npos))
      throw std::invalid_argument(std::string(flag) + " '" + text + "': expected three numbers");
    v[size_t(i)] = std::stoi(text.substr(pos, end - pos));
    pos = end + 1;
  }
  return v;
}

json run_predict(const PredictArgs &a) {
  const auto math = tuner::parse_math_kind(a.math);
  if (!math)
    throw std::invalid_argument("--math '" + a.math + "': f16 bf16 tf32 s8 f64 f32_simt");
  const tuner::GpuModel &gpu = a.gpu == "h100" ? tuner::h100_model() : tuner::a100_model();
  if (a.gpu != "a100" && a.gpu != "h100")
    throw std::invalid_argument("--gpu must be a100 or h100");
  tuner::KernelFeatures f;
  f.math = *math;
  const auto tile = three_ints(a.tile, 'x', "--tile");
  const auto mma = three_ints(a.mma, 'x', "--mma");
  const auto bytes = three_ints(a.bytes, ',', "--bytes");
  f.bm = tile[0], f.bn = tile[1], f.bk = tile[2];
  f.mma_m = mma[0], f.mma_n = mma[1], f.mma_k = mma[2];
  f.a_bytes = bytes[0], f.b_bytes = bytes[1], f.c_bytes = bytes[2];
  f.threads = a.threads;
  f.registers = a.registers;
  f.shared_bytes = a.shared;
  f.instructions_per_mma = a.ipm;
  f.split_k = a.split_k;
  const tuner::Prediction p = tuner::predict(gpu, f, {a.m, a.n, a.k, a.batch, false});
  return {{"gpu", gpu.name},
          {"launchable", p.launchable},
          {"why_not", p.why_not},
          {"ctas_per_sm", p.ctas_per_sm},
          {"ctas", p.ctas},
          {"waves", p.waves},
          {"seconds", p.seconds},
          {"tflops", p.tflops},
          {"fraction_of_peak", p.fraction_of_peak},
          {"peak_tflops", gpu.peak_flops(*math) / 1e12},
          {"bound", p.bound},
          {"tensor_cycles", p.tensor_cycles},
          {"issue_cycles", p.issue_cycles},
          {"l2_cycles", p.l2_cycles},
          {"dram_seconds", p.dram_seconds}};
}

} // namespace

} // namespace tcjit::bench

int main(int argc, char **argv) {
  using namespace tcjit::bench;
  CLI::App app{"tcjit_bench: the measurements bench/run takes (one JSON object on stdout)"};
  app.require_subcommand(1);

  CompileArgs ca;
  auto *compile = app.add_subcommand("compile", "spec -> PTX -> cubin as the runtime does it");
  compile->add_option("--spec", ca.spec, "DSL text of one GEMM")->required();
  compile->add_option("--config", ca.config, "tile config (tcjit compile's form)");
  compile->add_option("--arch", ca.arch, "target arch");
  compile->add_option("--reps", ca.reps, "repetitions")->check(CLI::Range(1, 1000));
  compile->add_option("--out", ca.out, "folder for tcjit.ptx and tcjit.cubin");

  EmuArgs ea;
  auto *emu = app.add_subcommand("emu", "run and verify a GEMM kernel on the PTX emulator");
  emu->add_option("--spec", ea.spec, "DSL text of one GEMM")->required();
  emu->add_option("--abi", ea.abi, "tcjit | triton | cutlass");
  emu->add_option("--config", ea.config, "tcjit's tile config (--abi tcjit)");
  emu->add_option("--ptx", ea.ptx, "the anchor's PTX file");
  emu->add_option("--kernel", ea.kernel, "its entry");
  emu->add_option("--grid", ea.grid, "grid (triton)")->delimiter(',');
  emu->add_option("--block", ea.block, "block (triton)")->delimiter(',');
  emu->add_option("--shared", ea.shared, "dynamic shared bytes (triton)");
  emu->add_option("--params-program", ea.params_program, "prints CUTLASS's Params (cutlass)");
  emu->add_option("--seed", ea.seed, "input seed");
  emu->add_option("--threads", ea.threads, "emulator worker threads (0: all cores)");

  PredictArgs pa;
  auto *predict = app.add_subcommand("predict", "the tuner's performance model");
  predict->add_option("--gpu", pa.gpu, "a100 | h100");
  predict->add_option("--math", pa.math, "f16 bf16 tf32 s8 f64 f32_simt");
  predict->add_option("--tile", pa.tile, "BMxBNxBK");
  predict->add_option("--mma", pa.mma, "MxNxK of one math instruction");
  predict->add_option("--bytes", pa.bytes, "element bytes of A,B,C");
  predict->add_option("--threads", pa.threads, "threads per CTA");
  predict->add_option("--registers", pa.registers, "registers per thread");
  predict->add_option("--shared", pa.shared, "shared bytes per CTA");
  predict->add_option("--ipm", pa.ipm, "main-loop instructions per mma");
  predict->add_option("--split-k", pa.split_k, "split-K slices");
  predict->add_option("--m", pa.m)->required();
  predict->add_option("--n", pa.n)->required();
  predict->add_option("--k", pa.k)->required();
  predict->add_option("--batch", pa.batch);

  CLI11_PARSE(app, argc, argv);
  try {
    json out;
    if (*compile)
      out = run_compile(ca);
    else if (*emu)
      out = run_emu(ea);
    else
      out = run_predict(pa);
    std::cout << out.dump() << "\n";
    return 0;
  } catch (const std::exception &e) {
    std::cerr << "tcjit_bench: error: " << e.what() << "\n";
    return 3;
  }
}
