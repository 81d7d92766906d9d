// `tcjit doctor`: what this installation finds when it runs — the CUDA toolkit's pieces and their
// versions, the driver and its GPUs (or none), the kernel database and its schema.
#pragma once

namespace CLI {
class App;
}

namespace tcjit::cli {

void add_doctor_command(CLI::App &app);

} // namespace tcjit::cli
