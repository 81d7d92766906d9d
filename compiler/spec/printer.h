// OpSpec -> canonical DSL text. The canonical form is hashed into cache keys: it must stay stable
// (docs/dsl.md, "Canonical form"), and parse(print(spec)) == spec for every valid spec.
#pragma once

#include "tcjit/op_spec.h"

#include <string>

namespace tcjit {

// Every key in a fixed order with every default explicit, e.g.
// "gemm m=4096 n=4096 k=4096 batch=1 a=f16:row b=f16:col c=f16:row acc=f32 alpha=1 beta=0
//  bias=none act=none" (one line). lda/ldb/ldc appear only when set; math only when the
// multiplied inputs are f32 or tf32.
std::string print_spec(const OpSpec &);

// "name: <spec> weight=N": the name only when set, the weight only when it is not 1.
std::string print_entry(const WorkloadEntry &);

} // namespace tcjit
