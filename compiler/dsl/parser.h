// DSL text -> WorkloadEntry/OpSpec, with located diagnostics. docs/dsl.md describes the language.
//
// The parser never throws on any input (binary data, huge numbers, over-long lines): every
// problem becomes a Diagnostic. Each parsed spec also passes validate_spec(), whose errors point
// at the responsible key's word.
#pragma once

#include "compiler/dsl/diagnostic.h"
#include "tcjit/op_spec.h"

#include <cstddef>
#include <string_view>
#include <vector>

namespace tcjit {

// Parsing stops after this many errors and adds a last one saying so.
inline constexpr size_t max_errors = 100;

struct ParseResult {
  std::vector<WorkloadEntry> entries; // the lines without errors, in order
  std::vector<Diagnostic> errors;     // in line order, by column within a line
  bool ok() const { return errors.empty(); }
};

// Any number of operations, one per line, with names, weights, comments and blank lines.
// Names must be unique within the text.
ParseResult parse_workload(std::string_view text, std::string_view filename = "<input>");

// Exactly one operation (comments and blank lines allowed); an error if zero or several.
ParseResult parse_spec(std::string_view text, std::string_view filename = "<input>");

} // namespace tcjit
