// The CUDA measurer: its factory without a driver, its answers for unusable candidates, the whole
// measurement (check, warm-up, timed repetitions, statistics) on the emulator, and the provenance
// and checks on a fake libcuda (tests/cuda/fake_libcuda.cpp, whose launches compute nothing).
#include "compiler/codegen/pipeline.h"
#include "compiler/dsl/parser.h"
#include "compiler/reference/random_fill.h"
#include "compiler/spec/problem_key.h"
#include "engine/kernel_launch.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/device_factory.h"
#include "tuner/measure_cuda.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

namespace tcjit::tuner {
namespace {

namespace kdb = kernels_db;

constexpr const char *kSpec = "gemm m=40 n=24 k=32 a=f16:row b=f16:col c=f16:row acc=f32";

TuneTask make_task(const std::string &text, const std::string &arch) {
  const ParseResult parsed = parse_spec(text);
  EXPECT_TRUE(parsed.ok() && parsed.entries.size() == 1) << text;
  TuneTask task;
  task.spec = parsed.entries.front().spec;
  task.arch = arch;
  task.key = make_problem_key(task.spec, arch, false);
  return task;
}

codegen::TileConfig small_config(int split_k = 1) {
  codegen::TileConfig c;
  c.split_k = split_k;
  c.bm = 32;
  c.bn = 32;
  c.bk = 32;
  c.wm = 32;
  c.wn = 32;
  c.stages = 2;
  return c;
}

// A candidate as build_candidate would give it, without the ptxas cubin (the devices here compile
// the PTX themselves).
BuiltCandidate built_from(const std::string &spec_text, const std::string &arch, int split_k = 1) {
  const TuneTask compiled_for = make_task(spec_text, arch);
  codegen::CompileOptions options;
  options.arch = arch;
  options.config = small_config(split_k);
  BuiltCandidate built;
  built.kernel = codegen::compile_gemm(compiled_for.spec, options);
  EXPECT_TRUE(built.kernel.ok());
  built.config = built.kernel.config;
  return built;
}

CudaMeasureOptions quick_options() {
  CudaMeasureOptions options;
  options.warmup = 1;
  options.min_reps = 3;
  options.max_reps = 4;
  options.spread = 0.5;
  return options;
}

TEST(CudaMeasurer, OpeningTheCudaDeviceWithoutADriverFailsClearly) {
  if (cuda::cuda_device_available())
    GTEST_SKIP() << "this machine has a CUDA driver and a device";
  try {
    device::open_device("cuda");
    FAIL() << "open_device(\"cuda\") succeeded without a driver";
  } catch (const device::DeviceError &error) {
    EXPECT_EQ(error.kind(), device::ErrorKind::Unsupported);
    const std::string message = error.what();
    EXPECT_EQ(message, cuda::cuda_unavailable_reason());
    EXPECT_NE(message.find("use --device emu"), std::string::npos) << message;
  }
}

TEST(CudaMeasurer, OptionsAreChecked) {
  const auto emu = device::make_emulator_device();
  CudaMeasureOptions options;
  options.min_reps = 0;
  EXPECT_THROW(make_cuda_measurer(*emu, options), std::invalid_argument);
  options = {};
  options.max_reps = options.min_reps - 1;
  EXPECT_THROW(make_cuda_measurer(*emu, options), std::invalid_argument);
  options = {};
  options.warmup = -1;
  EXPECT_THROW(make_cuda_measurer(*emu, options), std::invalid_argument);
  options = {};
  options.spread = -0.1;
  EXPECT_THROW(make_cuda_measurer(*emu, options), std::invalid_argument);
  EXPECT_NO_THROW(make_cuda_measurer(*emu, {}));
}

TEST(CudaMeasurer, UnusableCandidatesAreFailedMeasurements) {
  const auto emu = device::make_emulator_device();
  const auto measurer = make_cuda_measurer(*emu, quick_options());
  EXPECT_EQ(measurer->name(), "cuda");
  EXPECT_TRUE(measurer->needs_build());
  const TuneTask task = make_task(kSpec, "sm_80");

  Measurement m = measurer->measure(task, small_config(), nullptr);
  EXPECT_EQ(m.status, kdb::ResultStatus::failed);
  EXPECT_NE(m.message.find("needs the built candidate"), std::string::npos) << m.message;

  BuiltCandidate spilling;
  spilling.failure_rule = "spills";
  spilling.failure = "128 bytes of spill stores";
  m = measurer->measure(task, small_config(), &spilling);
  EXPECT_EQ(m.status, kdb::ResultStatus::failed);
  EXPECT_EQ(m.message, "not built (spills): 128 bytes of spill stores");
  EXPECT_FALSE(m.timing);

  const TuneTask symbolic =
      make_task("gemm m=? n=24 k=32 a=f16:row b=f16:col c=f16:row acc=f32", "sm_80");
  BuiltCandidate built = built_from(kSpec, "sm_80");
  m = measurer->measure(symbolic, small_config(), &built);
  EXPECT_EQ(m.status, kdb::ResultStatus::failed);
  EXPECT_NE(m.message.find("symbolic sizes"), std::string::npos) << m.message;
}

TEST(CudaMeasurer, MeasuresOnTheEmulatorWithEmulatedProvenance) {
  const auto emu = device::make_emulator_device();
  const auto measurer = make_cuda_measurer(*emu, quick_options());
  const TuneTask task = make_task(kSpec, "sm_80");
  const BuiltCandidate built = built_from(kSpec, "sm_80");
  const Measurement m = measurer->measure(task, built.config, &built);
  ASSERT_EQ(m.status, kdb::ResultStatus::ok) << m.message;
  EXPECT_EQ(m.provenance.kind, kdb::ProvenanceKind::emulated);
  EXPECT_EQ(m.provenance.device, emu->info().name);
  ASSERT_TRUE(m.timing);
  EXPECT_GT(m.timing->median_us, 0);
  EXPECT_LE(m.timing->min_us, m.timing->median_us);
  EXPECT_LE(m.timing->median_us, m.timing->max_us);
  EXPECT_GE(m.timing->stddev_us, 0);
  ASSERT_TRUE(m.tflops);
  EXPECT_DOUBLE_EQ(*m.tflops, 2.0 * 40 * 24 * 32 / (m.timing->median_us * 1e-6) / 1e12);
  // 3 or 4 repetitions (min_reps, max_reps); never a flush on the emulator
  EXPECT_TRUE(m.message.rfind("3 repetitions after 1 warm-up", 0) == 0 ||
              m.message.rfind("4 repetitions after 1 warm-up", 0) == 0)
      << m.message;
  EXPECT_EQ(m.message.find("flushed"), std::string::npos) << m.message;
  EXPECT_NE(m.message.find("wall clock of the emulator"), std::string::npos) << m.message;
}

// The timed launches (enqueue_kernel, split-K's slices into a caller's workspace) compute what
// launch_kernel does; the measurer times a split-K candidate.
TEST(CudaMeasurer, SplitKIsTimedThroughTheCallersWorkspace) {
  const std::string spec = "gemm m=40 n=24 k=128 a=f16:row b=f16:col c=f16:row acc=f32 beta=1";
  const auto emu = device::make_emulator_device();
  const TuneTask task = make_task(spec, "sm_80");
  const BuiltCandidate built = built_from(spec, "sm_80", 2);
  ASSERT_EQ(built.config.split_k, 2);

  const auto upload = [&](int64_t bytes, uint64_t seed) {
    std::vector<uint16_t> host(static_cast<size_t>(bytes / 2));
    fill_random(DType::f16, host.data(), static_cast<int64_t>(host.size()), seed);
    const device::DevicePtr ptr = emu->allocate(static_cast<size_t>(bytes));
    emu->copy_to_device(ptr, host.data(), static_cast<size_t>(bytes));
    return ptr;
  };
  const engine::OperandPointers launched{upload(40 * 128 * 2, 1), upload(128 * 24 * 2, 2),
                                         upload(40 * 24 * 2, 3), emu->allocate(40 * 24 * 2), 0};
  engine::OperandPointers enqueued = launched;
  enqueued.d = emu->allocate(40 * 24 * 2);
  const engine::LoadedKernel gemm = engine::load_kernel(*emu, built.kernel);
  engine::launch_kernel(*emu, gemm, task.spec, launched);
  const uint64_t workspace_bytes = kernel_workspace_bytes(gemm, task.spec);
  EXPECT_EQ(workspace_bytes, uint64_t{2} * 40 * 24 * 4); // two f32 slices
  const device::DevicePtr workspace = emu->allocate(workspace_bytes);
  engine::enqueue_kernel(*emu, gemm, task.spec, enqueued, workspace);
  emu->synchronize();
  std::vector<uint16_t> by_launch(40 * 24), by_enqueue(40 * 24);
  emu->copy_to_host(by_launch.data(), launched.d, 40 * 24 * 2);
  emu->copy_to_host(by_enqueue.data(), enqueued.d, 40 * 24 * 2);
  EXPECT_EQ(by_launch, by_enqueue);
  EXPECT_NE(by_launch, std::vector<uint16_t>(40 * 24, 0));

  const auto measurer = make_cuda_measurer(*emu, quick_options());
  const Measurement m = measurer->measure(task, built.config, &built);
  EXPECT_EQ(m.status, kdb::ResultStatus::ok) << m.message;
  EXPECT_TRUE(m.timing);
}

// A convolution is checked and timed with its own tensors (x, filter, y), including the
// workspace of channel padding and split-K; its TFLOP/s are the forward convolution's.
TEST(CudaMeasurer, ConvolutionsAreCheckedAndTimedWithTheirTensors) {
  const std::string spec =
      "conv2d n=2 h=6 w=6 c=3 k=16 r=3 s=3 pad=1 x=f16 acc=f32 bias=col act=relu";
  const auto emu = device::make_emulator_device();
  const TuneTask task = make_task(spec, "sm_80");
  codegen::CompileOptions options;
  options.arch = "sm_80";
  codegen::TileConfig config = small_config(2);
  config.pad_c = 8;
  options.config = config;
  BuiltCandidate built;
  built.kernel = codegen::compile_gemm(task.spec, options);
  ASSERT_TRUE(built.kernel.ok());
  built.config = built.kernel.config;
  const auto measurer = make_cuda_measurer(*emu, quick_options());
  const Measurement m = measurer->measure(task, built.config, &built);
  ASSERT_EQ(m.status, kdb::ResultStatus::ok) << m.message;
  ASSERT_TRUE(m.timing && m.tflops);
  EXPECT_DOUBLE_EQ(*m.tflops,
                   2.0 * (2 * 6 * 6) * 16 * (3 * 9) / (m.timing->median_us * 1e-6) / 1e12);
}

TEST(CudaMeasurer, AWrongResultIsAFailedMeasurement) {
  const auto emu = device::make_emulator_device();
  const auto measurer = make_cuda_measurer(*emu, quick_options());
  const TuneTask task = make_task(kSpec, "sm_80");
  // Compiled with a relu the task does not have: negative outputs come out as 0.
  const BuiltCandidate built = built_from(std::string(kSpec) + " act=relu", "sm_80");
  const Measurement m = measurer->measure(task, built.config, &built);
  EXPECT_EQ(m.status, kdb::ResultStatus::failed);
  EXPECT_EQ(m.message.rfind("wrong result against the CPU reference: ", 0), 0u) << m.message;
  EXPECT_FALSE(m.timing);
}

TEST(CudaMeasurer, TheDefaultTimingOfADeviceIsTheWallClockOfTheWork) {
  const auto emu = device::make_emulator_device();
  bool ran = false;
  const double ms = emu->time_ms([&] { ran = true; });
  EXPECT_TRUE(ran);
  EXPECT_GE(ms, 0);
}

// On a fake libcuda: the provenance of a GPU, the arch check, and the reference check (the fake's
// launches compute nothing, so the output never matches).
TEST(CudaMeasurer, OnAFakeDriverTheProvenanceIsTheGpusAndItsOutputIsChecked) {
  cuda::CudaDeviceOptions options;
  options.driver_library_candidates = {TCJIT_FAKE_LIBCUDA};
  cuda::CudaDevice gpu(options); // "Fake H100", sm_90, CUDA 13.0, 1980 MHz
  const auto measurer = make_cuda_measurer(gpu, quick_options());

  const TuneTask sm80 = make_task(kSpec, "sm_80");
  const BuiltCandidate built80 = built_from(kSpec, "sm_80");
  Measurement m = measurer->measure(sm80, built80.config, &built80);
  EXPECT_EQ(m.status, kdb::ResultStatus::failed);
  EXPECT_EQ(m.message, "the task is for sm_80, the device (Fake H100) is sm_90: measure on a "
                       "device of the task's arch");
  EXPECT_EQ(m.provenance.kind, kdb::ProvenanceKind::measured);
  EXPECT_EQ(m.provenance.device, "Fake H100");
  EXPECT_EQ(m.provenance.driver, "CUDA 13.0");
  EXPECT_EQ(m.provenance.clock_mhz, 1980);

  const TuneTask sm90 = make_task(kSpec, "sm_90");
  const BuiltCandidate built90 = built_from(kSpec, "sm_90");
  m = measurer->measure(sm90, built90.config, &built90);
  EXPECT_EQ(m.status, kdb::ResultStatus::failed);
  EXPECT_EQ(m.message.rfind("wrong result against the CPU reference: ", 0), 0u) << m.message;
  EXPECT_FALSE(m.timing);
}

} // namespace
} // namespace tcjit::tuner
