#include "tuner/cta_probe.h"

#include "compiler/reference/bind_dims.h"
#include "compiler/spec/validate.h"
#include "engine/verify_kernel.h"
#include "runtime/emu/counters.h"
#include "tuner/search_space.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace tcjit::tuner {

namespace {

// The spec of one CTA's worth of the problem with K = `k`: sizes the CTA tile covers (no more
// than the problem has), one batch.
OpSpec one_cta_spec(const OpSpec &spec, const codegen::TileConfig &c, int64_t k) {
  const NominalSizes s = nominal_sizes(spec);
  OpSpec one = spec;
  one.gemm.m = Dim::fixed_size(std::min<int64_t>(s.m, c.bm));
  one.gemm.n = Dim::fixed_size(std::min<int64_t>(s.n, c.bn));
  one.gemm.k = Dim::fixed_size(k);
  one.gemm.batch = Dim::fixed_size(1);
  return one;
}

} // namespace

namespace {

// Why a probe run cannot be used ("" when it can): a result outside the tolerance at `where`, or
// no emulator counters.
std::string check_problem(const engine::KernelCheck &check, const std::string &where) {
  if (!check.report.ok())
    return "wrong result at " + where + ": " + std::to_string(check.report.mismatches) + " of " +
           std::to_string(check.report.count) + " elements out of tolerance; worst " +
           check.report.summary();
  if (!check.counters)
    return "the device is not the emulator: no counters";
  return "";
}

// A convolution's probe: the whole layer at batch n = 1, checked against reference_conv. Its
// counters per mma are whole-kernel averages (prologue and epilogue included): a convolution's K
// (taps x channels) is fixed, so there is no second K length to take a difference with.
CtaProbe probe_conv(device::Device &emulator, const OpSpec &spec, const BuiltCandidate &candidate,
                    uint64_t seed, std::chrono::steady_clock::time_point start) {
  CtaProbe probe;
  OpSpec one = spec;
  one.conv.n = Dim::fixed_size(1);
  try {
    const engine::KernelCheck check =
        engine::run_and_check_kernel(emulator, candidate.kernel, one, seed, candidate.cubin.cubin);
    probe.error = check_problem(check, "n=1");
    if (!probe.error.empty())
      return probe;
    const emu::LaunchCounters &k = *check.counters;
    probe.verified = true;
    const double mma = double(k.mma_instructions);
    if (mma > 0) {
      probe.instructions_per_mma = double(k.warp_instructions) / mma;
      probe.shared_wavefronts_per_mma = double(k.shared_wavefronts) / mma;
      probe.bank_conflicts_per_mma = double(k.shared_bank_conflicts) / mma;
      probe.global_load_efficiency = std::min(1.0, k.global_load_efficiency());
    }
  } catch (const std::exception &e) {
    probe.error = std::string("the emulator failed: ") + e.what();
  }
  probe.emulator_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return probe;
}

} // namespace

CtaProbe probe_one_cta(device::Device &emulator, const OpSpec &spec,
                       const BuiltCandidate &candidate, uint64_t seed) {
  const auto start = std::chrono::steady_clock::now();
  if (spec.kind != OpKind::gemm)
    return probe_conv(emulator, spec, candidate, seed, start);
  CtaProbe probe;
  const codegen::TileConfig &c = candidate.config;
  // K lengths whose difference is 4 K-tiles per split-K slice, both past the pipeline's fill.
  const int64_t slice = int64_t{c.bk} * c.split_k;
  const int64_t k1 = slice * (c.stages + 1), k2 = k1 + 4 * slice;
  emu::LaunchCounters counters[2];
  int64_t ks[2] = {k1, k2};
  for (int i = 0; i < 2; ++i) {
    const OpSpec one = one_cta_spec(spec, c, ks[i]);
    if (const auto errors = validate_spec(one); !errors.empty()) {
      probe.error = "the probe's spec is not valid: " + errors.front().message;
      return probe;
    }
    try {
      const engine::KernelCheck check = engine::run_and_check_kernel(
          emulator, candidate.kernel, one, seed + i, candidate.cubin.cubin);
      probe.error = check_problem(check, "m=" + std::to_string(one.gemm.m.value) +
                                             " n=" + std::to_string(one.gemm.n.value) +
                                             " k=" + std::to_string(ks[i]));
      if (!probe.error.empty())
        return probe;
      counters[i] = *check.counters;
    } catch (const std::exception &e) {
      probe.error = std::string("the emulator failed: ") + e.what();
      return probe;
    }
  }
  probe.verified = true;
  const double mma = double(counters[1].mma_instructions) - double(counters[0].mma_instructions);
  if (mma > 0) {
    probe.instructions_per_mma =
        (double(counters[1].warp_instructions) - double(counters[0].warp_instructions)) / mma;
    probe.shared_wavefronts_per_mma =
        (double(counters[1].shared_wavefronts) - double(counters[0].shared_wavefronts)) / mma;
    probe.bank_conflicts_per_mma = std::max(0.0, (double(counters[1].shared_bank_conflicts) -
                                                  double(counters[0].shared_bank_conflicts)) /
                                                     mma);
    probe.mma_per_ktile = uint64_t(mma / 4 / c.split_k);
    const double sectors =
        double(counters[1].global_load_sectors) - double(counters[0].global_load_sectors);
    const double useful =
        double(counters[1].global_bytes_read) - double(counters[0].global_bytes_read);
    if (sectors > 0 && useful > 0)
      probe.global_load_efficiency = std::min(1.0, useful / (sectors * 32));
  }
  probe.emulator_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  return probe;
}

} // namespace tcjit::tuner
