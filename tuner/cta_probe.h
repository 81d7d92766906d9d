// The emulator's view of one candidate: its kernel run on one CTA's worth of the problem (the
// CTA tile, one batch, all split-K slices) at two K lengths, each checked against the CPU
// reference, and the difference of the two runs' counters: what one more K-tile of the main loop
// costs (warp-instructions, mma, shared-memory wavefronts and bank conflicts), free of the
// prologue and the epilogue (a convolution: the whole layer at n = 1, see probe_conv). A fast
// wrong kernel is the worst result: a candidate whose output
// fails the check is never chosen.
#pragma once

#include "runtime/device/device.h"
#include "tuner/candidate.h"

#include <string>

namespace tcjit::tuner {

struct CtaProbe {
  bool verified = false; // both runs matched the reference within tolerance
  std::string error;     // why not: the mismatch, or the device's error
  double instructions_per_mma = 0;
  double shared_wavefronts_per_mma = 0;
  double bank_conflicts_per_mma = 0;
  double global_load_efficiency = 1; // useful bytes / 32-byte sectors of the loads (cp.async)
  uint64_t mma_per_ktile = 0;        // per CTA
  double emulator_ms = 0;            // both runs, with the reference
};

// `spec`: the problem (sizes may be symbolic: nominal ones are used); `candidate` must be usable.
// `emulator` is an emulator device (counters come from it). Throws nothing: device failures are
// reported in `error`.
CtaProbe probe_one_cta(device::Device &emulator, const OpSpec &spec,
                       const BuiltCandidate &candidate, uint64_t seed = 1);

} // namespace tcjit::tuner
