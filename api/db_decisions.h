// What `tcjit db` says a run uses: the decision of a stored problem (tuner::decide with the
// problem's own sizes, as tuner::chosen_configs asks it), every config a decision names, whether
// their kernels are stored, and the texts the tool prints for configs and buckets.
#pragma once

#include "kernels_db/kernels_db.h"
#include "tcjit/db.hpp"

#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace tcjit::api {

// The stored problem's spec, when its text parses (act=custom specs are stored by digest: no).
std::optional<OpSpec> stored_spec(const kernels_db::ProblemRecord &problem);

// A stored config as `tcjit run` prints it ("64x64x32 w32x32 s3 k1 g1 va8 vb8"); the stored text
// when it is not a config this build reads.
std::string config_text(const std::string &config_json);

// A dispatch bucket as text: "m=1..16 n=4096", "all sizes"; the stored text when it is malformed.
std::string bucket_text(const std::string &dims_json);

// The decision for `problem` on `arch`: what a run of its spec uses (the decided dispatch table's
// bucket of the spec's sizes, nominal ones for a range, else the fastest plausible measured
// result); nullopt when untuned.
std::optional<DbDecision> decision_of(kernels_db::KernelsDb &db,
                                      const kernels_db::ProblemRecord &problem,
                                      const std::string &arch);

// Every config the decision of `problem` on `arch` names (each bucket of a decided dispatch table,
// else the fastest measured result's), canonical JSON, without repeats.
std::vector<std::string> decided_configs(kernels_db::KernelsDb &db,
                                         const kernels_db::ProblemRecord &problem,
                                         const std::string &arch);

// Binaries by (problem key, arch, stored config JSON).
using BinarySet = std::set<std::tuple<std::string, std::string, std::string>>;

// Whether a binary of the config, of `versions` (the llvm backend's: what a run looks up), is
// stored and not one of `removed` (binaries a prune would remove).
bool kernel_stored(kernels_db::KernelsDb &db, const kernels_db::ProblemRecord &problem,
                   const std::string &arch, const std::string &config_json,
                   const DbVersions &versions, const BinarySet &removed = {});

// The decided configs whose kernel is not stored (kernel_stored), of every problem but the keys in
// `skipped` (problems a prune would remove, decisions and all).
std::vector<DbKernelMissing> missing_kernels(kernels_db::KernelsDb &db, const DbVersions &versions,
                                             const BinarySet &removed = {},
                                             const std::set<std::string> &skipped = {});

} // namespace tcjit::api
