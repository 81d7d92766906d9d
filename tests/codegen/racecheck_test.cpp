// The emulator's shared-memory race detector (racecheck) on generated kernels: silent on a tiled
// GEMM as generated (every emulator test runs with it on), and catching the race of the same
// kernel with a barrier of its main loop, or the one before its shared-memory epilogue, removed.
#include "compiler/codegen/pipeline.h"
#include "compiler/dsl/parser.h"
#include "engine/verify_kernel.h"
#include "runtime/device/device.h"
#include "runtime/device_factory.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

namespace tcjit {
namespace {

// The PTX with the `index`-th `bar.sync` line removed.
std::string without_barrier(const std::string &ptx, int index) {
  size_t pos = 0;
  for (int i = 0;; ++i) {
    pos = ptx.find("bar.sync", pos);
    if (pos == std::string::npos)
      return "";
    if (i == index) {
      const size_t begin = ptx.rfind('\n', pos) + 1, end = ptx.find('\n', pos);
      return ptx.substr(0, begin) + ptx.substr(end + 1);
    }
    pos += 8;
  }
}

std::string run_error(device::Device &dev, const codegen::CompiledKernel &kernel,
                      const OpSpec &spec) {
  try {
    const engine::KernelCheck check = engine::run_and_check_kernel(dev, kernel, spec, 1);
    return check.report.ok() ? "" : "wrong result: " + check.report.summary();
  } catch (const device::DeviceError &e) {
    return e.what();
  }
}

TEST(Racecheck, ARemovedBarrierOfATiledGemmIsCaught) {
  const OpSpec spec =
      parse_spec("gemm m=128 n=128 k=256 a=f16 b=f16:col c=f16 acc=f32").entries.front().spec;
  codegen::CompileOptions options;
  codegen::TileConfig config;
  std::string error;
  ASSERT_TRUE(codegen::parse_tile_config("64x64x32 w32x32 s3 va8 vb8", config, error)) << error;
  options.config = config;
  const codegen::CompiledKernel kernel = codegen::compile_gemm(spec, options);
  ASSERT_TRUE(kernel.ok());
  setenv("TCJIT_EMU_RACECHECK", "all", 1); // every block, not the default sample
  auto dev = device::open_device("emu");
  EXPECT_EQ(run_error(*dev, kernel, spec), ""); // as generated: no race, right result
  int races = 0;
  for (int i = 0;; ++i) {
    codegen::CompiledKernel broken = kernel;
    broken.ptx = without_barrier(kernel.ptx, i);
    if (broken.ptx.empty())
      break;
    const std::string what = run_error(*dev, broken, spec);
    SCOPED_TRACE("bar.sync #" + std::to_string(i) + " removed");
    // Every barrier is needed, and its absence is a race on the shared tiles: a thread's ldmatrix
    // of another's cp.async data, or a cp.async over a tile another warp still reads.
    EXPECT_NE(what.find("shared-memory race (racecheck)"), std::string::npos) << what;
    ++races;
  }
  EXPECT_EQ(races, 4); // 3 in the main loop (unrolled by the stages), 1 before the epilogue
}

} // namespace
} // namespace tcjit
