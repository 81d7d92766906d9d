#pragma once

namespace CLI {
class App;
}

namespace tcjit::cli {
// `tcjit explain SPEC [--arch sm_80] [--json]`
void add_explain_command(CLI::App &app);
} // namespace tcjit::cli
