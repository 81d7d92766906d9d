// The model measurer: a candidate's time predicted by the cost model (cost_model.h) from its
// ptxas resources and, when an emulator is given, the counters of one CTA (cta_probe.h), which
// also verify its output. Results are stored as `predicted`, never as measured.
#pragma once

#include "runtime/device/device.h"
#include "tuner/measure.h"
#include "tuner/perf_model.h"

#include <memory>

namespace tcjit::tuner {

// `emulator`: an emulator device to probe and verify each candidate on (may be null: ptxas
// resources and estimates only). It must outlive the measurer.
std::unique_ptr<Measurer> make_model_measurer(const GpuModel &gpu, device::Device *emulator);

} // namespace tcjit::tuner
