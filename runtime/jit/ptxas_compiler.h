// PTX -> cubin with the toolkit's ptxas, once, as a whole program: the non-relocatable code a
// driver's JIT produces, and ptxas's own report (-v) of that very binary, per kernel. This is the
// cubin tcjit ships and loads, and the resources it records are the ones reported here: what is
// checked is what runs.
//
// Why not nvJitLink: it compiles PTX as relocatable code (what `ptxas -c` makes), where calls stay
// calls, bar.warp.sync becomes a CALL to an sm_70 helper, and register allocation differs (the
// f16 128x128x32 GEMM: 255 registers and 4.84 main-loop instructions per HMMA relocatable, against
// 224 and 4.28 whole-program; docs/runtime.md). nvJitLink stays the fallback when ptxas cannot be
// run (compile_ptx in ptx_compiler.h).
#pragma once

#include "runtime/jit/ptx_compiler.h"

#include <string>
#include <string_view>

namespace tcjit::jit {

// The ptxas tcjit runs: $TCJIT_PTXAS when set, else the one found when tcjit was built.
std::string ptxas_executable();

// True when ptxas_executable() exists and can be executed.
bool ptxas_available();

// Compiles `ptx` with `ptxas -v -arch=sm_XX -O<level>` (plus -lineinfo and -maxrregcount from
// `options`) into a cubin; origin Ptxas, `resources` from this compile's log, `info_log` its
// whole output. Throws device::DeviceError: InvalidArgument for bad options, ModuleLoad when
// ptxas rejects the PTX (the message holds its log), Unsupported when ptxas cannot be run (the
// message names the path and $TCJIT_PTXAS).
CompiledPtx compile_ptx_with_ptxas(std::string_view ptx, std::string_view source_name,
                                   const PtxCompileOptions &options);

// The command-line options compile_ptx_with_ptxas passes ("-arch=sm_80 -O3"), stored with the
// binary.
std::string ptxas_options_text(const PtxCompileOptions &options);

} // namespace tcjit::jit
