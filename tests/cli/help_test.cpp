// Every command's --help has an example, and docs/cli.md and `tcjit --help` list the same
// commands, so that the documentation cannot drift from the binary.
#include "run_tool.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

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
  EXPECT_EQ(top, (std::set<std::string>{"calibrate", "compile", "db", "doctor", "emu", "explain",
                                        "resolve", "run", "tune"}));
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

std::string read_doc(const std::string &relative) {
  std::ifstream f(std::string(TCJIT_SOURCE_DIR) + "/" + relative);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// The README's command table names every flag each command's --help lists, so that neither can
// drift from the other.
TEST(CliHelp, TheReadmeCommandTableNamesEveryFlag) {
  const std::string readme = read_doc("README.md");
  ASSERT_FALSE(readme.empty());
  const std::regex flag(R"((--[a-z][a-z0-9-]*))");
  for (const std::string cmd :
       {"explain", "compile", "run", "tune", "resolve", "doctor", "emu run", "calibrate"}) {
    const size_t at = readme.find("| `tcjit " + cmd + " ");
    ASSERT_NE(at, std::string::npos) << "the README's command table has no row for " << cmd;
    const std::string row = readme.substr(at, readme.find('\n', at) - at);
    const std::string help = run_tool(cmd + " --help").out;
    int flags = 0;
    for (auto it = std::sregex_iterator(help.begin(), help.end(), flag);
         it != std::sregex_iterator(); ++it) {
      const std::string f = (*it)[1];
      if (f == "--help" || help.find("Example: tcjit") < size_t(it->position()))
        continue;
      ++flags;
      EXPECT_NE(row.find(f), std::string::npos)
          << "tcjit " << cmd << " --help lists " << f << ", the README's table does not";
    }
    EXPECT_GT(flags, 0) << cmd;
  }
}

// No message, --help text or document refers to an issue number (the tracker is not the
// user's): every --help, the README and docs/.
TEST(CliHelp, NoTextRefersToAnIssueNumber) {
  const std::regex issue(R"(\b[Ii]ssue\s*#?[0-9]+)");
  std::vector<std::pair<std::string, std::string>> texts;
  texts.push_back({"README.md", read_doc("README.md")});
  for (const auto &entry :
       std::filesystem::recursive_directory_iterator(std::string(TCJIT_SOURCE_DIR) + "/docs"))
    if (entry.path().extension() == ".md")
      texts.push_back(
          {entry.path().string(), read_doc("docs/" + entry.path().filename().string())});
  const std::set<std::string> top = subcommands(run_tool("--help").out);
  for (const std::string &cmd : top) {
    const std::string help = run_tool(cmd + " --help").out;
    texts.push_back({"tcjit " + cmd + " --help", help});
    for (const std::string &sub : subcommands(help))
      texts.push_back(
          {"tcjit " + cmd + " " + sub + " --help", run_tool(cmd + " " + sub + " --help").out});
  }
  EXPECT_GT(texts.size(), 20u);
  for (const auto &[name, text] : texts) {
    std::smatch m;
    EXPECT_FALSE(std::regex_search(text, m, issue)) << name << " says \"" << m.str() << "\"";
  }
}

} // namespace
} // namespace tcjit::testing
