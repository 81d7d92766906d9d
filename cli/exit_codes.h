// Exit codes of the `tcjit` tool, the same for every subcommand.
#pragma once

namespace tcjit::cli {
inline constexpr int kExitOk = 0;
inline constexpr int kExitBadSpec = 1; // the spec or workload has errors (diagnostics printed)
inline constexpr int kExitUsage = 2;   // bad command line
inline constexpr int kExitFailure = 3; // the operation itself failed (verification, device, ...)
} // namespace tcjit::cli
