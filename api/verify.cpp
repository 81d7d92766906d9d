// Runtime::verify and `tcjit run`: the kernel for one concrete spec
// (engine::find_or_compile_kernel, the runtime's own path), run on random inputs, checked against
// the CPU reference, recorded.
#include "api/verify.h"

#include "api/served_kernel_error.h"
#include "compiler/codegen/plan/conv_lowering.h"
#include "compiler/reference/gemm_geometry.h"
#include "compiler/spec/printer.h"
#include "compiler/spec/problem_key.h"
#include "compiler/spec/shape.h"
#include "engine/kernel_cache.h"
#include "engine/kernel_launch.h"
#include "engine/kernel_records.h"
#include "engine/verify_kernel.h"
#include "kernels_db/record_json.h"
#include "support/memory_limit.h"
#include "support/string_printf.h"
#include "tuner/chosen_configs.h"
#include "tuner/measure_cuda.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <unistd.h>

namespace tcjit::api {

namespace {

// Emulator runs estimated to take longer than this are refused unless allow_long is set.
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

// The buffers of one run: the two inputs and the output (A, B, C of a GEMM; the tensors of a
// convolution by name, the written one last), with what each takes.
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

// Host memory one run allocates: the inputs, the output and the bias, the reference's copy of the
// output and the output read back; on the emulator, whose device memory is host memory, inputs,
// output and bias once more.
double host_bytes_needed(const HostBuffers &h, bool emulator) {
  const double a = h.in1_bytes, b = h.in2_bytes, c = h.out_bytes, bias = h.bias_bytes;
  return (a + b + 3 * c + bias) + (emulator ? a + b + c + bias : 0);
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
  const double mma = macs / (double{1} * plan.mma.m * plan.mma.n * plan.mma.k * plan.k_pack);
  double rate = 3.4e6;
  switch (plan.mma.kind) {
  case codegen::MmaKind::tf32_f32: rate = 4.7e6; break;
  case codegen::MmaKind::s8_s32:
  case codegen::MmaKind::u8_s32:
  case codegen::MmaKind::s8u8_s32:
  case codegen::MmaKind::u8s8_s32:
  case codegen::MmaKind::e4m3_e4m3_f32: // k32 of bytes, like s8 (not measured separately)
  case codegen::MmaKind::e4m3_e5m2_f32:
  case codegen::MmaKind::e5m2_e4m3_f32:
  case codegen::MmaKind::e5m2_e5m2_f32:
  case codegen::MmaKind::s4_s32:
  case codegen::MmaKind::u4_s32:
  case codegen::MmaKind::s4u4_s32:
  case codegen::MmaKind::u4s4_s32:
  case codegen::MmaKind::b1and_s32:
  case codegen::MmaKind::b1xor_s32: rate = 2.0e6; break;
  case codegen::MmaKind::f64_f64: rate = 4.2e6; break;
  case codegen::MmaKind::f16_f32:
  case codegen::MmaKind::bf16_f32:
  case codegen::MmaKind::f16_f16:
  case codegen::MmaKind::sp_f16_f32: // counted at the dense rate (not measured)
  case codegen::MmaKind::sp_bf16_f32:
  case codegen::MmaKind::sp_s8_s32:
  case codegen::MmaKind::sp_u8_s32:
  case codegen::MmaKind::sp_s4_s32:
  case codegen::MmaKind::sp_u4_s32:
  case codegen::MmaKind::sp_s4u4_s32:
  case codegen::MmaKind::sp_u4s4_s32:
  case codegen::MmaKind::sp_tf32_f32:
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
    return support::string_printf("%.0f s", seconds);
  if (seconds < 7200)
    return support::string_printf("%.0f min", seconds / 60);
  if (seconds < 2 * 86400)
    return support::string_printf("%.1f h", seconds / 3600);
  return support::string_printf("%.3g days", seconds / 86400);
}

kernels_db::ResultRecord verified_result(const ProblemKey &key, const codegen::TileConfig &config,
                                         const std::string &arch, const device::DeviceInfo &dev,
                                         const engine::KernelCheck &check,
                                         const std::optional<tuner::Measurement> &timed) {
  kernels_db::ResultRecord r;
  r.problem_key = key.text;
  r.config_json = engine::config_json(config);
  r.arch = arch;
  r.status = check.report.ok() ? kernels_db::ResultStatus::ok : kernels_db::ResultStatus::failed;
  r.provenance.kind =
      dev.is_emulator ? kernels_db::ProvenanceKind::emulated : kernels_db::ProvenanceKind::measured;
  r.provenance.device = dev.name;
  r.tuner_version = "tcjit run " + engine::compiler_version();
  if (timed) { // a GPU's: what the measurer saw (an ok result on a GPU must carry its timing)
    r.provenance = timed->provenance;
    r.timing = timed->timing;
    r.tflops = timed->tflops;
    r.message = timed->message;
  }
  if (!check.report.ok())
    r.message = check.report.summary();
  return r;
}

// The text report, written line by line to the request's log as it goes, and kept.
class ReportText {
public:
  explicit ReportText(std::ostream *log) : log_(log) {}
  void line(const std::string &text) {
    text_ += text + "\n";
    if (log_)
      *log_ << text << "\n" << std::flush;
  }
  const std::string &text() const { return text_; }

private:
  std::ostream *log_;
  std::string text_;
};

// Forwards an emulator launch's block counts to the request's progress callback.
class ProgressScope {
public:
  ProgressScope(device::Device &dev, const VerifyRequest &request) : dev_(dev) {
    if (!request.on_progress)
      return;
    // The time of each launch from its start: a launch reports first ~0.2 s after it began
    // (kFirstReport), so a report with fewer blocks done than the last one's starts a new launch.
    struct LaunchClock {
      std::chrono::steady_clock::time_point start;
      uint64_t last_done = UINT64_MAX;
    };
    dev_.set_progress([callback = request.on_progress,
                       clock = std::make_shared<LaunchClock>()](uint64_t done, uint64_t total) {
      constexpr std::chrono::milliseconds kFirstReport{200};
      const auto now = std::chrono::steady_clock::now();
      if (clock->last_done == UINT64_MAX || done < clock->last_done)
        clock->start = now - (done < total ? kFirstReport : std::chrono::milliseconds{0});
      clock->last_done = done == total ? UINT64_MAX : done;
      Progress p;
      p.what = "blocks";
      p.done = done;
      p.total = total;
      p.elapsed_seconds = std::chrono::duration<double>(now - clock->start).count();
      callback(p);
    });
    set_ = true;
  }
  ProgressScope(const ProgressScope &) = delete;
  ProgressScope &operator=(const ProgressScope &) = delete;
  ~ProgressScope() {
    if (set_)
      dev_.set_progress({});
  }

private:
  device::Device &dev_;
  bool set_ = false;
};

// Why `served` does not load on `dev` ("" when it does): its PTX or cubin damaged, or not for
// this device.
std::string load_failure(device::Device &dev, const engine::ServedKernel &served) {
  try {
    const engine::LoadedKernel loaded = engine::load_kernel(dev, served.kernel, served.cubin);
    dev.unload_module(loaded.module);
  } catch (const device::DeviceError &e) {
    return e.what();
  }
  return "";
}

} // namespace

VerifyReport verify_on_device(device::Device &dev, kernels_db::KernelsDb *db,
                              const std::string &arch, bool tf32_off, codegen::Backend backend,
                              const OpSpec &spec, const VerifyRequest &request) {
  VerifyReport report;
  ReportText out(request.log);
  nlohmann::json j;
  report.spec_text = print_spec(spec);
  j["spec"] = report.spec_text;
  out.line("spec:     " + report.spec_text);
  if (!is_concrete(spec))
    throw Error(ErrorCode::bad_spec,
                std::string("the spec has symbolic sizes (? or lo..hi); tcjit run needs numbers "
                            "to make inputs: write e.g. ") +
                    (spec.kind == OpKind::gemm ? "m=512" : "n=8") + " instead",
                "verify", "");
  const device::DeviceInfo info = dev.info();
  GemmGeometry geo; // of the GEMM, or of a convolution's implicit GEMM
  try {
    geo = codegen::launch_geometry(spec);
  } catch (const std::invalid_argument &e) {
    throw Error(ErrorCode::bad_spec, e.what(), "verify", "");
  }
  {
    const HostBuffers h = host_buffers(spec, geo);
    const double need = host_bytes_needed(h, info.is_emulator);
    const support::EffectiveMemoryLimit limit =
        support::effective_memory_limit(support::current_memory_limits());
    const double have = limit.bytes;
    if (have > 0 && need > have)
      throw Error(ErrorCode::invalid_argument,
                  "the problem needs " + support::string_printf("%.1f", gib(need)) +
                      " GiB of host memory for its buffers (" + h.in1 + " " +
                      support::string_printf("%.1f", gib(h.in1_bytes)) + " GiB, " + h.in2 + " " +
                      support::string_printf("%.1f", gib(h.in2_bytes)) + " GiB, " + h.out + " " +
                      support::string_printf("%.1f", gib(h.out_bytes)) +
                      " GiB, with the reference's and the output's copies" +
                      (info.is_emulator ? " and the emulator's device copies" : "") +
                      "); the limit is " + limit.source + ", " +
                      support::string_printf("%.1f", gib(have)) +
                      " GiB: make the problem (or its leading dimensions) smaller",
                  "verify", "");
  }
  const ProblemKey key = make_problem_key(spec, arch, tf32_off);
  report.key_hash = key.hash_hex();
  out.line("key:      " + report.key_hash);
  j["key"] = report.key_hash;

  engine::KernelRequest kernel_request;
  kernel_request.arch = arch;
  kernel_request.tf32_off = tf32_off;
  kernel_request.backend = backend;
  if (!request.config.empty()) {
    codegen::TileConfig c;
    std::string err;
    if (!codegen::parse_tile_config(request.config, c, err))
      throw Error(ErrorCode::invalid_argument, "--config '" + request.config + "': " + err,
                  "verify", "");
    kernel_request.config = c;
  }
  engine::ServedKernel served;
  try {
    served = tuner::serve_kernel(spec, key, kernel_request, db);
  } catch (const kernels_db::DbError &e) {
    throw Error(ErrorCode::database, e.what(), "verify", "");
  }
  if (!served.ok())
    throw served_kernel_error(served, "verify", ErrorCode::unsupported);
  if (served.origin == engine::KernelOrigin::database) {
    // A stored kernel that does not load never fails the run: set aside and compiled again.
    if (const std::string why = load_failure(dev, served); !why.empty()) {
      std::vector<std::string> warnings = served.warnings;
      warnings.push_back(engine::set_aside_stored_kernel(served, key, kernel_request, db, why));
      kernel_request.use_stored = false;
      kernel_request.config = served.kernel.config; // the config chosen, compiled now
      try {
        served = tuner::serve_kernel(spec, key, kernel_request, db);
      } catch (const kernels_db::DbError &e) {
        throw Error(ErrorCode::database, e.what(), "verify", "");
      }
      if (!served.ok())
        throw served_kernel_error(served, "verify", ErrorCode::unsupported);
      warnings.insert(warnings.end(), served.warnings.begin(), served.warnings.end());
      served.warnings = std::move(warnings);
    }
  }
  report.warnings = served.warnings;
  report.config = codegen::to_string(served.kernel.config);
  report.kernel = served.kernel.plan.kernel_name;
  report.cache = served.how;
  report.device = info.name;
  j["config"] = report.config;
  j["kernel"] = report.kernel;
  j["cache"] = report.cache;
  j["device"] = report.device;
  out.line("config:   " + report.config);
  out.line("cache:    " + report.cache);
  out.line("device:   " + report.device);
  if (info.is_emulator) {
    const EmuEstimate est = estimate_emulator(geo, served.kernel.plan, served.kernel.config);
    report.estimate_warp_instructions = est.warp_instructions;
    report.estimate_seconds = est.seconds;
    out.line("estimate: ~" + support::string_printf("%.3g", est.warp_instructions) +
             " warp-instructions, " + duration_text(est.seconds) + " on the emulator" +
             (spec.epilogue.act == Activation::custom ? " (without act=custom's function)" : ""));
    j["estimate"] = {{"warp_instructions", est.warp_instructions}, {"seconds", est.seconds}};
    if (est.seconds > kMaxEmuSeconds && !request.allow_long)
      throw Error(ErrorCode::invalid_argument,
                  "the emulator would take about " + duration_text(est.seconds) + " (" +
                      support::string_printf("%.3g", est.warp_instructions) +
                      " warp-instructions); the limit is " + duration_text(kMaxEmuSeconds) +
                      ": pass --allow-long to run it anyway, or make the problem smaller",
                  "verify", "");
  }
  engine::KernelCheck check;
  try {
    const ProgressScope progress(dev, request);
    check = engine::run_and_check_kernel(dev, served.kernel, spec, request.seed, served.cubin);
  } catch (const device::DeviceError &e) {
    throw Error(ErrorCode::device, std::string("the device failed: ") + e.what(), "verify", "");
  } catch (const std::invalid_argument &e) { // act=custom's function, evaluated for the reference
    throw Error(ErrorCode::bad_spec, e.what(), "verify", "");
  } catch (const std::runtime_error &e) { // NVRTC, which evaluates act=custom, cannot be loaded
    throw Error(ErrorCode::unsupported, e.what(), "verify", "");
  }
  const CompareReport &r = check.report;
  out.line("verify:   " + std::to_string(r.count) + " elements, " + std::to_string(r.mismatches) +
           " outside tolerance, max |error| " + support::string_printf("%.3g", r.max_abs_error) +
           ", worst error/tolerance " + support::string_printf("%.3g", r.max_error_over_tolerance) +
           " (" + support::string_printf("%.1f ms", check.device_ms) + " on the device, " +
           support::string_printf("%.1f ms", check.reference_ms) + " reference)");
  report.elements = r.count;
  report.mismatches = r.mismatches;
  report.max_abs_error = r.max_abs_error;
  report.worst_error_over_tolerance = r.max_error_over_tolerance;
  report.device_ms = check.device_ms;
  report.reference_ms = check.reference_ms;
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
    out.line("counters: " + std::to_string(c.warp_instructions) + " warp-instructions, " +
             std::to_string(c.mma_instructions) + " mma, " +
             std::to_string(c.shared_bank_conflicts) +
             " shared bank conflicts, global load efficiency " +
             support::string_printf("%.0f%%", 100.0 * c.global_load_efficiency()) +
             (c.undefined_mma_sp_rows ? ", " + std::to_string(c.undefined_mma_sp_rows) +
                                            " mma.sp rows with undefined metadata (poisoned)"
                                      : std::string()));
    j["counters"] = {{"warp_instructions", c.warp_instructions},
                     {"mma", c.mma_instructions},
                     {"undefined_mma_sp_rows", c.undefined_mma_sp_rows},
                     {"shared_bank_conflicts", c.shared_bank_conflicts},
                     {"global_load_efficiency", c.global_load_efficiency()}};
  }
  // On a GPU a verified kernel is also timed (CUDA events, as `tcjit tune` measures): the time
  // is reported, and an ok result is stored with it.
  std::optional<tuner::Measurement> timed;
  if (!info.is_emulator && r.ok()) {
    try {
      timed = tuner::time_kernel(dev, spec, served.kernel, served.cubin);
    } catch (const device::DeviceError &e) {
      throw Error(ErrorCode::device,
                  std::string("the device failed timing the kernel: ") + e.what(), "verify", "");
    }
    const kernels_db::Timing &t = *timed->timing;
    report.median_us = t.median_us;
    report.tflops = timed->tflops;
    out.line("time:     median " + support::string_printf("%.2f", t.median_us) + " us (min " +
             support::string_printf("%.2f", t.min_us) + ", max " +
             support::string_printf("%.2f", t.max_us) + "; " + timed->message + ")" +
             (timed->tflops ? support::string_printf(", %.1f TFLOP/s", *timed->tflops) : ""));
    j["timing"] = {{"median_us", t.median_us},
                   {"min_us", t.min_us},
                   {"max_us", t.max_us},
                   {"stddev_us", t.stddev_us},
                   {"tflops", timed->tflops ? nlohmann::json(*timed->tflops) : nlohmann::json()},
                   {"how", timed->message}};
  }
  const bool record = db && !db->read_only();
  if (record) {
    try {
      db->put_result(verified_result(key, served.kernel.config, arch, info, check, timed));
    } catch (const kernels_db::DbError &e) {
      throw Error(ErrorCode::database, e.what(), "verify", "");
    }
  } else if (db) {
    out.line("database: " + db->path() +
             " is read-only (a shared cache): its decisions were "
             "used, its kernels rebuilt in memory; nothing was recorded");
    j["database"] = "read-only";
  }
  report.recorded = record;
  j["recorded"] = report.recorded;
  report.ok = r.ok();
  if (!report.ok) {
    report.failure = r.summary();
    out.line("result:   FAILED: " + report.failure);
    j["result"] = "failed";
    j["failure"] = report.failure;
  } else {
    out.line(std::string("result:   ok") +
             (info.is_emulator ? ", verified on the emulator" : ", verified") +
             (record ? " and recorded" : ""));
    j["result"] = "ok";
  }
  report.text = out.text();
  report.json = kernels_db::dump_json(j, -1);
  return report;
}

} // namespace tcjit::api
