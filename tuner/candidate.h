// Building one candidate: the config compiled by the code generator, then by ptxas into the cubin
// that would be shipped (engine/cubin_build.h), with that compile's resources. Thread-safe
// (compile_gemm and ptxas runs are independent), so the tuner builds candidates on all cores at
// once.
#pragma once

#include "compiler/codegen/pipeline.h"
#include "engine/cubin_build.h"
#include "tcjit/op_spec.h"
#include "tuner/cost_model.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tcjit::tuner {

struct BuiltCandidate {
  codegen::TileConfig config;     // resolved
  codegen::CompiledKernel kernel; // ok() unless failure is "compile"
  engine::CubinBuild cubin;
  CandidateFacts facts; // registers, spills, stack from the cubin's compile
  double build_ms = 0;  // code generator + ptxas
  // Why the candidate cannot be used: "" when it can; else a rule ("compile", "ptxas", "spills")
  // and the sentence. A candidate that spills or needs a stack frame is never chosen.
  std::string failure_rule;
  std::string failure;
  bool usable() const { return failure_rule.empty(); }
};

BuiltCandidate build_candidate(const OpSpec &spec, const codegen::TileConfig &config,
                               std::string_view arch, bool tf32_off,
                               codegen::Backend backend = codegen::Backend::llvm);

} // namespace tcjit::tuner
