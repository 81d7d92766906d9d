#pragma once

#include <iosfwd>

namespace CLI {
class App;
}

namespace tcjit::cli {
// `tcjit db ls|show|ptx|cubin|stats|prune|export|import|merge|check|vacuum`: the kernel
// database. Every subcommand takes --db PATH (default $TCJIT_DB, $XDG_CACHE_HOME/tcjit/kernels.db
// or ~/.cache/tcjit/kernels.db) and --json.
void add_db_command(CLI::App &app);
// The same, writing to `out` and `err` (tests).
void add_db_command(CLI::App &app, std::ostream &out, std::ostream &err);
} // namespace tcjit::cli
