#pragma once

namespace CLI {
class App;
}

namespace tcjit::cli {
// `tcjit calibrate [--db PATH] [--gpu NAME] [--json] [--dry-run]`
void add_calibrate_command(CLI::App &app);
} // namespace tcjit::cli
