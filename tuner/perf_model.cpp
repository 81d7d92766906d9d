#include "tuner/perf_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>

namespace tcjit::tuner {

namespace {

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// One SM's cycles per K-tile with `resident` CTAs of `k` running on it together, while
// `active_sms` SMs share the L2.
struct StepCycles {
  double tensor = 0, issue = 0, l2 = 0, shared = 0;
  double max() const { return std::max({tensor, issue, l2, shared}); }
  // The binding term plus the part of the others that the pipeline does not hide.
  double cost(double overlap_loss) const {
    return max() + overlap_loss * (tensor + issue + l2 + shared - max());
  }
};

StepCycles step_cycles(const GpuModel &gpu, const KernelFeatures &k, int resident,
                       int64_t active_sms) {
  const double math_per_ktile = double(k.bm) * k.bn * k.bk / (double(k.mma_m) * k.mma_n * k.mma_k);
  const double flops_per_ktile = 2.0 * k.bm * k.bn * k.bk;
  // 2:4-sparse A: half the values, 4 bits of metadata per 4 (s4/u4: per 4 pairs of values)
  const double metadata = k.a_bytes < 1 ? 1.0 / 16 : 1.0 / 8;
  const double a_bytes = k.sparse ? k.a_bytes / 2.0 + metadata : double(k.a_bytes);
  const double bytes_per_ktile = double(k.bm) * k.bk * a_bytes + double(k.bn) * k.bk * k.b_bytes;
  const double speedup = k.sparse ? sparse_speedup : 1.0;
  StepCycles s;
  // Fewer than 4 resident warps leave sub-partitions (each with its own tensor core and issue
  // slot) idle.
  const double warps = double(resident) * std::max(1, k.threads / 32);
  const double fed = std::min(1.0, warps / 4);
  s.tensor =
      resident * flops_per_ktile /
      (gpu.flops_per_sm_clk[static_cast<int>(k.math)] * speedup * gpu.efficiency(k.math) * fed);
  s.issue = resident * math_per_ktile * k.instructions_per_mma / (gpu.issue_per_sm_clk * fed);
  const double l2_share =
      gpu.l2_efficiency * std::min(gpu.l2_bytes_per_sm_clk,
                                   gpu.l2_bytes_per_clk / double(std::max<int64_t>(active_sms, 1)));
  // Uncoalesced loads move whole 32-byte sectors for fewer useful bytes.
  const double efficiency = std::clamp(k.global_load_efficiency, 0.01, 1.0);
  s.l2 = resident * bytes_per_ktile / efficiency / l2_share;
  s.shared =
      resident * math_per_ktile * k.shared_wavefronts_per_mma / gpu.shared_wavefronts_per_sm_clk;
  return s;
}

} // namespace

std::optional<MathKind> parse_math_kind(std::string_view s) {
  return parse_math_unit(s);
}

GpuModel gpu_model_of(const ArchInfo &a) {
  GpuModel g;
  g.name = std::string(a.gpu);
  g.arch = std::string(a.name);
  g.sms = a.sms;
  g.clock_ghz = a.clock_ghz;
  g.max_threads_per_sm = a.max_threads_per_sm;
  g.max_ctas_per_sm = a.max_ctas_per_sm;
  g.registers_per_sm = a.registers_per_sm;
  g.shared_bytes_per_sm = a.shared_bytes_per_sm;
  g.shared_reserved_per_cta = a.shared_reserved_per_cta;
  g.dram_bytes_per_s = a.dram_bytes_per_s;
  g.l2_bytes_per_clk = a.l2_bytes_per_clk;
  std::copy(a.ops_per_sm_clk.begin(), a.ops_per_sm_clk.end(), g.flops_per_sm_clk);
  // The model's parameters, the same for every arch (docs/perf_model.md).
  g.l2_bytes_per_sm_clk = 64;
  g.prologue_cycles = 1500;
  return g;
}

double GpuModel::peak_flops(MathKind k) const {
  return sms * clock_ghz * 1e9 * flops_per_sm_clk[static_cast<int>(k)];
}

double GpuModel::efficiency(MathKind k) const {
  const double e = mma_efficiency_of[static_cast<int>(k)];
  return e > 0 ? e : mma_efficiency;
}

namespace {

GpuModel model_of_arch(std::string_view name) {
  const std::optional<ArchInfo> a = find_arch(name);
  if (!a)
    throw std::logic_error("perf_model: " + std::string(name) + " is not in the arch table");
  return gpu_model_of(*a);
}

} // namespace

const GpuModel &a100_model() {
  static const GpuModel g = model_of_arch("sm_80");
  return g;
}

const GpuModel &h100_model() {
  static const GpuModel g = model_of_arch("sm_90");
  return g;
}

const GpuModel &a6000_model() {
  static const GpuModel g = model_of_arch("sm_86");
  return g;
}

const GpuModel &l40s_model() {
  static const GpuModel g = model_of_arch("sm_89");
  return g;
}

int ctas_per_sm(const GpuModel &gpu, const KernelFeatures &k, std::string *why) {
  auto fail = [&](std::string reason) {
    if (why)
      *why = std::move(reason);
    return 0;
  };
  if (k.threads <= 0 || k.threads % 32 != 0 || k.threads > 1024)
    return fail(std::to_string(k.threads) + " threads per CTA (must be 32..1024, whole warps)");
  if (k.registers > 255)
    return fail(std::to_string(k.registers) + " registers per thread (at most 255)");
  int fit = std::min(gpu.max_ctas_per_sm, gpu.max_threads_per_sm / k.threads);
  if (k.registers > 0) {
    // Registers are allocated per warp in units of 256.
    const int per_warp = int(ceil_div(int64_t{k.registers} * 32, 256) * 256);
    fit = std::min(fit, gpu.registers_per_sm / (per_warp * (k.threads / 32)));
  }
  const int shared = k.shared_bytes + gpu.shared_reserved_per_cta;
  fit = std::min(fit, gpu.shared_bytes_per_sm / shared);
  if (fit <= 0) {
    if (k.shared_bytes + gpu.shared_reserved_per_cta > gpu.shared_bytes_per_sm)
      return fail(std::to_string(k.shared_bytes) + " B shared memory per CTA (the SM has " +
                  std::to_string(gpu.shared_bytes_per_sm - gpu.shared_reserved_per_cta) + ")");
    return fail(std::to_string(k.registers) + " registers x " + std::to_string(k.threads) +
                " threads exceed the SM's " + std::to_string(gpu.registers_per_sm) + " registers");
  }
  return fit;
}

Prediction predict(const GpuModel &gpu, const KernelFeatures &k, const Problem &p) {
  Prediction out;
  out.ctas_per_sm = ctas_per_sm(gpu, k, &out.why_not);
  if (out.ctas_per_sm == 0 || p.m <= 0 || p.n <= 0 || p.k <= 0 || p.batch <= 0) {
    if (out.why_not.empty())
      out.why_not = "empty problem";
    return out;
  }
  out.launchable = true;
  const int split = std::max(1, k.split_k);
  out.ctas = ceil_div(p.m, k.bm) * ceil_div(p.n, k.bn) * p.batch * split;
  const int64_t slots = int64_t{gpu.sms} * out.ctas_per_sm;
  out.waves = ceil_div(out.ctas, slots);
  const int64_t ktiles = ceil_div(ceil_div(p.k, k.bk), split);

  // Full waves run ctas_per_sm CTAs on every SM; the last one as many as it has left.
  const StepCycles full = step_cycles(gpu, k, out.ctas_per_sm, gpu.sms);
  const int64_t last = out.ctas - (out.waves - 1) * slots;
  const StepCycles tail =
      step_cycles(gpu, k, int(ceil_div(last, gpu.sms)), std::min<int64_t>(last, gpu.sms));
  const double cycles =
      double(out.waves - 1) * (ktiles * full.cost(gpu.overlap_loss) + gpu.prologue_cycles) +
      ktiles * tail.cost(gpu.overlap_loss) + gpu.prologue_cycles;
  const StepCycles &main = out.waves > 1 ? full : tail;
  out.tensor_cycles = main.tensor;
  out.issue_cycles = main.issue;
  out.l2_cycles = main.l2;
  out.shared_cycles = main.shared;
  const double compute_s = cycles / (gpu.clock_ghz * 1e9);

  const double a_elements = p.a_elements > 0 ? p.a_elements : double(p.m) * p.k;
  const double b_elements = p.b_elements > 0 ? p.b_elements : double(p.k) * p.n;
  const double bytes = double(p.batch) * (a_elements * k.a_bytes + b_elements * k.b_bytes +
                                          double(p.m) * p.n * k.c_bytes * (p.reads_c ? 2 : 1));
  // DRAM bandwidth needs bytes in flight (Little's law): each resident CTA keeps stages - 1
  // K-tiles of A and B loading; few CTAs on few SMs cannot saturate DRAM.
  const int64_t active_sms = std::min<int64_t>(gpu.sms, out.ctas);
  const double resident = std::min<double>(
      out.ctas_per_sm, double(out.ctas) / double(std::max<int64_t>(active_sms, 1)));
  const double in_flight = double(active_sms) * resident * std::max(1, k.stages - 1) *
                           (double(k.bm) * k.a_bytes + double(k.bn) * k.b_bytes) * k.bk;
  const double dram_rate =
      gpu.dram_latency_seconds > 0
          ? std::min(gpu.dram_bytes_per_s, in_flight / gpu.dram_latency_seconds)
          : gpu.dram_bytes_per_s;
  out.dram_seconds = bytes / dram_rate;
  // Split-K: every slice writes its f32 (f64) partial tile, and a second kernel reads them all and
  // writes D: DRAM traffic of its own, after the main kernel, plus that launch.
  if (split > 1) {
    const double partial_bytes = double(p.batch) * p.m * p.n * split * (k.c_bytes > 4 ? 8 : 4);
    out.splitk_seconds = gpu.launch_seconds + 2 * partial_bytes / gpu.dram_bytes_per_s;
  }

  out.seconds = std::max(compute_s, out.dram_seconds) + out.splitk_seconds;
  const double flops = 2.0 * double(p.m) * p.n * p.k * p.batch;
  out.tflops = flops / out.seconds / 1e12;
  out.fraction_of_peak =
      flops / out.seconds / (gpu.peak_flops(k.math) * (k.sparse ? sparse_speedup : 1.0));
  if (out.dram_seconds >= compute_s) {
    out.bound = "dram";
  } else if (double(ktiles) * main.max() < gpu.prologue_cycles) {
    out.bound = "latency"; // the fixed per-wave cost outweighs the main loop
  } else if (main.max() == main.tensor) {
    out.bound = "tensor";
  } else if (main.max() == main.issue) {
    out.bound = "issue";
  } else if (main.max() == main.shared) {
    out.bound = "shared";
  } else {
    out.bound = "l2";
  }
  return out;
}

} // namespace tcjit::tuner
