#include "compiler/target/arch.h"

namespace tcjit {

namespace {

constexpr std::array<std::string_view, math_unit_count> kMathUnitNames = {
    "f16", "bf16", "tf32", "s8", "f64", "f32_simt", "s4", "b1", "fp8"};

// Per-SM rates per clock, by MathUnit {f16, bf16, tf32, s8, f64, f32_simt, s4, b1, fp8}, are the
// datasheet's dense peaks divided by sms * clock. sm_90 runs mma.sync at sm_80's per-SM rate for
// f16/bf16/tf32/s8 (Hopper's full rate needs wgmma, which tcjit does not emit).
// s4 and b1: the A100 datasheet gives 1248 TOPS INT4 and 4992 TOPS binary; GA102's whitepaper
// gives INT4 at twice INT8; no datasheet gives a binary figure for GA102/AD102, which take
// A100's binary:INT4 ratio (4) here. AD102 (L40S) lists INT4 at INT8's rate. Hopper lists no
// INT4 or binary tensor-core figure (its mma.sync s4/b1 are not native): s8's rate for s4 and
// b1 is the model's ceiling there. fp8: sm_89 and sm_90 only; L40S 733 TFLOPS dense; sm_90's
// mma.sync fp8 is taken at twice its f16 mma.sync rate, like L40S.
// clang-format off
constexpr std::array<ArchInfo, 4> kArchs = {{
    // A100: 312 TFLOPS f16/bf16, 156 tf32, 624 TOPS s8, 1248 s4, 4992 b1, 19.5 f64 (DMMA),
    // 19.5 f32 at 1.41 GHz.
    {"sm_80", 80, 70, "A100", "A100-SXM4-80GB", 108, 1.41, 2048, 32, 65536, 164 * 1024,
     163 * 1024, 1024, 2.039e12, 5120, {2048, 2048, 1024, 4096, 128, 128, 8192, 32768, 0}, true, false},
    // RTX A6000 (GA102): 154.8 TFLOPS f16 with f32 accumulate, 77.4 tf32, 309.7 TOPS s8, 619.4
    // s4 at 1.80 GHz; f64 at 1/64 of f32.
    {"sm_86", 86, 71, "A10 / RTX 3090", "RTX-A6000", 84, 1.80, 1536, 16, 65536, 100 * 1024,
     99 * 1024, 1024, 768e9, 2688, {1024, 1024, 512, 2048, 4, 256, 4096, 16384, 0}, false, false},
    // L40S (AD102): 362 TFLOPS f16 with f32 accumulate, 183 tf32, 733 TOPS s8 and s4, 733
    // TFLOPS fp8 at 2.52 GHz; f64 at 1/64 of f32.
    {"sm_89", 89, 78, "L4 / RTX 4090", "L40S", 142, 2.52, 1536, 24, 65536, 100 * 1024,
     99 * 1024, 1024, 864e9, 4544, {1024, 1024, 512, 2048, 4, 256, 2048, 8192, 2048}, false, true},
    // H100 SXM5: mma.sync at A100's per-SM rate; f64 DMMA and f32 FFMA 67 TFLOPS at 1.83 GHz.
    {"sm_90", 90, 78, "H100", "H100-SXM5-80GB", 132, 1.83, 2048, 32, 65536, 228 * 1024,
     227 * 1024, 1024, 3.35e12, 5120, {2048, 2048, 1024, 4096, 256, 256, 4096, 4096, 4096}, true, true},
}};
// clang-format on

} // namespace

std::string_view to_string(MathUnit u) {
  return kMathUnitNames[static_cast<size_t>(u)];
}

std::optional<MathUnit> parse_math_unit(std::string_view s) {
  for (size_t i = 0; i < kMathUnitNames.size(); ++i)
    if (kMathUnitNames[i] == s)
      return static_cast<MathUnit>(i);
  return std::nullopt;
}

double peak_ops(const ArchInfo &a, MathUnit u) {
  return a.sms * a.clock_ghz * 1e9 * a.ops_per_sm_clk[static_cast<size_t>(u)];
}

std::span<const ArchInfo> known_archs() {
  return kArchs;
}

std::optional<ArchInfo> find_arch(std::string_view name) {
  for (const ArchInfo &a : kArchs)
    if (a.name == name)
      return a;
  return std::nullopt;
}

std::string known_arch_list() {
  std::string out;
  for (const ArchInfo &a : kArchs)
    out += (out.empty() ? "" : ", ") + std::string(a.name);
  return out;
}

} // namespace tcjit
