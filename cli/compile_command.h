#pragma once

namespace CLI {
class App;
}

namespace tcjit::cli {
// `tcjit compile SPEC [--config "128x128x32 w64x64 s3"] [--arch sm_80] [-o out.ptx] [--no-ptxas]
//                    [--cubin -o out.cubin]`
// Compiles a GEMM spec to PTX; prints the chosen config, the kernel plan, ptxas resource use and
// the time of each stage (parse, the compiler passes, and with --cubin nvJitLink). With --cubin
// the PTX module (both kernels for split-K) is linked by nvJitLink into a cubin for --arch and
// written to -o (required): exit 2 without -o, 3 when nvJitLink cannot be loaded or fails.
void add_compile_command(CLI::App &app);
} // namespace tcjit::cli
