// How every `tcjit` subcommand takes a spec: DSL text in one argument, a file path, or `-` for
// standard input.
#pragma once

#include "tcjit/tools.hpp"

#include <string>

namespace tcjit::cli {

struct SpecInput {
  std::string text;
  std::string source_name; // the file name, "<stdin>" or "<command line>"
  std::string error;       // set when the input could not be read
};

// Reads `arg`: "-" reads standard input; an existing file is read; text that looks like a spec
// (contains '=' or starts with an op word) is taken as is; anything else is an error naming both
// interpretations.
SpecInput read_spec_input(const std::string &arg);

// Reads and parses (tcjit::parse_ops); prints diagnostics (rendered with source line and caret)
// to stderr. Returns kExitOk, or the exit status of the failure: kExitBadSpec for a spec that does
// not read or parse, kExitUsage for an act=custom file that is not a regular file.
int load_workload(const std::string &arg, std::vector<WorkloadEntry> &out);

// Prints a tcjit::Error of `command` ("tcjit run") to stderr: each line of its problem as
// "COMMAND: error: LINE", then its fix when it has one (and `with_fix`); control characters (text
// from a file) escaped.
void print_error(const char *command, const Error &error, bool with_fix = true);

// The exit status (exit_codes.h) of a failure of this kind: a spec's, the command line's, or the
// operation's.
int exit_status_of(const Error &error);

} // namespace tcjit::cli
