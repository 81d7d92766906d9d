#include "bench/gpu_tool/device_json.h"

#include "compiler/target/arch.h"

#include <string>

namespace tcjit::bench {

nlohmann::json device_json(const cuda::CudaDevice &dev) {
  const device::DeviceInfo info = dev.info();
  const cuda::CudaDeviceProperties &p = dev.properties();
  const std::string arch =
      "sm_" + std::to_string(p.compute_capability_major * 10 + p.compute_capability_minor);
  nlohmann::json j{
      {"name", info.name},
      {"ordinal", p.ordinal},
      {"arch", arch},
      {"compute_capability", std::to_string(p.compute_capability_major) + "." +
                                 std::to_string(p.compute_capability_minor)},
      {"sms", info.sm_count},
      {"sm_clock_mhz", p.clock_khz / 1000},
      {"memory_clock_mhz", p.memory_clock_khz / 1000},
      {"memory_bus_width_bits", p.memory_bus_width_bits},
      {"l2_bytes", p.l2_cache_bytes},
      {"global_memory_bytes", info.global_memory_bytes},
      {"driver_version", p.driver_version},
      {"driver", "CUDA " + std::to_string(p.driver_version / 1000) + "." +
                     std::to_string(p.driver_version % 1000 / 10)},
  };
  const std::optional<ArchInfo> a = find_arch(arch);
  if (!a) {
    j["peaks"] = nullptr;
    j["peaks_why_not"] = "tcjit's arch table has no " + arch + " (it knows " + known_arch_list() +
                         "): no percent of peak";
    return j;
  }
  nlohmann::json tflops = nlohmann::json::object();
  for (MathUnit u : {MathUnit::f16, MathUnit::bf16, MathUnit::tf32, MathUnit::s8, MathUnit::f64,
                     MathUnit::f32_simt})
    tflops[std::string(to_string(u))] = peak_ops(*a, u) / 1e12;
  j["peaks"] = {{"gpu", std::string(a->gpu)},
                {"source", "tcjit's arch table (compiler/target/arch.h): dense mma.sync rates "
                           "at the sustained clock; s8 in TOP/s"},
                {"tflops", tflops}};
  return j;
}

} // namespace tcjit::bench
