// Which config serves a spec: what a finished tune decided, else what was measured or built
// before, else the default chooser's (heuristic.h), then the code generator's defaults; and the
// kernel cache's lookup (engine/kernel_cache.h) with those configs.
#pragma once

#include "engine/kernel_cache.h"

#include <string>
#include <vector>

namespace tcjit::tuner {

// The configs engine::find_or_compile_kernel tries without a requested one, best first: the
// decision that serves the problem (size_family.h serving_decision: its own tune's dispatch table
// entry of the spec's sizes, else its fastest config measured on a GPU, else the dispatch table
// of its kernel family), else the kernel built last for the problem; then the default chooser's
// (heuristic.h), then the code generator's defaults. `note` is set to "tuned (KIND...)" when the
// first is a tuned one. A family's stored kernels are found by their kernel identity
// (engine::find_or_compile_kernel).
std::vector<codegen::TileConfig> chosen_configs(const OpSpec &spec, const ProblemKey &key,
                                                const engine::KernelRequest &request,
                                                kernels_db::KernelsDb *db, std::string &note);

// engine::find_or_compile_kernel with request.chosen set to chosen_configs() (and its note) unless
// the request names a config or brings its own list.
engine::ServedKernel serve_kernel(const OpSpec &spec, const ProblemKey &key,
                                  engine::KernelRequest request, kernels_db::KernelsDb *db);

} // namespace tcjit::tuner
