// PTX -> the cubin that is shipped: ptxas as a whole program when it can be run, else nvJitLink
// (relocatable code), with that very compile's resources (runtime/jit). Thread-safe: the tuner
// builds candidates on all cores at once.
#pragma once

#include "compiler/codegen/pipeline.h"
#include "runtime/jit/entry_resources.h"

#include <cstdint>
#include <string>
#include <vector>

namespace tcjit::engine {

// The one compile of a kernel's PTX to the cubin that is shipped: ptxas as a whole program when it
// can be run, else nvJitLink (relocatable code), else none (a GPU's driver compiles the PTX when
// it loads it). `resources` come from that same compile's report.
struct CubinBuild {
  std::vector<uint8_t> cubin;
  std::vector<jit::EntryResources> resources;
  std::string note;    // "cubin 27168 B by ptxas -arch=sm_80 -O3 in 71.3 ms"
  std::string stage;   // "ptxas" or "nvJitLink"; "" when no compiler could run (note says why)
  std::string options; // "ptxas -arch=sm_80 -O3" or "nvJitLink 13.0 -arch=sm_80 ..."
  double ms = 0;
  std::string error; // the compiler rejected the PTX: an internal error
};
// Which compiler makes the cubin: automatic is ptxas, else nvJitLink (what the runtime ships);
// the others that one only (tcjit compile --nvjitlink compares them).
enum class CubinRoute { automatic, ptxas, nvjitlink };
CubinBuild build_cubin(const codegen::CompiledKernel &kernel,
                       CubinRoute route = CubinRoute::automatic);

// Spill and stack bytes of every kernel of `build` (the main kernel and split-K's reduction). A
// relocatable (nvJitLink) build has stack frames of its own (calls to the sm_70 warp-sync helper):
// there only spills count.
int spill_and_stack_bytes(const CubinBuild &build);

} // namespace tcjit::engine
