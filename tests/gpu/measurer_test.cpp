// The CUDA measurer on a real GPU: one GEMM candidate built for the device's arch (code generator
// + ptxas cubin), its output checked against the CPU reference, then timed with CUDA events with
// the L2 flushed: finite times, `measured` provenance naming the GPU and its driver.
#include "gpu_test.h"

#include "compiler/codegen/plan/tile_config.h"
#include "compiler/dsl/parser.h"
#include "compiler/spec/problem_key.h"
#include "tuner/candidate.h"
#include "tuner/measure_cuda.h"

#include <cmath>

namespace tcjit::gpu_test {
namespace {

namespace kdb = kernels_db;

tuner::TuneTask task_for(const std::string &text, const std::string &arch) {
  const ParseResult parsed = parse_spec(text);
  EXPECT_TRUE(parsed.ok() && parsed.entries.size() == 1) << text;
  tuner::TuneTask task;
  task.spec = parsed.entries.front().spec;
  task.arch = arch;
  task.key = make_problem_key(task.spec, arch, false);
  return task;
}

TEST_F(Gpu, TheCudaMeasurerChecksAndTimesAGemm) {
  cuda::CudaDevice gpu;
  const std::string arch = "sm_" + std::to_string(gpu.info().sm_arch);
  const tuner::TuneTask task =
      task_for("gemm m=1024 n=1024 k=1024 a=f16:row b=f16:col c=f16:row acc=f32", arch);
  codegen::TileConfig config;
  std::string error;
  ASSERT_TRUE(codegen::parse_tile_config("128x128x32 w64x64 s3", config, error)) << error;
  const tuner::BuiltCandidate built = tuner::build_candidate(task.spec, config, arch, false);
  ASSERT_TRUE(built.usable()) << built.failure_rule << ": " << built.failure;
  EXPECT_FALSE(built.cubin.cubin.empty()) << "ptxas built the cubin for " << arch;

  tuner::CudaMeasureOptions options;
  options.min_reps = 20;
  const auto measurer = tuner::make_cuda_measurer(gpu, options);
  const tuner::Measurement m = measurer->measure(task, built.config, &built);
  ASSERT_EQ(m.status, kdb::ResultStatus::ok) << m.message;
  EXPECT_EQ(m.provenance.kind, kdb::ProvenanceKind::measured);
  EXPECT_EQ(m.provenance.device, gpu.info().name);
  EXPECT_EQ(m.provenance.driver.rfind("CUDA ", 0), 0u) << m.provenance.driver;
  ASSERT_TRUE(m.timing);
  EXPECT_TRUE(std::isfinite(m.timing->median_us) && m.timing->median_us > 0) << m.timing->median_us;
  EXPECT_LE(m.timing->min_us, m.timing->median_us);
  EXPECT_LE(m.timing->median_us, m.timing->max_us);
  EXPECT_TRUE(std::isfinite(m.timing->stddev_us) && m.timing->stddev_us >= 0);
  ASSERT_TRUE(m.tflops);
  EXPECT_TRUE(std::isfinite(*m.tflops) && *m.tflops > 0) << *m.tflops;
  EXPECT_NE(m.message.find("L2 flushed"), std::string::npos) << m.message;
  EXPECT_EQ(m.message.find("emulator"), std::string::npos) << m.message;
}

// A candidate compiled with an activation the task does not have computes other values: the
// measurer's check against the reference refuses it on the GPU too.
TEST_F(Gpu, TheCudaMeasurerRefusesAWrongResult) {
  cuda::CudaDevice gpu;
  const std::string arch = "sm_" + std::to_string(gpu.info().sm_arch);
  const std::string spec = "gemm m=256 n=256 k=256 a=f16:row b=f16:col c=f16:row acc=f32";
  const tuner::TuneTask task = task_for(spec, arch);
  const tuner::TuneTask relu = task_for(spec + " act=relu", arch);
  codegen::TileConfig config;
  std::string error;
  ASSERT_TRUE(codegen::parse_tile_config("64x64x32 w32x32 s3", config, error)) << error;
  const tuner::BuiltCandidate built = tuner::build_candidate(relu.spec, config, arch, false);
  ASSERT_TRUE(built.usable()) << built.failure;
  const auto measurer = tuner::make_cuda_measurer(gpu);
  const tuner::Measurement m = measurer->measure(task, built.config, &built);
  EXPECT_EQ(m.status, kdb::ResultStatus::failed);
  EXPECT_EQ(m.message.rfind("wrong result against the CPU reference: ", 0), 0u) << m.message;
}

} // namespace
} // namespace tcjit::gpu_test
