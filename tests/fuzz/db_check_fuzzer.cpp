// Fuzz target: a database file checked by `tcjit db check` (KernelsDb::check, kernels_db/
// integrity.h). Any bytes are written as a file (in a private temporary directory) and checked,
// quick and full, which must report damage instead of throwing (only a file that cannot be opened
// may throw DbError). Then the file is opened read-only as `tcjit db ls/stats/export` do: that
// may be refused with a DbError, but every stored row it reads must be decoded or reported,
// never crash. A file that passes the full check holds no implausible decision (kernels_db/
// decision.h): every result and dispatch table read back is judged again.
#include "fuzz_check.h"

#include "kernels_db/kernels_db.h"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
namespace kdb = tcjit::kernels_db;
using tcjit::fuzz::require;

// A private directory, removed when the process exits normally.
struct ScratchDir {
  fs::path path = fs::temp_directory_path() / ("tcjit-db-check-fuzz-" + std::to_string(::getpid()));
  ScratchDir() { fs::create_directories(path); }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

const fs::path &scratch_dir() {
  static const ScratchDir dir;
  return dir.path;
}

void remove_files(const fs::path &db) {
  std::error_code ec;
  for (const char *suffix : {"", "-wal", "-shm", "-journal"})
    fs::remove(db.string() + suffix, ec);
}

// This build's tuner format (tuner/decision.h) and a fixed clock.
const kdb::DecisionRules kRules{1, 1800000000000};

// Returns whether the check passed.
bool check(const fs::path &path, bool full) {
  try {
    const kdb::CheckReport report = kdb::KernelsDb::check(path, full, kRules);
    require(!report.ok || (report.problems.empty() && report.bad_cubins.empty() &&
                           report.bad_values.empty() && report.bad_dispatch_tables.empty() &&
                           report.implausible.empty()),
            "check says ok while listing damage");
    if (!report.ok)
      require(!report.recovery.empty(), "a failed check without recovery advice");
    return report.ok;
  } catch (const kdb::DbError &e) {
    require(e.kind() == kdb::DbErrorKind::io || e.kind() == kdb::DbErrorKind::not_found,
            "db check threw for a damaged file instead of reporting it", e.what());
  }
  return false;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const fs::path path = scratch_dir() / "fuzz.db";
  remove_files(path);
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char *>(data), static_cast<std::streamsize>(size));
  }
  check(path, false);
  const bool ok = check(path, true);
  try {
    kdb::KernelsDb db = kdb::KernelsDb::open(path, {.create_if_missing = false, .read_only = true});
    for (const kdb::ProblemSummary &summary : db.list({})) {
      if (!ok)
        break;
      for (const kdb::ResultRecord &result : db.results(summary.problem.key_text))
        require(!kdb::implausible_result(result, kRules),
                "a database that passed the full check holds an implausible result");
      for (const kdb::DispatchTable &table : db.dispatch_tables(summary.problem.key_text))
        require(!kdb::implausible_dispatch_table(table, kRules),
                "a database that passed the full check holds an implausible dispatch table");
    }
    (void)db.stats();
    std::ostringstream exported;
    const kdb::TransferCounts counts = db.export_jsonl(exported);
    require(!ok || counts.warnings.empty(),
            "a database that passed the full check exports records with invalid stored JSON");
  } catch (const kdb::DbError &e) {
    // A refusal with a message is an acceptable outcome for a damaged file, and for an older
    // schema (read-only opens do not migrate); not for one that passed the full check.
    const std::string what = e.what();
    require(!ok || what.find("cannot be migrated read-only") != std::string::npos,
            "a database that passed the full check cannot be read", what);
  }
  remove_files(path);
  return 0;
}
