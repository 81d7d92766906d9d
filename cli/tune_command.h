// `tcjit tune WORKLOAD... [--db PATH] [--arch ..] [--device ..] [--strategy ..] [--budget ..]
// [--jobs N] [--shard I/N] [--replay FILE] [--json]`: offline tuning into the kernel database.
#pragma once

#include <CLI/CLI.hpp>

namespace tcjit::cli {

void add_tune_command(CLI::App &app);

} // namespace tcjit::cli
