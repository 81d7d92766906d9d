#pragma once

namespace CLI {
class App;
}

namespace tcjit::cli {
// `tcjit run SPEC [--device emu|cuda|auto] [--arch] [--config] [--seed] [--db PATH] [--no-cache]`
void add_run_command(CLI::App &app);
} // namespace tcjit::cli
