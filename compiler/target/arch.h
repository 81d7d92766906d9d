// The GPU architectures tcjit targets and their hardware figures: one row per arch, the one home
// of these facts (the tuner's performance model, explain's roofline and rules, the code
// generator's limits and the CLI's lists read it). Sources: ../shared/docs/ptx-fragments.md
// ("Targets"), the vendors' datasheets, and the CUDA C++ Programming Guide's "Compute
// Capabilities" table; docs/perf_model.md lists them per figure.
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace tcjit {

// The math unit a kernel's inner instruction runs on: which of an arch's peaks applies. s8 is
// the 8-bit integer tensor core rate (s8 and u8 alike), s4 the 4-bit one (s4, u4), b1 the
// single-bit one (and/xor + popc), fp8 e4m3/e5m2; f32_simt the CUDA cores' FFMA. The peaks are
// dense: a 2:4-sparse mma (mma.sp) does twice the MMA work per clock (sparse_speedup).
enum class MathUnit { f16, bf16, tf32, s8, f64, f32_simt, s4, b1, fp8 };
inline constexpr size_t math_unit_count = 9;
inline constexpr double sparse_speedup = 2.0;
std::string_view to_string(MathUnit); // "f16", "bf16", "tf32", "s8", "f64", "f32_simt", ...
std::optional<MathUnit> parse_math_unit(std::string_view);

struct ArchInfo {
  std::string_view name;    // "sm_80"
  int sm_version;           // 80
  int ptx_version;          // the PTX ISA version tcjit's kernels declare for it (x10): 70 = 7.0
  std::string_view example; // parts of the arch, for messages: "A100"
  // The GPU whose figures follow (the one the performance model and explain's roofline take).
  std::string_view gpu;        // "A100-SXM4-80GB"
  int sms;                     // streaming multiprocessors
  double clock_ghz;            // sustained clock under tensor load
  int max_threads_per_sm;      //
  int max_ctas_per_sm;         //
  int registers_per_sm;        // 32-bit registers
  int shared_bytes_per_sm;     // the largest shared-memory carve-out
  int max_smem_per_block;      // bytes, with the dynamic-shared-memory opt-in
  int shared_reserved_per_cta; // the driver's per-CTA reservation
  double dram_bytes_per_s;     // datasheet DRAM bandwidth
  double l2_bytes_per_clk;     // L2 -> SM read bandwidth, all SMs together
  // Dense math rate of one SM per clock (FLOP; integer: OP) of the mma.sync path (not wgmma),
  // indexed by MathUnit; 0 where the arch has no such tensor-core math.
  std::array<double, math_unit_count> ops_per_sm_clk;
  bool full_rate_f64_mma; // DMMA at full rate (A100, H100)
  bool fp8_mma;           // mma.sync with e4m3/e5m2
};

// sms * clock * ops_per_sm_clk: FLOP/s (OP/s for s8).
double peak_ops(const ArchInfo &, MathUnit);

std::span<const ArchInfo> known_archs();
// The arch called `name` ("sm_80", ...), or nullopt when tcjit does not target it.
std::optional<ArchInfo> find_arch(std::string_view name);
// "sm_80, sm_86, sm_89, sm_90": for help texts and error messages.
std::string known_arch_list();

} // namespace tcjit
