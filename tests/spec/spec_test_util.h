// Parses one spec for a test, failing the test with the diagnostics when it does not parse.
#pragma once

#include "compiler/dsl/parser.h"

#include <gtest/gtest.h>

#include <string>

namespace tcjit::testing {

inline OpSpec spec_of(const std::string &text) {
  const ParseResult r = parse_spec(text);
  std::string errors;
  for (const Diagnostic &d : r.errors)
    errors += d.render();
  EXPECT_TRUE(r.ok()) << errors;
  if (!r.ok() || r.entries.empty())
    return OpSpec{};
  return r.entries.front().spec;
}

} // namespace tcjit::testing
