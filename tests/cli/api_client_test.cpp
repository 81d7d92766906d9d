// The command line is a client of the public API alone: every file of cli/ includes nothing of
// tcjit but include/tcjit/ (tcjit/*.hpp, tcjit.h, op_spec.h) and cli/'s own headers, so whatever
// the `tcjit` command does an embedding application can do through include/tcjit/ too. (The build
// enforces the same: the CLI's targets see include/ and cli/ only, architecture.build_cli_*.)
#include "run_tool.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <string>

namespace tcjit::testing {
namespace {

bool is_layer_below_the_cli(const std::string &path) {
  for (const char *folder :
       {"support/", "compiler/", "runtime/", "kernels_db/", "engine/", "tuner/", "api/"})
    if (path.rfind(folder, 0) == 0)
      return true;
  return false;
}

TEST(CliIsAnApiClient, EveryCliFileIncludesOnlyThePublicApi) {
  const std::filesystem::path cli = std::filesystem::path(TCJIT_SOURCE_DIR) / "cli";
  const std::regex include(R"re(#include\s+(["<])([^">]+)[">])re");
  int files = 0;
  for (const auto &entry : std::filesystem::directory_iterator(cli)) {
    const std::string ext = entry.path().extension().string();
    if (ext != ".cpp" && ext != ".h")
      continue;
    ++files;
    const std::string file = entry.path().filename().string();
    const std::string text = read_file(entry.path());
    ASSERT_FALSE(text.empty()) << file;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), include);
         it != std::sregex_iterator(); ++it) {
      const bool quoted = (*it)[1] == "\"";
      const std::string path = (*it)[2];
      const bool allowed = quoted ? path.rfind("tcjit/", 0) == 0 || path.rfind("cli/", 0) == 0
                                  : !is_layer_below_the_cli(path);
      EXPECT_TRUE(allowed) << "cli/" << file << " includes \"" << path
                           << "\": go through include/tcjit/ (tools.hpp, db.hpp, doctor.hpp, "
                              "emu.hpp) instead";
    }
  }
  EXPECT_GT(files, 10) << cli;
}

} // namespace
} // namespace tcjit::testing
