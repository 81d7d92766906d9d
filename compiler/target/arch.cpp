#include "compiler/target/arch.h"

#include <array>

namespace tcjit {

namespace {
constexpr std::array<ArchInfo, 4> kArchs = {{
    {"sm_80", 80, "A100", 163 * 1024, 2048, true, false},
    {"sm_86", 86, "A10 / RTX 3090", 99 * 1024, 1536, false, false},
    {"sm_89", 89, "L4 / RTX 4090", 99 * 1024, 1536, false, true},
    {"sm_90", 90, "H100", 227 * 1024, 2048, true, true},
}};
} // namespace

std::span<const ArchInfo> known_archs() {
  return kArchs;
}

std::optional<ArchInfo> find_arch(std::string_view name) {
  for (const ArchInfo &a : kArchs)
    if (a.name == name)
      return a;
  return std::nullopt;
}

std::string_view known_arch_list() {
  return "sm_80, sm_86, sm_89, sm_90";
}

} // namespace tcjit
