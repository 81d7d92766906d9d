// Every command's --help has an example, and docs/cli.md and `tcjit --help` list the same
// commands, so that the documentation cannot drift from the binary.
#include "run_tool.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace tcjit::testing {
namespace {

// The subcommand names of a --help text's "Subcommands:" section.
std::set<std::string> subcommands(const std::string &help) {
  std::set<std::string> out;
  const size_t at = help.find("Subcommands:");
  if (at == std::string::npos)
    return out;
  std::istringstream lines(help.substr(at));
  std::string line;
  std::getline(lines, line);
  const std::regex entry(R"(^\s+([a-z]+)\s)");
  std::smatch m;
  while (std::getline(lines, line))
    if (std::regex_search(line, m, entry))
      out.insert(m[1]);
  return out;
}

TEST(CliHelp, EveryCommandHasAnExampleAndIsDocumented) {
  std::ifstream doc(std::string(TCJIT_SOURCE_DIR) + "/docs/cli.md");
  const std::string cli_md((std::istreambuf_iterator<char>(doc)), std::istreambuf_iterator<char>());
  ASSERT_FALSE(cli_md.empty());
  const std::set<std::string> top = subcommands(run_tool("--help").out);
  EXPECT_EQ(top,
            (std::set<std::string>{"compile", "db", "doctor", "emu", "explain", "run", "tune"}));
  for (const std::string &cmd : top) {
    const ToolResult help = run_tool(cmd + " --help");
    EXPECT_EQ(help.exit_code, 0) << cmd;
    EXPECT_NE(help.out.find("Example: tcjit " + cmd), std::string::npos) << help.out;
    EXPECT_NE(cli_md.find("`" + cmd), std::string::npos) << cmd << " is not in docs/cli.md";
    for (const std::string &sub : subcommands(help.out)) {
      const ToolResult sub_help = run_tool(cmd + " " + sub + " --help");
      EXPECT_NE(sub_help.out.find("Example: tcjit " + cmd + " " + sub), std::string::npos)
          << cmd << " " << sub << ":\n"
          << sub_help.out;
      if (cmd == "db") {
        EXPECT_NE(cli_md.find(sub), std::string::npos) << "db " << sub << " not in docs/cli.md";
      }
    }
  }
}

} // namespace
} // namespace tcjit::testing
