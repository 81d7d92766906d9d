// preview_prune (`tcjit db prune --dry-run`) names exactly the rows prune() removes, in every mode,
// and writes nothing: the file's bytes are the same afterwards, also through a read-only open.
#include "db_test_util.h"

#include "kernels_db/clock.h"
#include "kernels_db/kernels_db.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace tcjit::kernels_db {
namespace {

using testing::sample_binary;
using testing::sample_problem;
using testing::sample_result;
using testing::TempDir;

constexpr int64_t kDay = 24 * 3600 * 1000;

std::string file_bytes(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Problems with current and stale binaries, old and new results, an old dispatch table, and an
// old problem that keeps nothing.
void fill(const std::filesystem::path &path) {
  KernelsDb db = KernelsDb::open(path);
  const int64_t now = now_unix_ms();
  ProblemRecord kept = sample_problem(0);
  ProblemRecord old_problem = sample_problem(1);
  old_problem.created_ms = now - 90 * kDay;
  db.put_problem(kept);
  db.put_problem(old_problem);
  BinaryRecord current = sample_binary(kept, 128, "sm_80", "12.4", "0.1.0");
  BinaryRecord stale = sample_binary(kept, 64, "sm_80", "11.0", "0.1.0");
  BinaryRecord old_current = sample_binary(old_problem, 128, "sm_80", "12.4", "0.1.0");
  old_current.created_ms = now - 60 * kDay;
  for (const BinaryRecord &binary : {current, stale, old_current})
    db.put_binary(binary);
  db.put_result(sample_result(kept, 128, 12.5, "A100", now - kDay));
  db.put_result(sample_result(kept, 64, 20.0, "A100", now - 40 * kDay));
  db.put_result(sample_result(old_problem, 128, 9.0, "A100", now - 50 * kDay));
  DispatchTable table;
  table.problem_key = old_problem.key_text;
  table.arch = "sm_80";
  table.tuner_version = "tcjit-tuner 1 / 0.1.0 / cuda";
  table.created_ms = now - 45 * kDay;
  table.entries = {{"{}", testing::sample_config(128), 9.0, ProvenanceKind::measured}};
  db.put_dispatch_table(table);
}

TEST(KernelsDbPrunePreview, NamesWhatPruneRemovesInEveryModeAndWritesNothing) {
  PruneOptions stale;
  stale.stale_versions = CurrentVersions{"12.4", "0.1.0"};
  PruneOptions old;
  old.older_than = std::chrono::milliseconds(30 * kDay);
  PruneOptions both = old;
  both.stale_versions = stale.stale_versions;
  struct Mode {
    const char *name;
    PruneOptions options;
    PruneReport expected;
  };
  const Mode modes[] = {{"stale", stale, {1, 0, 0, 0}},
                        {"older than 30d", old, {1, 2, 1, 1}},
                        {"both", both, {2, 2, 1, 1}}};
  for (const Mode &mode : modes) {
    TempDir dir;
    fill(dir.file("a.db"));
    std::filesystem::copy_file(dir.file("a.db"), dir.file("b.db"));
    const std::string before = file_bytes(dir.file("a.db"));
    PrunePreview preview;
    {
      OpenOptions read_only;
      read_only.read_only = true;
      KernelsDb db = KernelsDb::open(dir.file("a.db"), read_only);
      preview = db.preview_prune(mode.options);
    }
    EXPECT_EQ(file_bytes(dir.file("a.db")), before) << mode.name;
    // A reader of a WAL database may leave an empty -wal file (SQLite's): no row in it.
    EXPECT_EQ(file_bytes(dir.file("a.db-wal")), "") << mode.name;

    KernelsDb pruned = KernelsDb::open(dir.file("b.db"));
    const PruneReport report = pruned.prune(mode.options);
    EXPECT_EQ(report.binaries_removed, mode.expected.binaries_removed) << mode.name;
    EXPECT_EQ(report.results_removed, mode.expected.results_removed) << mode.name;
    EXPECT_EQ(report.problems_removed, mode.expected.problems_removed) << mode.name;
    EXPECT_EQ(report.dispatch_tables_removed, mode.expected.dispatch_tables_removed) << mode.name;
    EXPECT_EQ(preview.counts.binaries_removed, report.binaries_removed) << mode.name;
    EXPECT_EQ(preview.counts.results_removed, report.results_removed) << mode.name;
    EXPECT_EQ(preview.counts.problems_removed, report.problems_removed) << mode.name;
    EXPECT_EQ(preview.counts.dispatch_tables_removed, report.dispatch_tables_removed) << mode.name;
    const size_t rows =
        static_cast<size_t>(report.binaries_removed + report.results_removed +
                            report.problems_removed + report.dispatch_tables_removed);
    ASSERT_EQ(preview.rows.size(), rows) << mode.name;
    for (const PrunedRow &row : preview.rows) {
      EXPECT_FALSE(row.problem_key.empty()) << mode.name;
      EXPECT_FALSE(row.why.empty()) << mode.name;
      if (row.kind == "binary" && row.why.rfind("stale", 0) == 0) {
        EXPECT_EQ(row.why, "stale: toolkit 11.0, compiler 0.1.0") << mode.name;
      }
    }
  }
}

} // namespace
} // namespace tcjit::kernels_db
