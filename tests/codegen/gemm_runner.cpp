#include "gemm_runner.h"

#include "compiler/dsl/parser.h"
#include "engine/verify_kernel.h"
#include "runtime/emu/emu_device.h"

#include <gtest/gtest.h>

#include <exception>

namespace tcjit::codegen::test {

EmuRun run_on_emulator(const std::string &spec_text, const std::string &config, uint64_t seed) {
  EmuRun run;
  ParseResult parsed = parse_spec(spec_text);
  if (!parsed.ok()) {
    run.error = "bad spec: " + parsed.errors[0].render();
    return run;
  }
  const OpSpec spec = parsed.entries[0].spec;
  CompileOptions opt;
  if (!config.empty()) {
    TileConfig c;
    std::string err;
    if (!parse_tile_config(config, c, err)) {
      run.error = err;
      return run;
    }
    opt.config = c;
  }
  run.kernel = compile_gemm(spec, opt);
  if (!run.kernel.ok()) {
    run.error = "compile: " + run.kernel.errors[0].field + ": " + run.kernel.errors[0].message;
    return run;
  }
  try {
    emu::EmuDevice dev;
    const engine::KernelCheck check = engine::run_and_check_kernel(dev, run.kernel, spec, seed);
    run.report = check.report;
    run.counters = check.counters.value_or(emu::LaunchCounters{});
  } catch (const std::exception &e) {
    run.error = std::string("emulator: ") + e.what();
  }
  return run;
}

EmuRun expect_matches(const std::string &spec_text, const std::string &config) {
  SCOPED_TRACE(spec_text + (config.empty() ? "" : " [" + config + "]"));
  EmuRun r = run_on_emulator(spec_text, config);
  EXPECT_EQ(r.error, "");
  EXPECT_GT(r.report.count, 0);
  EXPECT_TRUE(r.report.ok()) << r.report.summary();
  return r;
}

} // namespace tcjit::codegen::test
