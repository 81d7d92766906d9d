// Building one candidate: the config compiled by the code generator, then by ptxas into the cubin
// that would be shipped, with that compile's resources. Thread-safe (compile_gemm and ptxas runs
// are independent), so the tuner builds candidates on all cores at once.
#pragma once

#include "compiler/codegen/pipeline.h"
#include "runtime/jit/kernel_resources.h"
#include "tcjit/op_spec.h"
#include "tuner/cost_model.h"
#include "tuner/kernel_compile.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tcjit::tuner {

// The one compile of a kernel's PTX to the cubin that is shipped: ptxas as a whole program when it
// can be run, else nvJitLink (relocatable code), else none (a GPU's driver compiles the PTX when
// it loads it). `resources` come from that same compile's report.
struct CubinBuild {
  std::vector<uint8_t> cubin;
  std::vector<jit::KernelResources> resources;
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

struct BuiltCandidate {
  codegen::TileConfig config;     // resolved
  codegen::CompiledKernel kernel; // ok() unless failure is "compile"
  CubinBuild cubin;
  CandidateFacts facts; // registers, spills, stack from the cubin's compile
  double build_ms = 0;  // code generator + ptxas
  // Why the candidate cannot be used: "" when it can; else a rule ("compile", "ptxas", "spills")
  // and the sentence. A candidate that spills or needs a stack frame is never chosen.
  std::string failure_rule;
  std::string failure;
  bool usable() const { return failure_rule.empty(); }
};

BuiltCandidate build_candidate(const OpSpec &spec, const codegen::TileConfig &config,
                               std::string_view arch, bool tf32_off,
                               Backend backend = Backend::llvm);

} // namespace tcjit::tuner
