#include "tuner/perf_model.h"

#include <algorithm>
#include <array>
#include <cmath>

namespace tcjit::tuner {

namespace {

constexpr std::array<std::string_view, 6> kMathNames = {"f16", "bf16", "tf32",
                                                        "s8",  "f64",  "f32_simt"};

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

GpuModel make_a100() {
  GpuModel g;
  g.name = "A100-SXM4-80GB";
  g.sms = 108;
  g.clock_ghz = 1.41;
  g.shared_bytes_per_sm = 164 * 1024;
  g.shared_reserved_per_cta = 1024;
  g.dram_bytes_per_s = 2.039e12;
  g.l2_bytes_per_clk = 5120;
  g.l2_bytes_per_sm_clk = 64;
  g.prologue_cycles = 1500;
  // 312 TFLOPS f16/bf16, 156 tf32, 624 TOPS s8, 19.5 f64 (DMMA), 19.5 f32 FFMA at 1.41 GHz.
  const double rates[6] = {2048, 2048, 1024, 4096, 128, 128};
  std::copy(std::begin(rates), std::end(rates), g.flops_per_sm_clk);
  return g;
}

GpuModel make_h100() {
  GpuModel g;
  g.name = "H100-SXM5-80GB";
  g.sms = 132;
  g.clock_ghz = 1.83;
  g.shared_bytes_per_sm = 228 * 1024;
  g.shared_reserved_per_cta = 1024;
  g.dram_bytes_per_s = 3.35e12;
  g.l2_bytes_per_clk = 5120;
  g.l2_bytes_per_sm_clk = 64;
  g.prologue_cycles = 1500;
  // mma.sync (not wgmma) at A100's per-SM rate per clock for f16/bf16/tf32/s8: the full Hopper
  // rate needs wgmma. f64 DMMA 67 TFLOPS and f32 FFMA 67 TFLOPS at 1.83 GHz.
  const double rates[6] = {2048, 2048, 1024, 4096, 256, 256};
  std::copy(std::begin(rates), std::end(rates), g.flops_per_sm_clk);
  return g;
}

// RTX A6000 (GA102): the datasheet's 154.8 TFLOPS f16 with f32 accumulate, 77.4 tf32, 309.7 TOPS
// s8 (dense) at 1.80 GHz; f64 at 1/64 of f32; 100 KiB shared memory and 1,536 threads per SM.
GpuModel make_a6000() {
  GpuModel g;
  g.name = "RTX-A6000";
  g.sms = 84;
  g.clock_ghz = 1.80;
  g.max_threads_per_sm = 1536;
  g.max_ctas_per_sm = 16;
  g.shared_bytes_per_sm = 100 * 1024;
  g.shared_reserved_per_cta = 1024;
  g.dram_bytes_per_s = 768e9;
  g.l2_bytes_per_clk = 2688;
  g.l2_bytes_per_sm_clk = 64;
  g.prologue_cycles = 1500;
  const double rates[6] = {1024, 1024, 512, 2048, 4, 256};
  std::copy(std::begin(rates), std::end(rates), g.flops_per_sm_clk);
  return g;
}

// L40S (AD102): 362 TFLOPS f16 with f32 accumulate, 183 tf32, 733 TOPS s8 (dense) at 2.52 GHz;
// f64 at 1/64 of f32; 100 KiB shared memory, 1,536 threads and 24 CTAs per SM.
GpuModel make_l40s() {
  GpuModel g;
  g.name = "L40S";
  g.sms = 142;
  g.clock_ghz = 2.52;
  g.max_threads_per_sm = 1536;
  g.max_ctas_per_sm = 24;
  g.shared_bytes_per_sm = 100 * 1024;
  g.shared_reserved_per_cta = 1024;
  g.dram_bytes_per_s = 864e9;
  g.l2_bytes_per_clk = 4544;
  g.l2_bytes_per_sm_clk = 64;
  g.prologue_cycles = 1500;
  const double rates[6] = {1024, 1024, 512, 2048, 4, 256};
  std::copy(std::begin(rates), std::end(rates), g.flops_per_sm_clk);
  return g;
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
  const double bytes_per_ktile = double(k.bm) * k.bk * k.a_bytes + double(k.bn) * k.bk * k.b_bytes;
  StepCycles s;
  // Fewer than 4 resident warps leave sub-partitions (each with its own tensor core and issue
  // slot) idle.
  const double warps = double(resident) * std::max(1, k.threads / 32);
  const double fed = std::min(1.0, warps / 4);
  s.tensor = resident * flops_per_ktile /
             (gpu.flops_per_sm_clk[static_cast<int>(k.math)] * gpu.mma_efficiency * fed);
  s.issue = resident * math_per_ktile * k.instructions_per_mma / (gpu.issue_per_sm_clk * fed);
  const double l2_share = std::min(gpu.l2_bytes_per_sm_clk,
                                   gpu.l2_bytes_per_clk / double(std::max<int64_t>(active_sms, 1)));
  // Uncoalesced loads move whole 32-byte sectors for fewer useful bytes.
  const double efficiency = std::clamp(k.global_load_efficiency, 0.01, 1.0);
  s.l2 = resident * bytes_per_ktile / efficiency / l2_share;
  s.shared =
      resident * math_per_ktile * k.shared_wavefronts_per_mma / gpu.shared_wavefronts_per_sm_clk;
  return s;
}

} // namespace

std::string_view to_string(MathKind k) {
  return kMathNames[static_cast<size_t>(k)];
}

std::optional<MathKind> parse_math_kind(std::string_view s) {
  for (size_t i = 0; i < kMathNames.size(); ++i)
    if (kMathNames[i] == s)
      return static_cast<MathKind>(i);
  return std::nullopt;
}

double GpuModel::peak_flops(MathKind k) const {
  return sms * clock_ghz * 1e9 * flops_per_sm_clk[static_cast<int>(k)];
}

const GpuModel &a100_model() {
  static const GpuModel g = make_a100();
  return g;
}

const GpuModel &h100_model() {
  static const GpuModel g = make_h100();
  return g;
}

const GpuModel &a6000_model() {
  static const GpuModel g = make_a6000();
  return g;
}

const GpuModel &l40s_model() {
  static const GpuModel g = make_l40s();
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
  out.fraction_of_peak = flops / out.seconds / gpu.peak_flops(k.math);
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
