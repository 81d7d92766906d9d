// Runs ptxas -v on generated PTX for its arch and parses the resource use it reports. The ptxas
// path is the one CMake found (TCJIT_PTXAS), overridable with $TCJIT_PTXAS.
#pragma once

#include <string>
#include <string_view>

namespace tcjit::codegen {

struct PtxasResult {
  bool ok = false;      // ptxas accepted the PTX
  std::string log;      // everything ptxas printed (errors when !ok)
  int registers = -1;   // per thread
  int spill_stores = 0; // bytes
  int spill_loads = 0;  // bytes
  int stack_frame = 0;  // bytes
  int shared_bytes = 0; // static shared memory (dynamic shared memory is not counted)
  int constant_bytes = 0;
  bool spills() const { return spill_stores > 0 || spill_loads > 0; }
};

std::string ptxas_path();

// Assembles `ptx` for `arch` ("sm_80") into a scratch cubin (deleted) and parses `ptxas -v`.
// Throws std::runtime_error when ptxas cannot be run at all.
PtxasResult run_ptxas(std::string_view ptx, std::string_view arch);

// Parses `ptxas -v` output (exposed for tests).
void parse_ptxas_log(std::string_view log, PtxasResult &out);

} // namespace tcjit::codegen
