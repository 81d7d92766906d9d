// Which tuned decision serves a problem: the lookup rules of docs/tuner.md ("Which decision serves
// a spec"), in one place for tcjit::Runtime::prepare, `tcjit run` (both through chosen_configs.h)
// and `tcjit resolve`.
//
// A kernel family is every problem whose key (compiler/spec/problem_key.h) is the same but for
// its sizes: a GEMM's m, n, k and batch, a convolution's batch n. Everything else — dtypes,
// layouts, epilogue, math (tf32 resolved), the alignment the spec implies and the arch — is part
// of the family key. One kernel (one identity) runs every size of a family, so a config tuned for
// some sizes serves the others: a problem without a decision of its own takes one from a tuned
// dispatch table of its family. No schema change: the family key is computed from the stored key
// texts (KernelsDb::decided_dispatch_tables_of_op).
#pragma once

#include "kernels_db/dispatch.h"
#include "kernels_db/kernels_db.h"
#include "tcjit/op_spec.h"
#include "tuner/decision.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tcjit::tuner {

// The key text with every size a family leaves free written `NAME=*` (gemm m, n, k, batch; a
// convolution's n): "gemm m=* n=* k=* batch=* a=f16:row ... align=a8,b8,c8 arch=sm_80".
std::string family_key(std::string_view key_text);

// One free size of a key as a closed interval: `37` is [37, 37], `1..256` [1, 256], `?`
// [1, INT64_MAX].
struct SizeInterval {
  int64_t lo = 1;
  int64_t hi = 1;
};

// The free sizes of a key, by name ("m", "n", "k", "batch"; a convolution's "n"), in key order.
std::vector<std::pair<std::string, SizeInterval>> family_sizes(std::string_view key_text);

// `spec` with its free sizes set to those of `key_text` (a key of the same family).
OpSpec with_family_sizes(const OpSpec &spec, std::string_view key_text);

// The dispatch table that serves a problem on `arch`:
//   1. its own decided table (KernelsDb::decided_dispatch_table);
//   2. else the decided table of another problem of its family, the first by:
//      a. whose sizes contain the problem's (every free size inside the table problem's),
//      b. then the nearest (sum over the free sizes of the log2 gap between the two intervals;
//         0 where they overlap),
//      c. then the widest (a range's table before a single size's),
//      d. then the most recent.
struct ServingTable {
  kernels_db::DispatchTable table; // table.problem_key: the problem tuned
  bool own = true;                 // false: a table of the family
};
std::optional<ServingTable>
serving_dispatch_table(kernels_db::KernelsDb &db, std::string_view key_text, std::string_view arch);

// The entry of `table` that serves `sizes`: the one whose bucket holds them, else the nearest
// bucket (sum over the bucket's dimensions of the log2 gap). `table` must be valid.
const kernels_db::DispatchEntry &serving_entry(const kernels_db::DispatchIndex &table,
                                               const kernels_db::DispatchSizes &sizes);

// The decision that serves a problem at `sizes`:
//   1. its own decision (decide(): its dispatch table's entry, else its fastest measured result);
//   2. else the family's table (serving_dispatch_table) at its entry for `sizes` (serving_entry).
struct ServingDecision {
  Decision decision;
  std::string problem_key; // the problem decided for (another one's for a family decision)
  bool family = false;
};
std::optional<ServingDecision> serving_decision(kernels_db::KernelsDb &db,
                                                std::string_view key_text, std::string_view arch,
                                                const kernels_db::DispatchSizes &sizes);

} // namespace tcjit::tuner
