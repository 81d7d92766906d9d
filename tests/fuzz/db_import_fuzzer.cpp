// Fuzz target: JSON Lines import into the kernel database (`tcjit db import`, kernels_db/
// jsonl_io.h). Any bytes are imported into a fresh in-memory database. Import must store the good
// records and list every other one as rejected with a reason (or refuse the whole file with a
// DbError for a bad header); whatever it stored must then export and import again into another
// fresh database with nothing rejected, and the listing and statistics queries must read it.
#include "fuzz_check.h"

#include "kernels_db/kernels_db.h"

#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

namespace {

namespace kdb = tcjit::kernels_db;
using tcjit::fuzz::require;

std::string rejected_text(const kdb::TransferCounts &counts) {
  std::string text;
  for (const kdb::RejectedRecord &r : counts.rejected)
    text += r.where + ": " + r.reason + "\n";
  return text;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const std::string text(reinterpret_cast<const char *>(data), size);
  kdb::KernelsDb db = kdb::KernelsDb::open(":memory:");
  std::istringstream in(text);
  kdb::TransferCounts imported;
  try {
    imported = db.import_jsonl(in);
  } catch (const kdb::DbError &e) {
    require(e.kind() == kdb::DbErrorKind::invalid_argument ||
                e.kind() == kdb::DbErrorKind::newer_schema,
            "import refused a file with an unexpected error kind", e.what());
    return 0;
  }
  for (const kdb::RejectedRecord &r : imported.rejected)
    require(!r.where.empty() && !r.reason.empty(), "a rejected record without where or why",
            r.where + ": " + r.reason);

  std::ostringstream exported;
  const kdb::TransferCounts written = db.export_jsonl(exported);
  require(written.warnings.empty(), "export of freshly imported records warned");

  kdb::KernelsDb copy = kdb::KernelsDb::open(":memory:");
  std::istringstream again(exported.str());
  const kdb::TransferCounts reimported = copy.import_jsonl(again);
  require(reimported.rejected.empty(), "an export of imported records is not importable",
          rejected_text(reimported) + "--- export:\n" + exported.str());
  require(reimported.problems == written.problems && reimported.binaries == written.binaries &&
              reimported.dispatch_tables == written.dispatch_tables,
          "re-import counts differ from the export's", exported.str());

  (void)copy.list({});
  (void)copy.stats();
  return 0;
}
