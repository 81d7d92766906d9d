// Fuzz target: the emulator's PTX loader (runtime/emu: lexer, parser, decoder and its checks).
// Any bytes are loaded as a module with load_program(), as EmuDevice::load_module does, but
// nothing is executed and no device memory is allocated: .global/.const variables get addresses
// from a counter, with GlobalMemory::allocate's 1 TiB limit. The only acceptable outcomes are a
// Program or a DeviceError of kind ModuleLoad (or OutOfMemory from the allocator) with a message;
// any other exception, a crash or a hang is a bug.
#include "fuzz_check.h"

#include "runtime/device/device.h"
#include "runtime/emu/program.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  using tcjit::device::DeviceError;
  using tcjit::device::ErrorKind;
  using tcjit::fuzz::require;
  const std::string_view ptx(reinterpret_cast<const char *>(data), size);

  uint64_t next = 0x1000'0000;
  const tcjit::emu::GlobalAllocator allocate = [&](uint64_t bytes, uint32_t align) -> uint64_t {
    if (bytes > (uint64_t{1} << 40))
      throw DeviceError(ErrorKind::OutOfMemory, "fuzz allocator: more than 1 TiB");
    const uint64_t a = align < 256 ? 256 : align;
    const uint64_t base = (next + a - 1) / a * a;
    next = base + bytes + 4096;
    return base;
  };
  try {
    std::unique_ptr<tcjit::emu::Program> program =
        tcjit::emu::load_program(ptx, "fuzz.ptx", allocate);
    require(program != nullptr, "load_program returned no program");
  } catch (const DeviceError &e) {
    require(e.kind() == ErrorKind::ModuleLoad || e.kind() == ErrorKind::OutOfMemory,
            "load_program threw a DeviceError of an unexpected kind", e.what());
    require(std::string_view(e.what()).size() > 0, "a DeviceError without a message");
  }
  return 0;
}
