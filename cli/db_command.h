#pragma once

#include "tcjit/db.hpp"

#include <iosfwd>

namespace CLI {
class App;
}

namespace tcjit::cli {
// `tcjit db ls|show|ptx|cubin|stats|prune|export|import|merge|check|vacuum`: the kernel
// database, a client of include/tcjit/db.hpp. Every subcommand takes --db PATH (default
// $TCJIT_DB, $XDG_CACHE_HOME/tcjit/kernels.db or ~/.cache/tcjit/kernels.db) and --json.
// `current`: the versions binaries must match to be current (not stale) unless
// --toolkit-version/--compiler-version say otherwise; the tool passes those it stores binaries
// with (tcjit::current_db_versions()).
void add_db_command(CLI::App &app, const DbVersions &current);
// The same, writing to `out` and `err` (tests).
void add_db_command(CLI::App &app, const DbVersions &current, std::ostream &out, std::ostream &err);
} // namespace tcjit::cli
