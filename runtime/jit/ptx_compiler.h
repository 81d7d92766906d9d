// PTX → cubin in-process with nvJitLink, for one exact SM architecture. Where nvJitLink is
// absent the result says so, and the caller (the CUDA device) hands the PTX to the driver, which
// JIT-compiles it at module load.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/jit/entry_resources.h"
#include "runtime/jit/nvjitlink_library.h"

namespace tcjit::jit {

struct PtxCompileOptions {
  int sm_arch = 80;            // -arch=sm_80
  int optimization_level = 3;  // 0..3: -O0/-O3 for nvJitLink, the exact level passed to ptxas
  bool line_info = false;      // -lineinfo
  int max_registers = 0;       // -maxrregcount=N when > 0
  bool resource_usage = false; // -Xptxas=-v: registers, shared bytes, spills in the info log
};

// The nvJitLink option strings for `options` ("-arch=sm_80", "-O3", ...).
std::vector<std::string> nvjitlink_option_strings(const PtxCompileOptions &options);
// The same, joined by spaces: part of the single-flight key and stored with binaries.
std::string options_text(const PtxCompileOptions &options);

enum class CubinOrigin {
  Ptxas,     // `cubin` holds the whole-program ELF ptxas produced (ptxas_compiler.h)
  NvJitLink, // `cubin` holds the ELF nvJitLink produced (relocatable code, linked)
  DriverJit, // nvJitLink is unavailable: load the PTX itself, the driver compiles it
};

struct CompiledPtx {
  CubinOrigin origin = CubinOrigin::NvJitLink;
  std::vector<char> cubin;     // empty for DriverJit
  std::string fallback_reason; // DriverJit: why nvJitLink was not used
  std::string info_log;        // the compiler's info log (ptxas resource use with -v, warnings)
  std::vector<EntryResources> resources; // per kernel, parsed from info_log (when -v)
  std::string options;                   // options_text() of the compile
  double compile_milliseconds = 0;
};

// Compiles `ptx` with `library`. Throws device::DeviceError: InvalidArgument for bad options,
// ModuleLoad when nvJitLink rejects the PTX (the message holds its error log). When
// library.loaded is false, returns a DriverJit result instead of throwing.
CompiledPtx compile_ptx(std::string_view ptx, std::string_view source_name,
                        const PtxCompileOptions &options, const NvJitLinkLibrary &library);

// The same with the process-wide nvJitLink.
CompiledPtx compile_ptx(std::string_view ptx, std::string_view source_name,
                        const PtxCompileOptions &options);

} // namespace tcjit::jit
