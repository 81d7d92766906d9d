// An analytical performance model of one tensor-core (or SIMT) GEMM kernel on one GPU: predicted
// time and TFLOP/s from the kernel's static features (tile, threads, registers, shared memory, the
// instructions its main loop issues per mma) and the problem's sizes. Every figure it returns is a
// prediction, never a measurement: the benchmark labels it so, and the tuner uses it to rank and
// prune candidates where no GPU can measure them.
//
// Layer 4 (tuner/): pure arithmetic; it knows nothing of how a kernel was generated, so it judges
// tcjit's kernels and the anchors' (CUTLASS, Triton) by the same features. The assumptions are
// listed in docs/perf_model.md.
#pragma once

#include "compiler/target/arch.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tcjit::tuner {

// The math a kernel's inner instruction does; selects the tensor-core rate. The arch table's
// MathUnit (compiler/target/arch.h; to_string(MathKind) is its to_string).
using MathKind = MathUnit;
std::optional<MathKind> parse_math_kind(std::string_view);

// One GPU as the model sees it. Rates are for the mma.sync path tcjit generates. The hardware
// figures (SMs, clock, limits per SM, bandwidths, rates) are the arch table's (gpu_model_of);
// the rest are the model's own parameters.
struct GpuModel {
  std::string name;                // "A100-SXM4-80GB"
  std::string arch;                // "sm_80"
  int sms = 0;                     // streaming multiprocessors
  double clock_ghz = 0;            // sustained clock under tensor load
  int max_threads_per_sm = 2048;   //
  int max_ctas_per_sm = 32;        //
  int registers_per_sm = 65536;    // 32-bit registers
  int shared_bytes_per_sm = 0;     // usable by CTAs (opt-in carve-out)
  int shared_reserved_per_cta = 0; // the driver's per-CTA reservation (1 KiB on sm_80+)
  double dram_bytes_per_s = 0;
  double l2_bytes_per_clk = 0;    // L2 -> SM read bandwidth, all SMs together
  double l2_bytes_per_sm_clk = 0; // what one SM can take of it
  // The sustained fraction of those L2 rates (docs/perf_model.md: microbenchmarks sustain about
  // three quarters of the datasheet's L2 bandwidth), as mma_efficiency is of the math rate.
  double l2_efficiency = 0.75;
  double issue_per_sm_clk = 4; // warp-instructions issued per SM per clock (4 sub-partitions)
  double shared_wavefronts_per_sm_clk = 1; // shared-memory passes (32 banks x 4 B) per SM per clock
  double launch_seconds = 2e-6;            // a dependent kernel launch (split-K's reduction)
  double mma_efficiency = 0.95; // sustained fraction of the math rate (cuBLAS-class kernels)
  // The sustained fraction per math unit (index: MathKind) where a calibration measured it
  // (tuner/calibration.h); 0: mma_efficiency.
  double mma_efficiency_of[math_unit_count] = {};
  double overlap_loss = 0.05;           // fraction of the non-binding per-K-tile terms not hidden
  double dram_latency_seconds = 700e-9; // loaded DRAM latency: bytes in flight / this = bandwidth
  double prologue_cycles = 0;           // fixed per-wave cost: pipeline fill, epilogue drain
  // Dense math rate per SM per clock, in FLOP (integer: OP) for each MathKind (index: MathKind).
  double flops_per_sm_clk[math_unit_count] = {};

  double peak_flops(MathKind k) const; // sms * clock * rate
  double efficiency(MathKind k) const; // mma_efficiency_of[k], else mma_efficiency
  // Set by a calibration (tuner/calibration.h): "calibrated on <GPU> (<n> results, <date>)";
  // empty for the model's uncalibrated constants.
  std::string calibration;
};

// The model of an arch's GPU: its figures from the arch table, the model's parameters.
GpuModel gpu_model_of(const ArchInfo &);

// The GPUs of the archs tcjit targets (figures and sources in docs/perf_model.md); the benchmark
// reports the first two.
const GpuModel &a100_model();  // sm_80
const GpuModel &h100_model();  // sm_90
const GpuModel &a6000_model(); // sm_86 (RTX A6000)
const GpuModel &l40s_model();  // sm_89

// What the model needs to know of a kernel.
struct KernelFeatures {
  MathKind math = MathKind::f16;
  int bm = 128, bn = 128, bk = 32;       // CTA tile
  int mma_m = 16, mma_n = 8, mma_k = 16; // one math instruction's shape (SIMT: 1x1x1 per thread)
  int threads = 128;                     // per CTA
  int registers = 0;                     // per thread (the cubin's)
  int shared_bytes = 0;                  // per CTA, static + dynamic
  double instructions_per_mma = 0;       // main-loop warp-instructions per mma (SASS)
  double shared_wavefronts_per_mma = 0;  // main-loop shared-memory wavefronts per mma; 0: unknown
  double global_load_efficiency = 1;     // useful bytes / 32-byte sectors moved, main loop (0..1]
  int split_k = 1;
  int stages = 3; // K-tiles the pipeline keeps in flight (stages - 1 loads ahead)
  double a_bytes = 2, b_bytes = 2, c_bytes = 2; // element sizes (s4 0.5, b1 0.125)
  // mma.sp (2:4-sparse A): the math runs at sparse_speedup x the unit's peak; A moves its k/2
  // kept values and 4 bits of metadata per 4 values.
  bool sparse = false;
};

struct Problem {
  int64_t m = 0, n = 0, k = 0, batch = 1;
  bool reads_c = false; // beta != 0
  // Distinct elements of A and B per batch when fewer than m*k and k*n: a convolution's gathered
  // operand (im2col reads each x element up to taps times; the repeats come from L2). 0: m*k, k*n.
  double a_elements = 0, b_elements = 0;
};

struct Prediction {
  bool launchable = false;
  std::string why_not; // when !launchable: which resource does not fit
  int ctas_per_sm = 0; // occupancy
  int64_t ctas = 0;    // tiles * split_k
  int64_t waves = 0;   // ceil(ctas / (sms * ctas_per_sm))
  double seconds = 0;  // predicted kernel time
  double tflops = 0;   // 2*M*N*K*batch / seconds / 1e12 (TOP/s for s8)
  double fraction_of_peak = 0;
  std::string bound; // "tensor", "issue", "l2", "dram" or "latency": the largest term
  // The per-K-tile cycle terms of one SM (all its resident CTAs together) and the DRAM time.
  double tensor_cycles = 0, issue_cycles = 0, l2_cycles = 0, shared_cycles = 0;
  double dram_seconds = 0;
  double splitk_seconds = 0; // split-K's partial sums: written, reduced, and the second launch
};

// The prediction for `kernel` running `problem` on `gpu`.
Prediction predict(const GpuModel &gpu, const KernelFeatures &kernel, const Problem &problem);

// CTAs of `kernel` that fit on one SM at once (0: does not fit; `why` says which limit).
int ctas_per_sm(const GpuModel &gpu, const KernelFeatures &kernel, std::string *why = nullptr);

} // namespace tcjit::tuner
