// Broken inputs in tests/dsl/corpus/*.tcjit and the exact diagnostics they must produce, in the
// sibling *.expected file. Set TCJIT_UPDATE_CORPUS=1 to rewrite the .expected files (then review
// the diff).
#include "dsl_test_util.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace tcjit {
namespace {

namespace fs = std::filesystem;

fs::path corpus_dir() {
  return fs::path(TCJIT_SOURCE_DIR) / "tests" / "dsl" / "corpus";
}

std::string read_file(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<fs::path> corpus_inputs() {
  std::vector<fs::path> inputs;
  for (const fs::directory_entry &entry : fs::directory_iterator(corpus_dir()))
    if (entry.path().extension() == ".tcjit")
      inputs.push_back(entry.path());
  std::sort(inputs.begin(), inputs.end());
  return inputs;
}

TEST(Corpus, EveryBrokenInputGivesItsExpectedDiagnostics) {
  const std::vector<fs::path> inputs = corpus_inputs();
  ASSERT_GE(inputs.size(), 30u) << "corpus missing at " << corpus_dir();
  const char *update = std::getenv("TCJIT_UPDATE_CORPUS");
  for (const fs::path &input : inputs) {
    const ParseResult result = parse_workload(read_file(input), input.filename().string());
    const std::string actual = rendered(result);
    fs::path expected_path = input;
    expected_path.replace_extension(".expected");
    if (update != nullptr && std::string_view(update) == "1") {
      std::ofstream(expected_path, std::ios::binary) << actual;
      continue;
    }
    EXPECT_FALSE(result.ok()) << input << " is in the corpus of broken inputs but parses";
    ASSERT_TRUE(fs::exists(expected_path)) << expected_path;
    EXPECT_EQ(actual, read_file(expected_path)) << "for " << input;
  }
}

} // namespace
} // namespace tcjit
