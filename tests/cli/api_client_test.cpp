// The command line is a client of the public API: `compile`, `run`, `explain` and `tune` include
// nothing of the layers below it but tcjit/*.hpp (and the JSON printer every command shares, and
// support/'s std-only helpers), so whatever they do an embedding application can do through
// include/tcjit/ too.
#include "run_tool.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>

namespace tcjit::testing {
namespace {

TEST(CliIsAnApiClient, CommandsIncludeOnlyThePublicApi) {
  const std::filesystem::path cli = std::filesystem::path(TCJIT_SOURCE_DIR) / "cli";
  const std::regex include(R"re(#include\s+"([^"]+)")re");
  for (const char *file : {"compile_command.cpp", "run_command.cpp", "explain_command.cpp",
                           "tune_command.cpp", "spec_input.cpp", "spec_input.h"}) {
    const std::string text = read_file(cli / file);
    ASSERT_FALSE(text.empty()) << file;
    int includes = 0;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), include);
         it != std::sregex_iterator(); ++it) {
      const std::string path = (*it)[1];
      ++includes;
      const bool allowed = path.rfind("tcjit/", 0) == 0 || path.rfind("cli/", 0) == 0 ||
                           path.rfind("support/", 0) == 0 || path == "kernels_db/record_json.h";
      EXPECT_TRUE(allowed) << file << " includes \"" << path
                           << "\": go through include/tcjit/ (tools.hpp) instead";
    }
    EXPECT_GT(includes, 0) << file;
  }
}

} // namespace
} // namespace tcjit::testing
