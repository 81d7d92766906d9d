// KernelsDb: the kernel database API for the layers above (tuner, runtime facade, CLI).
//
//   auto db = tcjit::kernels_db::KernelsDb::open();            // $TCJIT_DB or ~/.cache/...
//   db.put_problem({.key_text = key, .key_hash = hash, .op = "gemm", ...});
//   db.put_binary(binary);
//   auto found = db.find_binary({key, config, "sm_80", toolkit, compiler_version});
//   if (found.status == LookupStatus::hit) use(found.binary->cubin);
//
// Thread-safe: one SQLite connection used under a mutex, behind an in-process cache that
// concurrent readers share. Many processes may use one database at once (WAL, busy timeout,
// retried write transactions). Every error is a DbError.
#pragma once

#include "kernels_db/binary_store.h"
#include "kernels_db/calibration_store.h"
#include "kernels_db/connection.h"
#include "kernels_db/current_versions.h"
#include "kernels_db/decision.h"
#include "kernels_db/dispatch.h"
#include "kernels_db/error.h"
#include "kernels_db/integrity.h"
#include "kernels_db/jsonl_io.h"
#include "kernels_db/prune.h"
#include "kernels_db/prune_preview.h"
#include "kernels_db/queries.h"
#include "kernels_db/records.h"

#include <filesystem>
#include <istream>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace tcjit::kernels_db {

enum class LookupStatus {
  hit,     // `binary` is set and its cubin matches its sha256; binary->trusted says whether this
           // user's tcjit stored it (else it is foreign: rebuild it before launching anything)
  miss,    // no binary for this problem/config/arch/toolkit/compiler version
  corrupt, // only binaries whose cubin does not match its sha256: rebuild and put_binary
};

struct BinaryLookup {
  LookupStatus status = LookupStatus::miss;
  std::shared_ptr<const BinaryRecord> binary;
  std::vector<std::string> warnings; // one per damaged binary skipped (even on a hit)
};

class KernelsDb {
public:
  // Opens or creates the database, refusing one with a newer schema and migrating an older one.
  // A read-only open of an older schema is refused (open it writable once to migrate).
  static KernelsDb open(const std::filesystem::path &path, const OpenOptions &options = {});
  static KernelsDb open_default(const OpenOptions &options = {});

  KernelsDb(KernelsDb &&) noexcept;
  KernelsDb &operator=(KernelsDb &&) noexcept;
  ~KernelsDb();

  const std::string &path() const;
  // Opened read-only (OpenOptions::read_only, or read_only_if_not_writable on a file that cannot be
  // written): the writes below throw; callers keep what they would store in memory.
  bool read_only() const;

  // Writes: each runs in its own write transaction.
  void put_problem(const ProblemRecord &problem);
  // Stores the binary with its MAC under this user's key (kernels_db/trust_key.h), so that
  // find_binary finds it trusted; without a key (none can be read or created) it is stored foreign.
  void put_binary(const BinaryRecord &binary);
  // Links a problem and config to the stored binary of `kernel_identity` (the kernel that config
  // plans for it, found by find_binary with BinaryQuery::kernel_identity), storing `problem`
  // first, in one write transaction: `db show` then lists the binary with the problem. false
  // when no binary of that identity (and key's arch and versions) is stored.
  bool link_binary(const ProblemRecord &problem, const BinaryKey &key,
                   const std::string &kernel_identity);
  // Deletes the binary linked to `key` (a foreign or broken one set aside), for every problem that
  // shares it; false when there was none.
  bool delete_binary(const BinaryKey &key);
  // false when an identical result was already stored.
  bool put_result(const ResultRecord &result);
  // Replaces the dispatch table of (problem_key, arch, tuner_version), entries and all, in one
  // write transaction. Buckets and configs are stored canonical; created_ms = 0 means now.
  // Throws DbError(invalid_argument) for a bad table (see dispatch.h: e.g. overlapping buckets)
  // and DbError(not_found) when the problem is not stored.
  void put_dispatch_table(const DispatchTable &table);
  // Stores the cost model's calibration to a GPU, replacing the one of the same (gpu, arch)
  // (calibration_store.h). Throws DbError(invalid_argument) for values without their form.
  void put_calibration(const CalibrationRecord &calibration);

  // Lookups.
  std::optional<ProblemRecord> find_problem(std::string_view key_text);
  // The first time it needs the key, a warning says why there is none when the key file is unsafe
  // (then every binary counts as foreign).
  BinaryLookup find_binary(const BinaryQuery &query);
  // The best plausible ok result (result_store.h); implausible ones (decision.h) are ignored.
  std::optional<ResultRecord> best_result(std::string_view problem_key, std::string_view arch,
                                          std::optional<std::string_view> device = std::nullopt,
                                          const DecisionRules &rules = {});
  std::vector<ResultRecord> results(std::string_view problem_key);
  // The newest dispatch table (by created_ms) of a problem on `arch`, of `tuner_version` when
  // given. Pick the entry for concrete sizes with DispatchIndex or lookup_dispatch (dispatch.h).
  std::optional<DispatchTable>
  find_dispatch_table(std::string_view problem_key, std::string_view arch,
                      std::optional<std::string_view> tuner_version = std::nullopt);
  // The table that decides for a problem on `arch`: the best valid, plausible one
  // (dispatch_store.h decided_dispatch_table); `ignored` receives why others were passed over.
  std::optional<DispatchTable> decided_dispatch_table(std::string_view problem_key,
                                                      std::string_view arch,
                                                      const DecisionRules &rules,
                                                      std::vector<std::string> *ignored = nullptr);
  // The decided table of every problem of operation `op` ("gemm", "conv2d", "conv3d") on `arch`
  // that has one (dispatch_store.h decided_dispatch_tables_of_op): where a kernel family's
  // tables are found (tuner/size_family.h).
  std::vector<DispatchTable> decided_dispatch_tables_of_op(std::string_view op,
                                                           std::string_view arch,
                                                           const DecisionRules &rules);
  // Every dispatch table of a problem (any arch and tuner version), newest first.
  std::vector<DispatchTable> dispatch_tables(std::string_view problem_key);

  // Every stored calibration as stored, unjudged: judge each with implausible_calibration
  // (calibration_store.h) before use.
  std::vector<StoredCalibration> calibrations();

  // Queries for `tcjit db`.
  std::vector<ProblemSummary> list(const ListFilter &filter);
  std::vector<ProblemDetails> show(std::string_view key_or_hash);
  DbStats stats(const CurrentVersions &current = build_versions());

  // Maintenance.
  PruneReport prune(const PruneOptions &options);
  // What prune(options) would remove; writes nothing (works on a read-only open).
  PrunePreview preview_prune(const PruneOptions &options);
  TransferCounts export_jsonl(std::ostream &out);
  // Import and merge refuse rows with values out of range and implausible decisions
  // (decision.h) by `rules`; an unset now_ms is this machine's clock.
  TransferCounts import_jsonl(std::istream &in, const DecisionRules &rules = {});
  TransferCounts merge(const std::filesystem::path &other, const DecisionRules &rules = {});
  VacuumReport vacuum();
  // Checks a database file without opening it as a KernelsDb (works on damaged files).
  // Implausible decisions are judged by `rules` (decision.h); an unset now_ms is this clock.
  static CheckReport check(const std::filesystem::path &path, bool full = false,
                           const DecisionRules &rules = {});

  // Forgets cached lookups (done after every write through this object). Writes by other
  // processes do not invalidate this process's cache: binaries are immutable for a given key,
  // so only the "best config" choice of a config-less lookup can lag until clear_cache().
  void clear_cache();

private:
  struct State;
  explicit KernelsDb(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

} // namespace tcjit::kernels_db
