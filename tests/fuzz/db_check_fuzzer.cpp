// Fuzz target: a database file checked by `tcjit db check` (KernelsDb::check, kernels_db/
// integrity.h). Any bytes are written as a file (in a private temporary directory) and checked,
// quick and full, which must report damage instead of throwing (only a file that cannot be opened
// may throw DbError). Then the file is opened read-only as `tcjit db ls/stats/export` do: that
// may be refused with a DbError, but every stored row it reads must be decoded or reported,
// never crash.
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

const fs::path &scratch_dir() {
  static const fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("tcjit-db-check-fuzz-" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

void remove_files(const fs::path &db) {
  std::error_code ec;
  for (const char *suffix : {"", "-wal", "-shm", "-journal"})
    fs::remove(db.string() + suffix, ec);
}

void check(const fs::path &path, bool full) {
  try {
    const kdb::CheckReport report = kdb::KernelsDb::check(path, full);
    require(!report.ok || (report.problems.empty() && report.bad_cubins.empty() &&
                           report.bad_values.empty() && report.bad_dispatch_tables.empty()),
            "check says ok while listing damage");
    if (!report.ok)
      require(!report.recovery.empty(), "a failed check without recovery advice");
  } catch (const kdb::DbError &e) {
    require(e.kind() == kdb::DbErrorKind::io || e.kind() == kdb::DbErrorKind::not_found,
            "db check threw for a damaged file instead of reporting it", e.what());
  }
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
  check(path, true);
  try {
    kdb::KernelsDb db = kdb::KernelsDb::open(path, {.create_if_missing = false, .read_only = true});
    (void)db.list({});
    (void)db.stats();
    std::ostringstream exported;
    (void)db.export_jsonl(exported);
  } catch (const kdb::DbError &) {
    // a refusal with a message is an acceptable outcome for a damaged file
  }
  remove_files(path);
  return 0;
}
