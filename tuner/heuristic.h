// The default chooser: what the runtime compiles on a cache miss when nothing was tuned. It is the
// cost model's best legal configs of a small space (heuristic_space_options), so that no default
// wastes most of a wave or leaves split-K out of a long thin problem; the runtime compiles them in
// order until one's cubin neither spills nor needs a stack frame.
#pragma once

#include "compiler/codegen/plan/tile_config.h"
#include "tcjit/op_spec.h"

#include <string_view>
#include <vector>

namespace tcjit::tuner {

// At most `count` configs, best predicted first, each valid for the spec. Empty when the spec is
// not supported by the code generator (check_codegen_support says why).
std::vector<codegen::TileConfig> heuristic_configs(const OpSpec &spec, std::string_view arch,
                                                   bool tf32_off, size_t count = 4);

} // namespace tcjit::tuner
