#pragma once

namespace CLI {
class App;
}

namespace tcjit::cli {
// `tcjit compile SPEC [--config "128x128x32 w64x64 s3"] [--arch sm_80] [-o out.ptx] [--no-ptxas]`
// Compiles a GEMM spec to PTX; prints the chosen config, the kernel plan, ptxas resource use and
// the time of each compiler pass.
void add_compile_command(CLI::App &app);
} // namespace tcjit::cli
