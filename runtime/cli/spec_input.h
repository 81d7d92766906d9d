// How every `tcjit` subcommand takes a spec: DSL text in one argument, a file path, or `-` for
// standard input.
#pragma once

#include "compiler/dsl/parser.h"

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

// Reads and parses; prints diagnostics (rendered with source line and caret) to stderr.
// Returns false when reading or parsing failed.
bool load_workload(const std::string &arg, ParseResult &out);

} // namespace tcjit::cli
