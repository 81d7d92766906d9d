// `tcjit emu run FILE.ptx --kernel NAME --grid X,Y,Z --block X,Y,Z [--shared BYTES] [--stats]
// [--json] -- ARG...`: runs a PTX kernel on the emulator with .npy buffers and scalar arguments.
#pragma once

namespace CLI {
class App;
}

namespace tcjit::cli {

void add_emu_command(CLI::App &app);

} // namespace tcjit::cli
