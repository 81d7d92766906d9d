#include "kernels_db/kernels_db.h"

#include "kernels_db/calibration_store.h"
#include "kernels_db/clock.h"
#include "kernels_db/default_path.h"
#include "kernels_db/dispatch_store.h"
#include "kernels_db/lookup_cache.h"
#include "kernels_db/merge.h"
#include "kernels_db/problem_store.h"
#include "kernels_db/result_store.h"
#include "kernels_db/schema.h"
#include "kernels_db/sha256.h"
#include "kernels_db/transaction.h"
#include "kernels_db/trust_key.h"

#include <sys/statvfs.h>
#include <unistd.h>

#include <mutex>

namespace tcjit::kernels_db {

struct KernelsDb::State {
  explicit State(Connection c) : connection(std::move(c)) {}
  std::mutex connection_mutex; // guards `connection` (SQLite handles are not shared by threads)
  Connection connection;
  LookupCache cache;
  bool read_only = false;
  // This user's key, read (or created) at first need; key_warning is reported once.
  std::once_flag key_once;
  TrustKey key;
  bool key_warning_reported = false;

  const std::string &trust_key() {
    std::call_once(key_once, [this] { key = load_or_create_trust_key(); });
    return key.bytes;
  }
};

KernelsDb::KernelsDb(std::unique_ptr<State> state) : state_(std::move(state)) {}
KernelsDb::KernelsDb(KernelsDb &&) noexcept = default;
KernelsDb &KernelsDb::operator=(KernelsDb &&) noexcept = default;
KernelsDb::~KernelsDb() = default;

namespace {

// An existing database that this process cannot write: the file or its directory is not writable,
// or the file system is mounted read-only.
bool cannot_write(const std::filesystem::path &path) {
  std::error_code ec;
  if (path.string() == ":memory:" || !std::filesystem::is_regular_file(path, ec))
    return false;
  const std::filesystem::path parent =
      path.has_parent_path() ? path.parent_path() : std::filesystem::path(".");
  struct statvfs fs {};
  if (::statvfs(path.c_str(), &fs) == 0 && (fs.f_flag & ST_RDONLY) != 0)
    return true;
  return ::access(path.c_str(), W_OK) != 0 || ::access(parent.c_str(), W_OK) != 0;
}

// The rules with this machine's clock when the caller left now_ms unset.
DecisionRules with_clock(DecisionRules rules) {
  if (!rules.now_ms)
    rules.now_ms = now_unix_ms();
  return rules;
}

} // namespace

KernelsDb KernelsDb::open(const std::filesystem::path &path, const OpenOptions &requested) {
  OpenOptions options = requested;
  const bool fell_back_to_read_only =
      options.read_only_if_not_writable && !options.read_only && cannot_write(path);
  if (fell_back_to_read_only) {
    options.read_only = true;
    options.create_if_missing = false;
  }
  Connection connection = Connection::open(path, options);
  if (options.read_only) {
    // Reads only: never creates tables, migrates or changes the journal mode.
    const int version = checked_schema_version(connection);
    // No tables or another program's tables (version 0), objects tcjit did not create, damage.
    refuse_unusable_schema(connection);
    if (version < kSchemaVersion && fell_back_to_read_only) {
      // A shared cache of an older schema that this process cannot write: migrated in a private
      // in-memory copy (the file is never written), so its decisions stay usable.
      connection = Connection::copy_into_memory(connection);
      prepare_schema(connection);
      refuse_unusable_schema(connection);
    } else if (version < kSchemaVersion)
      throw DbError(DbErrorKind::invalid_argument,
                    "database schema " + std::to_string(version) + " is older than " +
                        std::to_string(kSchemaVersion) + " and cannot be migrated read-only",
                    connection.path(),
                    "run a writing command once to migrate it, e.g. `tcjit db vacuum --db " +
                        connection.path() + "`");
  } else {
    prepare_schema(connection);
    refuse_unusable_schema(connection); // as migrated
  }
  auto state = std::make_unique<State>(std::move(connection));
  state->read_only = options.read_only;
  return KernelsDb(std::move(state));
}

KernelsDb KernelsDb::open_default(const OpenOptions &options) {
  return open(default_db_path(), options);
}

const std::string &KernelsDb::path() const {
  return state_->connection.path();
}

bool KernelsDb::read_only() const {
  return state_->read_only;
}

void KernelsDb::put_problem(const ProblemRecord &problem) {
  std::lock_guard lock(state_->connection_mutex);
  WriteTransaction transaction(state_->connection);
  upsert_problem(state_->connection, problem);
  transaction.commit();
}

void KernelsDb::put_binary(const BinaryRecord &binary) {
  std::lock_guard lock(state_->connection_mutex);
  WriteTransaction transaction(state_->connection);
  upsert_binary(state_->connection, binary, state_->trust_key());
  transaction.commit();
  state_->cache.clear();
}

bool KernelsDb::link_binary(const ProblemRecord &problem, const BinaryKey &key,
                            const std::string &kernel_identity) {
  std::lock_guard lock(state_->connection_mutex);
  WriteTransaction transaction(state_->connection);
  upsert_problem(state_->connection, problem);
  const bool linked = kernels_db::link_binary(state_->connection, key, kernel_identity);
  transaction.commit();
  state_->cache.clear();
  return linked;
}

bool KernelsDb::delete_binary(const BinaryKey &key) {
  std::lock_guard lock(state_->connection_mutex);
  WriteTransaction transaction(state_->connection);
  const bool deleted = kernels_db::delete_binary(state_->connection, key);
  transaction.commit();
  state_->cache.clear();
  return deleted;
}

bool KernelsDb::put_result(const ResultRecord &result) {
  std::lock_guard lock(state_->connection_mutex);
  WriteTransaction transaction(state_->connection);
  const bool added = insert_result(state_->connection, result);
  transaction.commit();
  if (added)
    state_->cache.clear(); // the best config of config-less lookups may change
  return added;
}

void KernelsDb::put_dispatch_table(const DispatchTable &table) {
  std::lock_guard lock(state_->connection_mutex);
  WriteTransaction transaction(state_->connection);
  replace_dispatch_table(state_->connection, table);
  transaction.commit(); // binary lookups do not depend on dispatch tables: the cache stays
}

void KernelsDb::put_calibration(const CalibrationRecord &calibration) {
  std::lock_guard lock(state_->connection_mutex);
  WriteTransaction transaction(state_->connection);
  kernels_db::put_calibration(state_->connection, calibration);
  transaction.commit(); // binary lookups do not depend on calibrations: the cache stays
}

std::vector<StoredCalibration> KernelsDb::calibrations() {
  std::lock_guard lock(state_->connection_mutex);
  ReadTransaction snapshot(state_->connection);
  return all_calibrations(state_->connection);
}

std::optional<ProblemRecord> KernelsDb::find_problem(std::string_view key_text) {
  std::lock_guard lock(state_->connection_mutex);
  return kernels_db::find_problem(state_->connection, key_text);
}

BinaryLookup KernelsDb::find_binary(const BinaryQuery &query) {
  BinaryLookup lookup;
  if (auto cached = state_->cache.find(query)) {
    lookup.status = LookupStatus::hit;
    lookup.binary = std::move(cached);
    return lookup;
  }
  bool damaged = false;
  const std::string &trust_key = state_->trust_key();
  {
    std::lock_guard lock(state_->connection_mutex);
    if (!state_->key.warning.empty() && !state_->key_warning_reported) {
      state_->key_warning_reported = true;
      lookup.warnings.push_back(state_->key.warning + "; until then every stored kernel is "
                                                      "rebuilt before use");
    }
    visit_binary_candidates(
        state_->connection, query,
        [&](BinaryRecord &&binary) {
          if (sha256_hex(binary.cubin) != binary.cubin_sha256) {
            damaged = true;
            lookup.warnings.push_back(
                "ignored a damaged binary (cubin sha256 mismatch) of '" + binary.key.problem_key +
                "' config " + binary.key.config_json + " " + binary.key.arch + " in " +
                state_->connection.path() + "; rebuild it and store it again");
            return false;
          }
          lookup.binary = std::make_shared<const BinaryRecord>(std::move(binary));
          return true;
        },
        trust_key);
    // Filled under the connection lock, which every write holds while it clears the cache: a
    // write between this read and the insert would otherwise leave a stale entry behind (a
    // config-less lookup kept returning the previous best config).
    if (lookup.binary && !damaged)
      state_->cache.insert(query, lookup.binary);
  }
  if (lookup.binary) {
    lookup.status = LookupStatus::hit;
  } else {
    lookup.status = damaged ? LookupStatus::corrupt : LookupStatus::miss;
  }
  return lookup;
}

std::optional<ResultRecord> KernelsDb::best_result(std::string_view problem_key,
                                                   std::string_view arch,
                                                   std::optional<std::string_view> device,
                                                   const DecisionRules &rules) {
  std::lock_guard lock(state_->connection_mutex);
  return kernels_db::best_result(state_->connection, problem_key, arch, device, rules);
}

std::vector<ResultRecord> KernelsDb::results(std::string_view problem_key) {
  std::lock_guard lock(state_->connection_mutex);
  return ranked_results(state_->connection, problem_key);
}

std::optional<DispatchTable>
KernelsDb::find_dispatch_table(std::string_view problem_key, std::string_view arch,
                               std::optional<std::string_view> tuner_version) {
  std::lock_guard lock(state_->connection_mutex);
  ReadTransaction snapshot(state_->connection); // the table row and its entries together
  return kernels_db::find_dispatch_table(state_->connection, problem_key, arch, tuner_version);
}

std::optional<DispatchTable> KernelsDb::decided_dispatch_table(std::string_view problem_key,
                                                               std::string_view arch,
                                                               const DecisionRules &rules,
                                                               std::vector<std::string> *ignored) {
  std::lock_guard lock(state_->connection_mutex);
  ReadTransaction snapshot(state_->connection);
  return kernels_db::decided_dispatch_table(state_->connection, problem_key, arch, rules, ignored);
}

std::vector<DispatchTable> KernelsDb::decided_dispatch_tables_of_op(std::string_view op,
                                                                    std::string_view arch,
                                                                    const DecisionRules &rules) {
  std::lock_guard lock(state_->connection_mutex);
  ReadTransaction snapshot(state_->connection);
  return kernels_db::decided_dispatch_tables_of_op(state_->connection, op, arch, rules);
}

std::vector<DispatchTable> KernelsDb::dispatch_tables(std::string_view problem_key) {
  std::lock_guard lock(state_->connection_mutex);
  ReadTransaction snapshot(state_->connection);
  return list_dispatch_tables(state_->connection, problem_key);
}

std::vector<ProblemSummary> KernelsDb::list(const ListFilter &filter) {
  std::lock_guard lock(state_->connection_mutex);
  return list_problems(state_->connection, filter);
}

std::vector<ProblemDetails> KernelsDb::show(std::string_view key_or_hash) {
  std::lock_guard lock(state_->connection_mutex);
  return show_problems(state_->connection, key_or_hash);
}

DbStats KernelsDb::stats(const CurrentVersions &current) {
  std::lock_guard lock(state_->connection_mutex);
  return compute_stats(state_->connection, current);
}

PrunePreview KernelsDb::preview_prune(const PruneOptions &options) {
  std::lock_guard lock(state_->connection_mutex);
  return kernels_db::preview_prune(state_->connection, options);
}

PruneReport KernelsDb::prune(const PruneOptions &options) {
  std::lock_guard lock(state_->connection_mutex);
  const PruneReport report = kernels_db::prune(state_->connection, options);
  state_->cache.clear();
  return report;
}

TransferCounts KernelsDb::export_jsonl(std::ostream &out) {
  std::lock_guard lock(state_->connection_mutex);
  return kernels_db::export_jsonl(state_->connection, out);
}

TransferCounts KernelsDb::import_jsonl(std::istream &in, const DecisionRules &rules) {
  std::lock_guard lock(state_->connection_mutex);
  const TransferCounts counts = kernels_db::import_jsonl(state_->connection, in, with_clock(rules));
  state_->cache.clear();
  return counts;
}

TransferCounts KernelsDb::merge(const std::filesystem::path &other, const DecisionRules &rules) {
  std::lock_guard lock(state_->connection_mutex);
  const TransferCounts counts = merge_database(state_->connection, other, with_clock(rules));
  state_->cache.clear();
  return counts;
}

VacuumReport KernelsDb::vacuum() {
  std::lock_guard lock(state_->connection_mutex);
  return kernels_db::vacuum(state_->connection);
}

CheckReport KernelsDb::check(const std::filesystem::path &path, bool full,
                             const DecisionRules &rules) {
  return check_database(path, full, with_clock(rules));
}

void KernelsDb::clear_cache() {
  state_->cache.clear();
}

} // namespace tcjit::kernels_db
