// The GPU a run measured on, as the JSON of `tcjit_gpu_bench info --json` and the race's
// "device": what the driver reports (cuda::CudaDeviceProperties) and the arch table's peaks
// (compiler/target/arch.h) that percent-of-peak figures are of.
#pragma once

#include "runtime/cuda/cuda_device.h"

#include <nlohmann/json.hpp>

namespace tcjit::bench {

nlohmann::json device_json(const cuda::CudaDevice &dev);

} // namespace tcjit::bench
