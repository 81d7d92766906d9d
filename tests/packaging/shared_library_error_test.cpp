// A program linked with libtcjit.so (tcjit::tcjit), as an application is: an Error thrown inside
// the library is caught as tcjit::Error here, with its code and text, although the library exports
// nothing but its API (api/libtcjit.map keeps the typeinfo and vtable of tcjit::Error exported).
#include "tcjit/tcjit.hpp"

#include <gtest/gtest.h>

#include <typeinfo>

namespace {

tcjit::Runtime emulator_runtime() {
  tcjit::RuntimeOptions options;
  options.device = "emu";
  options.use_database = false;
  return tcjit::Runtime(options);
}

TEST(SharedLibraryError, BadSpecIsCaughtAsTcjitError) {
  tcjit::Runtime rt = emulator_runtime();
  try {
    rt.prepare("gemm m=64 n=64 k=64 a=f17");
    FAIL() << "prepare accepted a spec with dtype f17";
  } catch (const tcjit::Error &error) {
    EXPECT_EQ(error.code(), tcjit::ErrorCode::bad_spec);
    EXPECT_EQ(error.where(), "prepare");
    EXPECT_NE(std::string(error.what()).find("f17"), std::string::npos) << error.what();
    EXPECT_TRUE(typeid(error) == typeid(tcjit::Error));
  }
}

TEST(SharedLibraryError, InvalidOptionIsCaughtAsTcjitError) {
  tcjit::RuntimeOptions options;
  options.device = "emu";
  options.use_database = false;
  options.tune_budget = 0;
  EXPECT_THROW(tcjit::Runtime{options}, tcjit::Error);
}

TEST(SharedLibraryError, ErrorIsAlsoAStdRuntimeError) {
  tcjit::Runtime rt = emulator_runtime();
  EXPECT_THROW(rt.prepare("not a spec"), std::runtime_error);
}

} // namespace
