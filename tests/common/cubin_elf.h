// Reads what a cubin itself records of its kernels, for tests that check the resources tcjit
// reports against the binary (what cuobjdump --dump-resource-usage reads).
#pragma once

#include <cstdint>
#include <string>

namespace tcjit::testing {

// Registers per thread of `kernel` in the ELF `cubin`: the high byte of sh_info of its
// .text.<kernel> section. -1 when there is no such section (or `cubin` is not a 64-bit ELF).
inline int cubin_registers(const std::string &cubin, const std::string &kernel) {
  if (cubin.size() < 0x40 || cubin.compare(0, 4,
                                           "\x7f"
                                           "ELF") != 0)
    return -1;
  auto u16 = [&](uint64_t at) {
    return uint16_t(uint8_t(cubin[at]) | uint16_t(uint8_t(cubin[at + 1])) << 8);
  };
  auto u32 = [&](uint64_t at) { return uint32_t(u16(at)) | uint32_t(u16(at + 2)) << 16; };
  auto u64 = [&](uint64_t at) { return uint64_t(u32(at)) | uint64_t(u32(at + 4)) << 32; };
  const uint64_t shoff = u64(0x28);
  const uint16_t shentsize = u16(0x3a), shnum = u16(0x3c), shstrndx = u16(0x3e);
  if (shoff + uint64_t{shnum} * shentsize > cubin.size() || shstrndx >= shnum)
    return -1;
  const uint64_t strtab = u64(shoff + uint64_t{shstrndx} * shentsize + 0x18);
  for (uint16_t i = 0; i < shnum; ++i) {
    const uint64_t sh = shoff + uint64_t{i} * shentsize;
    const uint64_t name = strtab + u32(sh);
    if (name < cubin.size() && std::string(cubin.c_str() + name) == ".text." + kernel)
      return int(u32(sh + 0x2c) >> 24);
  }
  return -1;
}

} // namespace tcjit::testing
