// Export to and import from JSON Lines: one record a line, first a header line.
//   {"type":"tcjit-kernels-db","schema":6}   (imports of schema 1 to 5 exports work alike)
//   {"type":"problem", ...problem_to_json}
//   {"type":"binary", ...binary_to_json}   (cubin as base64; never the MAC)
//   {"type":"result", ...result_to_json}
//   {"type":"dispatch", ...dispatch_table_to_json}   (schema >= 3)
//   {"type":"calibration", ...calibration_to_json}   (schema >= 6)
#pragma once

#include "kernels_db/connection.h"
#include "kernels_db/decision.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <functional>
#include <istream>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace tcjit::kernels_db {

// A record that import or merge refused: where it is ("import line 7", "OTHER.db binaries row
// 3") and why.
struct RejectedRecord {
  std::string where;
  std::string reason;
};

struct TransferCounts {
  int64_t problems = 0;
  int64_t binaries = 0;
  int64_t binaries_rejected = 0; // cubin does not match its sha256: not copied
  int64_t results_added = 0;
  int64_t results_already_present = 0;
  int64_t dispatch_tables = 0; // stored (import: each replaces its (problem, arch, tuner) table)
  int64_t dispatch_tables_rejected = 0; // merge: invalid tables (overlapping buckets, ...)
  int64_t calibrations = 0; // stored (import and merge: the newer of a (gpu, arch) is kept)
  std::vector<RejectedRecord> rejected; // import and merge: every record not stored, and why
  std::vector<std::string> warnings;    // export: records written with invalid stored JSON
};

// Writes every row from one snapshot. A row whose stored JSON column is malformed is written with
// that column as a string and "invalid_json" naming it (see record_json.h), and a warning.
TransferCounts export_jsonl(Connection &connection, std::ostream &out);

// Imports in one write transaction. The header line must come first (else DbError
// invalid_argument, nothing stored; a newer schema: DbError newer_schema). Every later record is
// validated and stored on its own (a savepoint): one that is not JSON, nests deeper than
// kMaxJsonDepth, has a field of the wrong type, refers to an unknown problem, or is a binary whose
// cubin_sha256 is missing, empty or does not match its cubin, whose PTX is empty or whose cubin is
// not empty (PTX only) and not an ELF file, is not stored and is listed in `rejected` with its line
// number and the reason; so is a record with a value out of range or an implausible decision by
// `rules` (decision.h: e.g. a median_us of -5, 0 or inf, a tuner version this tcjit does not know,
// a date in the future); the good records are kept. Problems are upserted; binaries are stored
// without a MAC (foreign) and never replace a stored binary of the same key (counted only when
// stored); results added unless identical ones exist, dispatch tables replace the stored table of
// the same (problem, arch, tuner version). A calibration is judged (implausible_calibration with
// `rules`, whose calibration_check the tuner sets) and stored when it is newer than the usable
// one of its (gpu, arch), if any.
TransferCounts import_jsonl(Connection &connection, std::istream &in, const DecisionRules &rules);

// The one reader of the JSON Lines export_jsonl writes, for import_jsonl and every other reader of
// an export (the tuner's replay measurer). Blank lines are skipped; lines are numbered from 1,
// blank ones included, and a line's place is `where_prefix` and its number ("import line 7"). The
// first line that is not blank must be the header (check_jsonl_header); every later one goes to
// `record` with its place. Returns the lines read and whether there was a header; a stream that
// fails is the caller's to report (in.bad()).
struct JsonlRead {
  int64_t lines = 0;
  bool header_seen = false;
};
JsonlRead
read_jsonl(std::istream &in, std::string_view where_prefix,
           const std::function<void(const std::string &where, const std::string &line)> &record);

// The type of an export's header line.
inline constexpr const char *kJsonlHeaderType = "tcjit-kernels-db";

// Throws DbError invalid_argument when `line` is not a header ({"type":"tcjit-kernels-db",
// "schema":N} with N >= 1), newer_schema when N is newer than this tcjit's; `where` names the line.
void check_jsonl_header(const std::string &line, const std::string &where);

// A record line of an export: a JSON object with a string "type". Throws DbError invalid_argument
// when the line is not JSON, nests deeper than kMaxJsonDepth, or has no "type".
nlohmann::json parse_jsonl_record(const std::string &line);

} // namespace tcjit::kernels_db
