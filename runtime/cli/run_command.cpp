// `tcjit run`: the main job. For each spec: look the kernel up in the cache (or compile it and
// store it), run it on a device with random inputs, verify against the CPU reference, and record
// the verified result.
#include "runtime/cli/run_command.h"
#include "kernels_db/record_json.h"

#include "compiler/codegen/conv_lowering.h"
#include "compiler/codegen/pipeline.h"
#include "compiler/dsl/printer.h"
#include "compiler/reference/gemm_geometry.h"
#include "compiler/spec/arch.h"
#include "compiler/spec/problem_key.h"
#include "compiler/spec/shape.h"
#include "kernels_db/kernels_db.h"
#include "runtime/cli/db_path_option.h"
#include "runtime/cli/exit_codes.h"
#include "runtime/cli/spec_input.h"
#include "runtime/device/device_factory.h"
#include "tuner/kernel_records.h"
#include "tuner/kernel_source.h"
#include "tuner/verify_gemm.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <unistd.h>

namespace tcjit::cli {

namespace {

struct RunOptions {
  std::string spec;
  std::string device = "auto";
  std::string arch; // "" = the device's own
  std::string config;
  uint64_t seed = 1;
  std::string db_path; // "" = default
  bool no_cache = false;
  bool allow_long = false; // run on the emulator even when the estimate exceeds kMaxEmuSeconds
  bool json = false;       // one JSON array on stdout (docs/cli.md) instead of the text report
};

// What one workload entry's run found: the JSON of `--json`, and a row of the summary table.
struct RunRecord {
  nlohmann::json json = nlohmann::json::object();
  std::string name, config, cache, result = "error";
  int64_t elements = 0, mismatches = 0;
  double worst = 0; // error / tolerance
};

std::string fmt(const char *format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// Emulator runs estimated to take longer than this are refused unless --allow-long is given.
constexpr double kMaxEmuSeconds = 600;

double gib(double bytes) {
  return bytes / (1024.0 * 1024.0 * 1024.0);
}

double matrix_bytes(const GemmGeometry &g, const MatrixGeometry &m) {
  return static_cast<double>(g.batch) * static_cast<double>(m.batch_stride) * dtype_bits(m.dtype) /
         8;
}

double tensor_bytes(int64_t elements, DType t) {
  return static_cast<double>(elements) * dtype_bits(t) / 8;
}

// The buffers of one `tcjit run`: the two inputs and the output (A, B, C of a GEMM; the tensors of
// a convolution by name, the written one last), with what each takes.
struct HostBuffers {
  std::string in1, in2, out;
  double in1_bytes = 0, in2_bytes = 0, out_bytes = 0, bias_bytes = 0;
};

HostBuffers host_buffers(const OpSpec &spec, const GemmGeometry &g) {
  if (spec.kind == OpKind::gemm)
    return {"A",
            "B",
            "C",
            matrix_bytes(g, g.a),
            matrix_bytes(g, g.b),
            matrix_bytes(g, g.c),
            static_cast<double>(std::max(g.m, g.n)) * dtype_bits(g.c.dtype) / 8};
  const OperandSizes z = operand_sizes(spec);
  const ConvSpec &c = spec.conv;
  const double x = tensor_bytes(z.x, c.x.dtype), w = tensor_bytes(z.filter, c.filter.dtype),
               y = tensor_bytes(z.y, c.y.dtype);
  switch (c.pass) {
  case ConvPass::fprop: return {"x", "filter", "y", x, w, y, tensor_bytes(c.k, c.y.dtype)};
  case ConvPass::dgrad: return {"dy", "filter", "dx", y, w, x, tensor_bytes(c.c, c.x.dtype)};
  case ConvPass::wgrad: return {"x", "dy", "dw", x, y, w, 0};
  }
  return {};
}

// Host memory one `tcjit run` allocates: the inputs, the output and the bias, the reference's copy
// of the output and the output read back; on the emulator, whose device memory is host memory,
// inputs, output and bias once more.
double host_bytes_needed(const HostBuffers &h, bool emulator) {
  const double a = h.in1_bytes, b = h.in2_bytes, c = h.out_bytes, bias = h.bias_bytes;
  return (a + b + 3 * c + bias) + (emulator ? a + b + c + bias : 0);
}

double physical_memory_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<double>(pages) * static_cast<double>(page) : 0;
}

struct EmuEstimate {
  double warp_instructions = 0;
  double seconds = 0;
};

// The emulator's time for a GEMM from its size, at the rates measured in docs/emulator.md
// ("Performance", two cores): the emulator runs 3.4 M f16/bf16, 4.7 M tf32, 2.0 M s8 and 4.2 M
// f64 mma/s, and the f32 SIMT kernel 50 M warp-instr/s. Warp-instructions: about 4.3 per mma for
// the tensor-core kernels and 8 multiply-adds per warp-instruction for the SIMT kernel (counted
// on 1024^3 f16 and 512^3 f32 GEMMs). Sizes are rounded up to the CTA tile. A rough figure: on a
// loaded 2-core machine runs took 2.5-4x the estimate; the CPU reference is not included.
EmuEstimate estimate_emulator(const GemmGeometry &g, const codegen::KernelPlan &plan,
                              const codegen::TileConfig &cfg) {
  auto pad = [](int64_t v, int tile) {
    return tile > 0 ? static_cast<double>((v + tile - 1) / tile * tile) : static_cast<double>(v);
  };
  const double macs =
      static_cast<double>(g.batch) * pad(g.m, cfg.bm) * pad(g.n, cfg.bn) * pad(g.k, cfg.bk);
  EmuEstimate e;
  if (plan.mma.kind == codegen::MmaKind::simt_f32) {
    e.warp_instructions = macs / 8;
    e.seconds = e.warp_instructions / 50e6;
    return e;
  }
  const double mma = macs / (double{1} * plan.mma.m * plan.mma.n * plan.mma.k);
  double rate = 3.4e6;
  switch (plan.mma.kind) {
  case codegen::MmaKind::tf32_f32: rate = 4.7e6; break;
  case codegen::MmaKind::s8_s32: rate = 2.0e6; break;
  case codegen::MmaKind::f64_f64: rate = 4.2e6; break;
  case codegen::MmaKind::f16_f32:
  case codegen::MmaKind::bf16_f32:
  case codegen::MmaKind::simt_f32: break;
  }
  // The epilogue: about 0.4 warp-instructions per output element (conversion, stores), 1.5 with
  // an activation and a bias (gelu, 512x512x256: 1.49 counted), at ~10 M warp-instr/s.
  const double outputs = static_cast<double>(g.batch) * pad(g.m, cfg.bm) * pad(g.n, cfg.bn);
  const bool heavy = plan.epilogue.act != Activation::none || plan.epilogue.bias != BiasKind::none;
  const double epilogue = outputs * (heavy ? 1.5 : 0.4);
  e.warp_instructions = 4.3 * mma + epilogue;
  e.seconds = mma / rate + epilogue / 10e6;
  return e;
}

std::string duration_text(double seconds) {
  if (seconds < 1)
    return "under a second";
  if (seconds < 120)
    return fmt("%.0f s", seconds);
  if (seconds < 7200)
    return fmt("%.0f min", seconds / 60);
  if (seconds < 2 * 86400)
    return fmt("%.1f h", seconds / 3600);
  return fmt("%.3g days", seconds / 86400);
}

// The kernel for one spec (tuner::find_or_compile_gemm), with --config parsed; prints errors and
// warnings.
bool get_kernel(const OpSpec &spec, const ProblemKey &key, const RunOptions &opt, bool tf32_off,
                kernels_db::KernelsDb *db, tuner::KernelSource &out) {
  tuner::KernelRequest request;
  request.arch = opt.arch;
  request.tf32_off = tf32_off;
  if (!opt.config.empty()) {
    codegen::TileConfig c;
    std::string err;
    if (!codegen::parse_tile_config(opt.config, c, err)) {
      std::cerr << "tcjit run: error: --config '" << opt.config << "': " << err << "\n";
      return false;
    }
    request.config = c;
  }
  out = tuner::find_or_compile_gemm(spec, key, request, db);
  for (const std::string &w : out.warnings)
    std::cerr << "tcjit run: warning: " << w << "\n";
  for (const std::string &e : out.errors)
    std::cerr << "tcjit run: error: " << e << "\n";
  return out.ok();
}

kernels_db::ResultRecord verified_result(const ProblemKey &key, const codegen::TileConfig &config,
                                         const std::string &arch, const device::DeviceInfo &dev,
                                         const tuner::GemmCheck &check) {
  kernels_db::ResultRecord r;
  r.problem_key = key.text;
  r.config_json = tuner::config_json(config);
  r.arch = arch;
  r.status = check.report.ok() ? kernels_db::ResultStatus::ok : kernels_db::ResultStatus::failed;
  r.provenance.kind =
      dev.is_emulator ? kernels_db::ProvenanceKind::emulated : kernels_db::ProvenanceKind::measured;
  r.provenance.device = dev.name;
  r.tuner_version = "tcjit run " + tuner::compiler_version();
  if (!check.report.ok())
    r.message = check.report.summary();
  return r;
}

int run_one(const WorkloadEntry &entry, const RunOptions &opt, bool tf32_off,
            kernels_db::KernelsDb *db, device::Device &dev, std::ostream &out, RunRecord &rec) {
  const OpSpec &spec = entry.spec;
  nlohmann::json &j = rec.json;
  j["spec"] = print_spec(spec);
  out << "spec:     " << print_spec(spec) << "\n";
  if (!is_concrete(spec)) {
    std::cerr << "tcjit run: error: the spec has symbolic sizes (? or lo..hi); tcjit run needs "
                 "numbers to make inputs: write e.g. "
              << (spec.kind == OpKind::gemm ? "m=512" : "n=8") << " instead\n";
    return kExitBadSpec;
  }
  const device::DeviceInfo info = dev.info();
  GemmGeometry geo; // of the GEMM, or of a convolution's implicit GEMM
  try {
    geo = codegen::launch_geometry(spec);
  } catch (const std::invalid_argument &e) {
    std::cerr << "tcjit run: error: " << e.what() << "\n";
    return kExitBadSpec;
  }
  {
    const HostBuffers h = host_buffers(spec, geo);
    const double need = host_bytes_needed(h, info.is_emulator);
    const double have = physical_memory_bytes();
    if (have > 0 && need > have) {
      std::cerr << "tcjit run: error: the problem needs " << fmt("%.1f", gib(need))
                << " GiB of host memory for its buffers (" << h.in1 << " "
                << fmt("%.1f", gib(h.in1_bytes)) << " GiB, " << h.in2 << " "
                << fmt("%.1f", gib(h.in2_bytes)) << " GiB, " << h.out << " "
                << fmt("%.1f", gib(h.out_bytes))
                << " GiB, with the reference's and the output's copies"
                << (info.is_emulator ? " and the emulator's device copies" : "")
                << "); the limit is this machine's physical memory, " << fmt("%.1f", gib(have))
                << " GiB: make the problem (or its leading dimensions) smaller\n";
      return kExitUsage;
    }
  }
  const ProblemKey key = make_problem_key(spec, opt.arch, tf32_off);
  out << "key:      " << key.hash_hex() << "\n";
  j["key"] = key.hash_hex();
  tuner::KernelSource source;
  if (!get_kernel(spec, key, opt, tf32_off, db, source))
    return kExitFailure;
  rec.config = codegen::to_string(source.kernel.config);
  rec.cache = source.how;
  j["config"] = rec.config;
  j["kernel"] = source.kernel.plan.kernel_name;
  j["cache"] = source.how;
  j["device"] = info.name;
  out << "config:   " << rec.config << "\n";
  out << "cache:    " << source.how << "\n";
  out << "device:   " << info.name << "\n";
  if (info.is_emulator) {
    const EmuEstimate est = estimate_emulator(geo, source.kernel.plan, source.kernel.config);
    out << "estimate: ~" << fmt("%.3g", est.warp_instructions) << " warp-instructions, "
        << duration_text(est.seconds) << " on the emulator\n"
        << std::flush;
    j["estimate"] = {{"warp_instructions", est.warp_instructions}, {"seconds", est.seconds}};
    if (est.seconds > kMaxEmuSeconds && !opt.allow_long) {
      std::cerr << "tcjit run: error: the emulator would take about " << duration_text(est.seconds)
                << " (" << fmt("%.3g", est.warp_instructions)
                << " warp-instructions); the limit is " << duration_text(kMaxEmuSeconds)
                << ": pass --allow-long to run it anyway, or make the problem smaller\n";
      return kExitUsage;
    }
  }
  const tuner::GemmCheck check =
      tuner::run_and_check_gemm(dev, source.kernel, spec, opt.seed, source.cubin);
  const CompareReport &r = check.report;
  out << "verify:   " << r.count << " elements, " << r.mismatches
      << " outside tolerance, max |error| " << fmt("%.3g", r.max_abs_error)
      << ", worst error/tolerance " << fmt("%.3g", r.max_error_over_tolerance) << " ("
      << fmt("%.1f ms", check.device_ms) << " on the device, " << fmt("%.1f ms", check.reference_ms)
      << " reference)\n";
  rec.elements = r.count;
  rec.mismatches = r.mismatches;
  rec.worst = r.max_error_over_tolerance;
  j["verify"] = {{"elements", r.count},
                 {"mismatches", r.mismatches},
                 {"max_abs_error", r.max_abs_error},
                 {"worst_error_over_tolerance", std::isfinite(r.max_error_over_tolerance)
                                                    ? nlohmann::json(r.max_error_over_tolerance)
                                                    : nlohmann::json("inf")},
                 {"device_ms", check.device_ms},
                 {"reference_ms", check.reference_ms}};
  if (check.counters) {
    const emu::LaunchCounters &c = *check.counters;
    out << "counters: " << c.warp_instructions << " warp-instructions, " << c.mma_instructions
        << " mma, " << c.shared_bank_conflicts << " shared bank conflicts, global load efficiency "
        << fmt("%.0f%%", 100.0 * c.global_load_efficiency()) << "\n";
    j["counters"] = {{"warp_instructions", c.warp_instructions},
                     {"mma", c.mma_instructions},
                     {"shared_bank_conflicts", c.shared_bank_conflicts},
                     {"global_load_efficiency", c.global_load_efficiency()}};
  }
  if (db)
    db->put_result(verified_result(key, source.kernel.config, opt.arch, info, check));
  j["recorded"] = db != nullptr;
  if (!r.ok()) {
    out << "result:   FAILED: " << r.summary() << "\n";
    rec.result = "failed";
    j["result"] = "failed";
    j["failure"] = r.summary();
    return kExitFailure;
  }
  out << "result:   ok" << (info.is_emulator ? ", verified on the emulator" : ", verified")
      << (db ? " and recorded" : "") << "\n";
  rec.result = "ok";
  j["result"] = "ok";
  return kExitOk;
}

int run_run(RunOptions opt) {
  if (!opt.arch.empty() && !find_arch(opt.arch)) {
    std::cerr << "tcjit run: error: unknown arch '" << opt.arch << "' (tcjit targets "
              << known_arch_list() << ")\n";
    return kExitUsage;
  }
  ParseResult parsed;
  if (!load_workload(opt.spec, parsed))
    return kExitBadSpec;
  std::unique_ptr<device::Device> dev;
  try {
    dev = device::open_device(opt.device);
  } catch (const device::DeviceError &e) {
    std::cerr << "tcjit run: error: " << e.what() << "\n";
    return kExitFailure;
  }
  {
    std::string error;
    opt.arch = tuner::target_arch(opt.arch, dev->info(), error);
    if (opt.arch.empty()) {
      std::cerr << "tcjit run: error: " << error << "\n";
      return kExitFailure;
    }
  }
  std::optional<kernels_db::KernelsDb> db;
  if (!opt.no_cache) {
    try {
      db = opt.db_path.empty() ? kernels_db::KernelsDb::open_default()
                               : kernels_db::KernelsDb::open(opt.db_path);
    } catch (const kernels_db::DbError &e) {
      std::cerr << "tcjit run: error: " << e.what() << "\n";
      return kExitFailure;
    }
  }
  const bool tf32_off = tf32_disabled_by_environment();
  std::ostream null_stream(nullptr);
  std::ostream &out = opt.json ? null_stream : std::cout;
  int status = kExitOk;
  bool first = true;
  std::vector<RunRecord> records;
  for (const WorkloadEntry &entry : parsed.entries) {
    if (!first)
      out << "\n";
    first = false;
    RunRecord &rec = records.emplace_back();
    rec.name = entry.name.empty() ? "line " + std::to_string(entry.line) : entry.name;
    rec.json["name"] = rec.name;
    if (parsed.entries.size() > 1 || !entry.name.empty())
      out << "== " << rec.name << "\n";
    int one = kExitFailure;
    try {
      one = run_one(entry, opt, tf32_off, db ? &*db : nullptr, *dev, out, rec);
    } catch (const device::DeviceError &e) {
      std::cerr << "tcjit run: error: the device failed: " << e.what() << "\n";
      rec.json["error"] = std::string("the device failed: ") + e.what();
    } catch (const kernels_db::DbError &e) {
      std::cerr << "tcjit run: error: " << e.what() << "\n";
      rec.json["error"] = e.what();
    }
    if (!rec.json.contains("result"))
      rec.json["result"] = rec.result;
    rec.json["exit_status"] = one;
    if (one != kExitOk && status == kExitOk)
      status = one;
  }
  if (opt.json) {
    nlohmann::json all = nlohmann::json::array();
    for (const RunRecord &r : records)
      all.push_back(r.json);
    std::cout << kernels_db::dump_json(all, 2) << "\n"; // any bytes: invalid UTF-8 replaced
  } else if (records.size() > 1) {
    // The workload's summary: one row per operation.
    size_t width = 7;
    for (const RunRecord &r : records)
      width = std::max(width, r.name.size());
    std::cout << "\n"
              << std::left << std::setw(int(width)) << "problem"
              << "  result  elements  worst err/tol  config\n";
    for (const RunRecord &r : records)
      std::cout << std::left << std::setw(int(width)) << r.name << "  " << std::setw(6) << r.result
                << "  " << std::right << std::setw(8) << r.elements << "  " << std::setw(13)
                << (r.elements ? fmt("%.3g", r.worst) : std::string("-")) << "  " << std::left
                << r.config << "\n";
  }
  return status;
}

} // namespace

void add_run_command(CLI::App &app) {
  auto opt = std::make_shared<RunOptions>();
  CLI::App *cmd = app.add_subcommand(
      "run", "Compile (or fetch from the cache) each GEMM or convolution, run it on random inputs, "
             "verify it "
             "against the CPU reference and record the result; exits 3 when any element is "
             "outside the tolerance");
  cmd->add_option("spec", opt->spec,
                  "DSL text (\"gemm m=... \"), a workload file, or - for standard input")
      ->required();
  cmd->add_option("--device", opt->device, "emu (PTX emulator), cuda, or auto (cuda if present)")
      ->check(CLI::IsMember({"auto", "emu", "cuda"}))
      ->capture_default_str();
  cmd->add_option("--arch", opt->arch,
                  "target architecture: sm_80, sm_86, sm_89, sm_90 (default: the device's; the "
                  "emulator is sm_80)");
  cmd->add_option("--config", opt->config,
                  "tile config over the default, e.g. \"64x64x32 w32x32 s3\" (see tcjit compile)");
  cmd->add_option("--seed", opt->seed, "seed of the random inputs")->capture_default_str();
  cmd->add_option("--db", opt->db_path,
                  "kernel database (default: $TCJIT_DB, else $XDG_CACHE_HOME/tcjit/kernels.db)")
      ->check(non_empty_db_path());
  cmd->add_flag("--no-cache", opt->no_cache, "neither read nor write the kernel database");
  cmd->add_flag("--allow-long", opt->allow_long,
                "run on the emulator even when its time estimate exceeds 10 minutes");
  cmd->add_flag("--json", opt->json,
                "print one JSON array, an object per operation (spec, key, config, cache, "
                "device, verify, counters, result; docs/cli.md), instead of the text report");
  cmd->footer("Example: tcjit run examples/workloads/resnet50.tcjit --device emu");
  cmd->callback([opt]() { throw CLI::RuntimeError(run_run(*opt)); });
}

} // namespace tcjit::cli
