// The kernel database as an API: what `tcjit db` does (docs/kernels_db.md, docs/cli.md), an
// application can do too. Each function opens the database named by its request (db_path "" =
// $TCJIT_DB, else $XDG_CACHE_HOME/tcjit/kernels.db or ~/.cache/tcjit/kernels.db), does one thing
// and returns plain data. Reading functions open the file read-only: they never create tables,
// migrate or change the journal mode.
//
// Stored JSON columns (shapes, configs, resources, dispatch buckets) are given as their stored
// text; each record's `json` is the record as `db_export` writes it (one JSON object, its JSON
// columns as values). Every failure throws tcjit::Error (tcjit.hpp): invalid_argument for a bad
// request (a bad
// --where, an age or a config that does not parse, a hash that names several problems),
// not_found for a problem or a binary that is not stored, database for a database that cannot be
// opened or read, or a file that cannot be read or written.
#pragma once

#include "tcjit/tcjit.hpp"

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tcjit {

// The versions a stored binary must match to be current (else it is stale).
struct DbVersions {
  std::string toolkit_version;  // CUDA toolkit, e.g. "13.0.48"
  std::string compiler_version; // tcjit's code generator, e.g. "0.1.0+3f2a..."
};

// The versions this build stores binaries with (the toolkit it compiles with, its code generator).
DbVersions current_db_versions();

// The database a request with db_path "" opens. Throws Error(database) when no location can be
// determined (no $TCJIT_DB, $XDG_CACHE_HOME or $HOME).
std::string default_db_path();

// "2026-11-25 14:02:07 UTC": a record's time (milliseconds since 1970) as the tool prints it.
std::string db_time_text(int64_t unix_ms);

struct DbProblem {
  std::string key_text; // the canonical problem key
  std::string key_hash; // its hash, 16 hex digits
  std::string op, dtype, arch;
  std::string shape_json; // {"m":..,"n":..,"k":..}
  std::string spec_text;  // the DSL text of the problem
  int64_t created_ms = 0;
  std::string json;
};

// What decides the config of a problem on an arch: exactly what a run uses (tuner::decide with the
// problem's own sizes, the nominal ones for a range: the decided dispatch table's bucket for them,
// else the fastest plausible measured result).
struct DbDecision {
  std::string arch;
  std::string config_json; // the bucket of the problem's own sizes (else the table's first)
  std::string config;      // as `tcjit run` prints it ("64x64x32 w32x32 s3 k1 g1 va8 vb8")
  double time_us = 0;
  std::string provenance; // of time_us: "measured", "emulated", "predicted"
  std::string tuner_version;
  std::string source;  // "dispatch table" or "measured result"
  int64_t buckets = 0; // the dispatch table's size buckets
};

// ---- db_list ------------------------------------------------------------------------------------

struct DbListRequest {
  std::string db_path;
  std::string op, dtype, arch; // exact matches; "" = any
  std::string where;           // shape filter: FIELD OP INTEGER joined by 'and' ("m>=1024")
  int64_t limit = 0;           // at most this many problems; 0 = all
  // The order: "op" (op, dtype, arch, key; the default), "key" (key text), "time" (the decided
  // time, fastest first; problems without a decision last), "age" (newest problem first).
  std::string sort = "op";
};

struct DbProblemSummary {
  DbProblem problem;
  int64_t binaries = 0, results = 0, dispatch_tables = 0;
  std::optional<double> best_median_us; // the fastest plausible ok measured result, any device
  std::optional<DbDecision> decision;   // what a run on the problem's arch uses; none: untuned
};

std::vector<DbProblemSummary> db_list(const DbListRequest &request);

// ---- db_show ------------------------------------------------------------------------------------

struct DbShowRequest {
  std::string db_path;
  // A problem key, its hash (16 hex digits), or a spec as written for `tcjit run` (DSL text, e.g.
  // "gemm m=64 n=64 k=64 a=f16 b=f16:col"): its problem key for `arch` is looked up.
  std::string key;
  std::optional<DbVersions> versions; // binaries of others are stale; none: current_db_versions()
  // For a spec: the arch of its key; "" = each arch tcjit targets (an error when the spec is
  // stored for several: the message names them).
  std::string arch = "";
};

struct DbTiming {
  double median_us = 0, min_us = 0, max_us = 0, stddev_us = 0;
};

struct DbResult {
  std::string status; // "ok", "failed", "illegal"
  std::string arch;
  std::optional<DbTiming> timing; // absent for failed and illegal configs
  std::optional<double> tflops;
  std::string provenance; // "measured", "predicted", "emulated"
  std::string device, driver;
  std::optional<int64_t> clock_mhz;
  std::string model; // predicted: the cost model
  std::string tuner_version;
  int64_t measured_ms = 0; // when it was measured (a timestamp: Unix milliseconds)
  std::string config_json;
  std::string config;      // as `tcjit run` prints it; config_json when it does not parse
  bool decides = false;    // the row the arch's decision comes from (listed first of its arch)
  std::string message;     // why a config failed or is illegal
  std::string implausible; // why it may not decide (ignored at use), "" when plausible
  std::string json;
};

struct DbBinary {
  std::string arch, toolkit_version, compiler_version, config_json;
  std::string config;         // as `tcjit run` prints it
  bool stale = false;         // of other versions than the request's
  std::string resources_json; // {"registers":..,"spill_bytes":..,"shared_bytes":..}
  int64_t cubin_bytes = 0, ptx_bytes = 0;
  std::string cubin_sha256;
  std::string compile_options;
  double compile_ms = 0;
  int64_t created_ms = 0;
  std::string json; // the record, with "stale"
};

struct DbDispatchEntry {
  std::string dims_json; // the bucket
  std::string bucket;    // as text: "m=1..16 n=4096", "all sizes"
  std::string config_json;
  std::string config; // as `tcjit run` prints it
  double time_us = 0;
  std::string provenance; // of time_us: "measured", "predicted", "emulated"
};

struct DbDispatchTable {
  std::string arch, tuner_version;
  int64_t created_ms = 0;
  std::vector<DbDispatchEntry> entries;
  std::string implausible; // why it may not decide (ignored at use), "" when plausible
  std::string json;
};

struct DbProblemDetails {
  DbProblem problem;
  // Best first: per arch the decision's row (decides), then ok rows with a time (measured, then
  // emulated, then predicted; fastest first), ok rows without one, failed and illegal ones.
  std::vector<DbResult> results;
  std::vector<DbBinary> binaries;
  std::vector<DbDispatchTable> dispatch_tables; // newest first
  std::vector<DbDecision> decisions;            // one per arch that has one
};

// Throws Error(not_found) when no problem has the key, hash or spec (for a spec: the message says
// to `tcjit tune` or `tcjit run` it), Error(invalid_argument) when a hash matches several (the
// message lists their keys) or a spec is stored for several arches (it names them: pass --arch),
// Error(bad_spec) when the text is neither a key, a hash nor a spec that parses.
DbProblemDetails db_show(const DbShowRequest &request);

// ---- db_binary ----------------------------------------------------------------------------------

struct DbBinaryRequest {
  std::string db_path;
  std::string key;  // a problem key, or its hash
  std::string arch; // "" = the problem's
  // The binary's tile config as `tcjit run` prints it ("64x64x32 w32x32 s3 k1 g1 va8 vb8") or as
  // stored (JSON); "" = the fastest measured.
  std::string config;
  std::optional<DbVersions> versions; // none: current_db_versions()
  // Receives a sentence per damaged binary skipped (even when another is found); may be empty.
  std::function<void(const std::string &)> on_warning;
};

struct DbBinaryFound {
  std::string arch, config_json;
  std::string ptx;
  std::vector<uint8_t> cubin;
  std::string cubin_sha256;
};

// The stored binary of a problem. Throws Error(not_found) when there is none (or only damaged
// ones), Error(invalid_argument) for a config that does not parse.
DbBinaryFound db_binary(const DbBinaryRequest &request);

// ---- db_stats -----------------------------------------------------------------------------------

struct DbStatsRequest {
  std::string db_path;
  std::optional<DbVersions> versions; // none: current_db_versions()
};

struct DbStats {
  std::string path;
  int schema_version = 0;
  int64_t problems = 0, binaries = 0, results = 0, dispatch_tables = 0, dispatch_entries = 0;
  int64_t stale_binaries = 0; // of other versions than `current`
  DbVersions current;
  int64_t cubin_bytes = 0, ptx_bytes = 0;
  int64_t file_bytes = 0, wal_bytes = 0, free_pages = 0;
  std::vector<std::pair<std::string, int64_t>> results_by_status; // by status name
  std::vector<std::pair<std::string, int64_t>> binaries_by_arch;
};

DbStats db_stats(const DbStatsRequest &request);

// ---- db_prune -----------------------------------------------------------------------------------

struct DbPruneRequest {
  std::string db_path;
  bool stale = false;     // remove binaries of other versions than `versions`
  std::string older_than; // remove binaries, results and dispatch tables older than 90s, 45m, ...
  std::optional<DbVersions> versions; // none: current_db_versions()
  bool dry_run = false;               // list what would be removed; open read-only, write nothing
};

struct DbPrunedRow {
  std::string kind; // "binary", "result", "dispatch table", "problem"
  std::string key, hash, arch;
  std::string config;     // binaries and results: as `tcjit run` prints it
  int64_t created_ms = 0; // created, or measured for a result
  std::string why;        // "stale: toolkit 11.0, compiler 0.1.0", "older than 2026-..."
};

// A decided config (DbDecision) whose kernel no stored binary of the current versions holds.
// A run compiles it (MissPolicy::fail refuses it); `db_rebuild` compiles it ahead.
struct DbKernelMissing {
  std::string key, hash, arch, config;
};

struct DbPruneReport {
  bool dry_run = false;
  int64_t binaries_removed = 0, results_removed = 0, problems_removed = 0;
  int64_t dispatch_tables_removed = 0;
  std::vector<DbPrunedRow> rows; // dry run: every row it would remove
  // After the prune (dry run: after it would run), the decided configs left without a kernel of
  // the current versions (the prune does not remove decisions: `db_rebuild` recompiles them).
  std::vector<DbKernelMissing> kernels_missing;
};

// Throws Error(invalid_argument) when the request removes nothing or older_than is not an age.
DbPruneReport db_prune(const DbPruneRequest &request);

// ---- db_rebuild ---------------------------------------------------------------------------------

struct DbRebuildRequest {
  std::string db_path;
  std::string arch = ""; // only problems of this arch; "" = all
  bool dry_run = false;  // list the kernels it would compile; open read-only, write nothing
};

struct DbRebuiltKernel {
  std::string key, hash, arch, config;
  std::string status;  // "compiled", "present" (stored already), "to compile" (dry run), "failed"
  std::string message; // why it failed
  double compile_ms = 0;
};

struct DbRebuildReport {
  int64_t compiled = 0, present = 0, failed = 0;
  std::vector<DbRebuiltKernel> kernels; // every decided config of every problem
};

// Compiles and stores the kernel of every decided config (every bucket of a decided dispatch
// table, else the fastest measured result) that has no binary of this build's toolkit and
// compiler versions: after a toolkit upgrade or `db prune --stale`, an application with
// MissPolicy::fail finds its tuned kernels again. A config that does not compile is reported
// ("failed"), not thrown.
DbRebuildReport db_rebuild(const DbRebuildRequest &request);

// ---- db_export, db_import, db_merge -------------------------------------------------------------

struct DbRejectedRecord {
  std::string where, reason;
};

struct DbTransferCounts {
  int64_t problems = 0, binaries = 0;
  int64_t binaries_rejected = 0; // their cubin does not match its sha256: not copied
  int64_t results_added = 0, results_already_present = 0;
  int64_t dispatch_tables = 0, dispatch_tables_rejected = 0;
  int64_t calibrations = 0; // stored (the newer calibration of a GPU and arch is kept)
  std::vector<DbRejectedRecord> rejected; // import, merge: each record not stored, and why
  std::vector<std::string> warnings;      // export: records written with invalid stored JSON
};

struct DbTransferRequest {
  std::string db_path;
  // export: the file written ("" or "-": the stream given); import: the file read ("-": the
  // stream given); merge: the other database.
  std::string file;
};

// Writes every row as JSON Lines (the database is opened before the file is created).
DbTransferCounts db_export(const DbTransferRequest &request, std::ostream &out);
// Adds the rows of an export, all or nothing per record (creates the database when missing).
DbTransferCounts db_import(const DbTransferRequest &request, std::istream &in);
// Adds every row of another database (keeps every measurement).
DbTransferCounts db_merge(const DbTransferRequest &request);

// ---- db_check, db_vacuum ------------------------------------------------------------------------

struct DbCheckReport {
  std::string path;
  bool ok = true;
  std::string check;                 // "quick_check" or "integrity_check"
  std::vector<std::string> problems; // what is damaged
  std::vector<std::string> notes;    // what was not checked, and why
  int64_t binaries_checked = 0;
  std::vector<std::string> bad_cubins; // cubins whose sha256 mismatches
  int64_t dispatch_tables_checked = 0;
  std::vector<std::string> bad_dispatch_tables;
  std::vector<std::string> bad_values;  // values the readers would refuse
  std::vector<std::string> implausible; // values out of range, decisions that may not decide
  std::string recovery;                 // how to recover, when !ok
};

// Checks the file for damage (full: PRAGMA integrity_check, else quick_check) and every cubin's
// hash. Damage is reported, not thrown.
DbCheckReport db_check(const std::string &db_path, bool full);

struct DbVacuumReport {
  std::string path;
  int64_t bytes_before = 0, bytes_after = 0;
};

DbVacuumReport db_vacuum(const std::string &db_path);

// ---- calibrate (`tcjit calibrate`, docs/perf_model.md "Calibration") ----------------------------

struct DbCalibrateRequest {
  std::string db_path;  // "" = $TCJIT_DB, else the default database
  std::string gpu;      // the measured device's name; "" = the only one the database has
  bool dry_run = false; // fit and report, store nothing
};

// One fitted constant: the model's value before and the calibrated one.
struct DbCalibratedConstant {
  std::string name; // "dram_bytes_per_s", "prologue_cycles", "launch_seconds", "mma_efficiency.f16"
  double uncalibrated = 0;
  double calibrated = 0;
};

struct DbCalibrateReport {
  std::string path; // the database (the calibration is stored in its calibrations table)
  // The calibration file that tcjit before schema 6 kept beside the database
  // (<db>.calibration.json), when there was one: imported first (its calibrations stored unless
  // the database has a newer one of the GPU), then renamed <db>.calibration.json.imported.
  std::string imported_file;
  int64_t imported = 0; // calibrations stored from it
  std::string gpu, arch;
  int64_t results = 0; // measured results fitted
  int64_t skipped = 0; // measured results of the GPU not usable (ranged problem, unreadable spec)
  double residual_before = 0, residual = 0; // rms of log(predicted / measured)
  std::vector<DbCalibratedConstant> constants;
  std::vector<std::string> kept; // constants no measurement determines: the model's values kept
  bool stored = false;           // false with dry_run
  std::string label;             // "calibrated on <gpu> (<n> results, <date>)"
  std::string json;              // the object of `tcjit calibrate --json`
};

// Fits the cost model's per-GPU constants to the database's measured results of one GPU and
// stores the calibration in the database (one per GPU and arch, replacing the GPU's previous
// one); from then on explain, tune, resolve and Operation::predicted_time predict for that GPU's
// arch with it. Without dry_run, a calibration file from before schema 6 is imported first
// (imported_file). Throws Error: invalid_argument (several GPUs and no gpu named, not a tcjit
// database), not_found (no measured result, or none of the named GPU: tune on a GPU first),
// unsupported (the fit refuses the measurements: too few, degenerate), database (the database or
// the old calibration file cannot be read or written).
DbCalibrateReport db_calibrate(const DbCalibrateRequest &request);

// One stored calibration (`tcjit calibrate --show`).
struct DbCalibration {
  std::string gpu, arch;
  std::vector<DbCalibratedConstant> constants; // uncalibrated: the arch model's own value
  int64_t results = 0;
  double residual_before = 0, residual = 0;
  int64_t created_ms = 0;
  std::string tcjit_version, model_version;
  std::string label;   // "calibrated on <gpu> (<n> results, <date>)"
  std::string refused; // "" when usable; else why it is never used (what, and the row)
  std::string json;
};

struct DbCalibrations {
  std::string path;
  std::vector<DbCalibration> calibrations; // in the order stored
  // When a calibration file from before schema 6 is beside the database: that it is no longer
  // read and how to import it; "" otherwise.
  std::string side_file_note;
  std::string json;
};

// The database's calibrations, each judged (a refused one says why). Reads only. Throws Error
// like db_list.
DbCalibrations db_calibrations(const std::string &db_path);

// The note a read-only command prints when a calibration file from before schema 6 is beside the
// database at `db_path` ("" = the default): it is no longer read; `tcjit calibrate` imports it.
// "" when there is none (or no database location is known).
std::string db_calibration_side_file_note(const std::string &db_path);

} // namespace tcjit
