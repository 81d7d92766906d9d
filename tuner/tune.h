// The tune driver: one problem, one space, one strategy, one measurer, the kernel database.
//
//   space      enumerate_space()          every legal config, and the pruned ones with reasons
//   rank       predict_config()           the model's static prediction of each legal config
//   order      make_strategy()            which to measure next
//   build      build_candidate()          on `jobs` threads, ahead of the measurer
//   measure    Measurer::measure()        one at a time, on the calling thread
//   record     KernelsDb::put_result()    every outcome, failures with their reason, at once
//   finish     KernelsDb::put_binary()    the winner's kernel, then put_dispatch_table(): one
//                                         bucket holding every size, which marks the problem
//                                         tuned for this tuner version
//
// Never loses work: each outcome is stored as soon as it is known, keyed by the config's value; a
// later run with the same tuner version skips the configs already stored and the problems already
// finished. Stopping (the `stop` flag, e.g. from SIGINT) ends after the candidate being measured,
// leaving the database consistent.
//
// Concurrent tunes of one database (`claims`, tune_claims.h): a problem is tuned under a claim
// taken before anything is read, held until its decision is stored and released however the
// process ends. A problem another process holds is left (claimed_elsewhere) for the caller to come
// back to with wait_for_claim, and then found tuned (tuned_elsewhere) or resumed where that
// process stopped, never measured twice.
#pragma once

#include "compiler/codegen/plan/tile_config.h"
#include "kernels_db/kernels_db.h"
#include "tuner/measure.h"
#include "tuner/perf_model.h"
#include "tuner/search_space.h"
#include "tuner/strategy.h"
#include "tuner/tune_claims.h"

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tcjit::tuner {

// A tuning budget: at most `candidates` measured configs and `seconds` of wall time per problem;
// 0 = no limit of that kind.
struct Budget {
  size_t candidates = 0;
  double seconds = 0;
};
// "200" (candidates), "90s", "10m", "2h" (time). false and `error` set for anything else.
bool parse_budget(std::string_view text, Budget &out, std::string &error);

struct TuneProgress {
  size_t done = 0;    // candidates measured (or failed) so far, this run and reused
  size_t planned = 0; // what the budget and the space allow
  size_t failed = 0;
  std::optional<codegen::TileConfig> best;
  double best_seconds = 0;
  double elapsed_seconds = 0;
};

struct TuneOptions {
  StrategyKind strategy = StrategyKind::model_topk;
  uint64_t seed = 1;
  Budget budget{100, 0};
  int jobs = 0;                  // build threads; 0 = all cores
  Measurer *measurer = nullptr;  // required
  const GpuModel *gpu = nullptr; // for the space and the ranking; null: the arch's model
  const std::atomic<bool> *stop = nullptr;
  bool retune = false; // go on past a finished tune (its results are still reused)
  // The values each field takes (default: the full space, search_space.h); the task's vector
  // caps still apply.
  std::optional<SpaceOptions> space;
  std::function<void(const TuneProgress &)> on_progress; // after each candidate
  // A claim per problem in this directory (null: none, as with a database of one tuner).
  const ClaimDir *claims = nullptr;
  // A problem claimed by another process: false = leave it (claimed_elsewhere), true = wait for
  // the claim (stop still stops the wait).
  bool wait_for_claim = false;
  // When the run began (Unix ms; 0 = unknown). With `retune`, a decision stored at or after it
  // (by a concurrent tune of the same problem) is kept: the problem counts as retuned by it.
  int64_t run_started_ms = 0;
};

struct CandidateOutcome {
  codegen::TileConfig config;
  Measurement measurement;
  bool reused = false; // read from the database (an earlier run), not measured now
  double build_ms = 0;
};

struct TuneResult {
  bool already_tuned = false; // a finished tune with this tuner version was found: nothing run
  bool interrupted = false;   // stopped by the flag before the strategy or budget ended
  // Another process holds the problem's claim (wait_for_claim false): nothing was read or run.
  bool claimed_elsewhere = false;
  std::string claim_holder; // claimed_elsewhere: its pid, when known
  // already_tuned by a decision stored since run_started_ms: by another process (one whose claim
  // this run found held), unless this run tuned the same problem before (the caller knows).
  bool tuned_elsewhere = false;
  // already_tuned, but the decided config's kernel was not stored for this toolkit and compiler
  // (pruned, or built by another version): built and stored now, so that it is served again.
  bool kernel_rebuilt = false;
  std::string claim_note; // the claim could not be taken (why): the problem was tuned unclaimed
  std::optional<codegen::TileConfig> best;
  Measurement best_measurement;
  size_t space_size = 0, pruned = 0;
  size_t measured = 0, reused = 0, failed = 0;
  // Not built: estimated to need at least as many registers as a candidate that spilled.
  size_t skipped = 0;
  std::vector<CandidateOutcome> outcomes;
  std::string pruned_summary;
  std::string tuner_version; // what the results are stored under
  double seconds = 0;
};

// Stores `built` (usable) as the problem's kernel for its config, as the runtime looks it up.
void store_binary(kernels_db::KernelsDb &db, const TuneTask &task, const BuiltCandidate &built);

// The tuner version results are stored under: the tuner's format, the code generator's version and
// the measurer ("tcjit-tuner 1 / 0.1.0+abc123 / model a100-v2").
std::string tuner_version(const Measurer &measurer);

// Tunes one problem. `db` may be null (nothing stored, nothing resumed). Throws
// kernels_db::DbError when the database fails and std::invalid_argument for a task the code
// generator cannot compile (the message says why).
TuneResult tune_problem(const TuneTask &task, const TuneOptions &options,
                        kernels_db::KernelsDb *db);

// The problems (indices into a workload of `count`) that shard `index` of `shards` tunes:
// contiguous slices whose union is every index exactly once. Throws std::invalid_argument unless
// 0 <= index < shards.
std::vector<size_t> shard_indices(size_t count, size_t index, size_t shards);

} // namespace tcjit::tuner
