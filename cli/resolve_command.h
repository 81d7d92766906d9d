#pragma once

namespace CLI {
class App;
}

namespace tcjit::cli {
// `tcjit resolve SPEC [--db PATH] [--arch sm_XX] [--backend B] [--json]`
void add_resolve_command(CLI::App &app);
} // namespace tcjit::cli
