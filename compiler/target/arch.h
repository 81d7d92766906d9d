// Facts about the GPU architectures tcjit targets (../shared/docs/ptx-fragments.md, "Targets").
#pragma once

#include <optional>
#include <span>
#include <string_view>

namespace tcjit {

struct ArchInfo {
  std::string_view name;    // "sm_80"
  int sm_version;           // 80
  std::string_view example; // "A100"
  int max_smem_per_block;   // bytes, with the dynamic-shared-memory opt-in
  int max_threads_per_sm;
  bool full_rate_f64_mma; // DMMA at full rate (A100, H100)
  bool fp8_mma;           // mma.sync with e4m3/e5m2
};

std::span<const ArchInfo> known_archs();
// The arch called `name` ("sm_80", ...), or nullopt when tcjit does not target it.
std::optional<ArchInfo> find_arch(std::string_view name);
// "sm_80, sm_86, sm_89, sm_90": for error messages.
std::string_view known_arch_list();

} // namespace tcjit
