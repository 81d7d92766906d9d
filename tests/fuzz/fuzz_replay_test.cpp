// Replays a fuzz target's committed inputs in the normal test suite: every file of
// tests/fuzz/corpus/<target>/ (the seeds) and tests/fuzz/regressions/<target>/ (inputs that once
// crashed or hung, each named after what it found) goes through the target's
// LLVMFuzzerTestOneInput, compiled here with the normal compiler and without libFuzzer. A broken
// invariant aborts (the test fails); a crash fixed in the product code stays fixed.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> inputs(const fs::path &dir) {
  std::vector<fs::path> files;
  if (!fs::is_directory(dir))
    return files;
  for (const fs::directory_entry &entry : fs::directory_iterator(dir))
    if (entry.is_regular_file())
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::string read_bytes(const fs::path &file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Replays every input of `dir`; fails when it has none (a replay of nothing proves nothing: a
// renamed or emptied folder would pass unnoticed).
size_t replay(const fs::path &dir) {
  const std::vector<fs::path> files = inputs(dir);
  EXPECT_FALSE(files.empty()) << "no inputs to replay in " << dir.string()
                              << (fs::is_directory(dir) ? " (the folder is empty)"
                                                        : " (no such folder)");
  for (const fs::path &file : files) {
    SCOPED_TRACE(file.string());
    const std::string bytes = read_bytes(file);
    EXPECT_EQ(LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size()),
              0);
  }
  return files.size();
}

const fs::path kFuzzDir = fs::path(TCJIT_SOURCE_DIR) / "tests" / "fuzz";

TEST(FuzzReplay, SeedCorpus) {
  const fs::path dir = kFuzzDir / "corpus" / TCJIT_FUZZ_TARGET;
  const size_t replayed = replay(dir);
  EXPECT_GE(replayed, 3u) << "the seed corpus of " << TCJIT_FUZZ_TARGET << " in " << dir.string()
                          << " has fewer than 3 inputs";
}

#if TCJIT_FUZZ_HAS_REGRESSIONS
TEST(FuzzReplay, Regressions) {
  replay(kFuzzDir / "regressions" / TCJIT_FUZZ_TARGET);
}
#else
// This target has no regression inputs yet (tests/fuzz/CMakeLists.txt,
// tcjit_fuzz_targets_with_regressions): should one be added, it must be replayed.
TEST(FuzzReplay, NoRegressionInputsYet) {
  const fs::path dir = kFuzzDir / "regressions" / TCJIT_FUZZ_TARGET;
  const std::vector<fs::path> files = inputs(dir);
  EXPECT_TRUE(files.empty()) << dir.string() << " has " << files.size()
                             << " inputs that are not replayed: add " << TCJIT_FUZZ_TARGET
                             << " to tcjit_fuzz_targets_with_regressions in "
                                "tests/fuzz/CMakeLists.txt";
}
#endif

} // namespace
