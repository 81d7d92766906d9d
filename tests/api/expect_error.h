// The API tests' check of a refused call: it throws tcjit::Error with the expected code.
#pragma once

#include "tcjit/tcjit.hpp"

#include <gtest/gtest.h>

#include <string>

namespace tcjit::testing {

// Runs `f`, which must throw tcjit::Error of `code` whose problem() holds `needle`.
template <class F> void expect_error(F f, tcjit::ErrorCode code, const std::string &needle) {
  try {
    f();
    ADD_FAILURE() << "no tcjit::Error thrown (expected: " << needle << ")";
  } catch (const tcjit::Error &e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(e.problem().find(needle), std::string::npos) << e.what();
  }
}

} // namespace tcjit::testing
