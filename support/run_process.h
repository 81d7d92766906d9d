// Running a program without a shell: posix_spawnp with the arguments as given (no quoting, no
// word splitting, no `sh -c` process in between), its stdout and stderr read together from one
// pipe, and its exit status. ptxas and `ptxas --version` are started this way.
#pragma once

#include <string>
#include <vector>

namespace tcjit::support {

struct ProcessResult {
  bool started = false; // false: the program could not be executed (`problem` says why)
  int exit_code = -1;   // the exit status when it exited; -1 when a signal ended it
  int signal = 0;       // the signal that ended it, else 0
  std::string output;   // stdout and stderr, interleaved as written
  std::string problem;  // why it did not start ("" when it did)
};

// Runs `argv[0]` (a path, or a bare name looked up on PATH) with `argv` as its arguments, stdin
// from /dev/null, and waits for it. Never throws for the program's own failure: read `started`,
// `exit_code` and `signal`.
ProcessResult run_process(const std::vector<std::string> &argv);

} // namespace tcjit::support
