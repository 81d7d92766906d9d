// Helpers shared by the DSL tests.
#pragma once

#include "compiler/dsl/parser.h"
#include "compiler/spec/printer.h"

#include <gtest/gtest.h>

#include <ostream>
#include <string>
#include <string_view>

namespace tcjit {

// gtest prints OpSpecs in their canonical DSL form.
inline void PrintTo(const OpSpec &spec, std::ostream *os) {
  *os << print_spec(spec);
}

inline void PrintTo(const WorkloadEntry &entry, std::ostream *os) {
  *os << "line " << entry.line << ": " << print_entry(entry);
}

// Every diagnostic rendered, concatenated.
inline std::string rendered(const ParseResult &result) {
  std::string text;
  for (const Diagnostic &d : result.errors)
    text += d.render();
  return text;
}

// The rendered diagnostics of parsing `text` as a workload.
inline std::string errors_of(std::string_view text) {
  return rendered(parse_workload(text));
}

} // namespace tcjit

// Parses one operation and fails the test (with the diagnostics) unless it is valid.
#define TCJIT_PARSE_ONE(text)                                                                      \
  ([](std::string_view t) {                                                                        \
    const ::tcjit::ParseResult r = ::tcjit::parse_spec(t);                                         \
    EXPECT_TRUE(r.ok()) << ::tcjit::rendered(r);                                                   \
    return r.entries.empty() ? ::tcjit::OpSpec{} : r.entries.front().spec;                         \
  }(text))
