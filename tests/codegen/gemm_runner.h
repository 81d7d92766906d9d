// Test helper: compile a GEMM spec, run it on the PTX emulator with random inputs, compare with
// the CPU reference (compiler/reference) under the documented tolerance model.
#pragma once

#include "compiler/codegen/pipeline.h"
#include "compiler/reference/tolerance.h"
#include "runtime/emu/counters.h"

#include <optional>
#include <string>

namespace tcjit::codegen::test {

struct EmuRun {
  std::string error;    // compile/launch failure ("" when it ran)
  CompareReport report; // against the reference
  emu::LaunchCounters counters;
  CompiledKernel kernel;
  bool ok() const { return error.empty() && report.ok(); }
};

// `config`: parse_tile_config() text over the defaults, or "" for default_tile_config().
EmuRun run_on_emulator(const std::string &spec_text, const std::string &config = "",
                       uint64_t seed = 1);

// run_on_emulator() with GoogleTest expectations: it ran, compared elements, and every one is
// within the tolerance (failures name the spec and config).
EmuRun expect_matches(const std::string &spec_text, const std::string &config = "");

} // namespace tcjit::codegen::test
