// bench/gpu_tool/timing.h on the fake CUDA driver: the driver calls of one timed column (warm-up,
// then per repetition the L2 flush, an event, the launch on the device's stream, an event) and
// the statistics of the repetitions (the fake's clock advances by a set time per launch).
#include "bench/gpu_tool/timing.h"
#include "fake_driver_fixture.h"
#include "tcjit/tcjit.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace tcjit::bench {
namespace {

std::vector<std::string> lines_of(const std::string &text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

std::string on_stream(const char *name, void *stream) {
  char text[96];
  std::snprintf(text, sizeof(text), "%s stream=%p", name, stream);
  return text;
}

class GpuBenchTiming : public FakeDriverTest {};

TEST_F(GpuBenchTiming, EachRepetitionFlushesL2ThenTimesTheLaunchBetweenEvents) {
  RuntimeOptions options;
  options.device = "cuda";
  options.use_database = false;
  Runtime rt(options);
  const Operation op = rt.prepare("gemm m=64 n=64 k=64 a=f16 b=f16:col c=f16 acc=f32");
  const DeviceAddress a = rt.allocate(64 * 64 * 2), b = rt.allocate(64 * 64 * 2),
                      d = rt.allocate(64 * 64 * 2);
  cuda::CudaDevice dev;
  void *const stream = dev.stream();
  ASSERT_NE(stream, nullptr);
  Timer timer(dev, TimingOptions{2, 20, true});
  reset_log_();
  const TimingResult t = timer.time([&](void *s) { op.launch(GemmArgs{a, b, 0, d, 0}, s); });

  // The calls that matter, in order.
  std::vector<std::string> seq;
  for (const std::string &line : lines_of(call_log_()))
    if (line.starts_with("cuMemsetD8") || line.starts_with("cuEventRecord") ||
        line.starts_with("cuLaunchKernel") || line.starts_with("cuStreamSynchronize") ||
        line.starts_with("cuCtxSynchronize"))
      seq.push_back(line);
  const std::string launch = on_stream("cuLaunchKernel", stream);
  const std::string record = on_stream("cuEventRecord", stream);
  size_t i = 0;
  for (int w = 0; w < 2; ++w) { // warm-up: the launch, waited for
    ASSERT_LT(i + 1, seq.size());
    EXPECT_EQ(seq[i++], launch);
    EXPECT_TRUE(seq[i].starts_with("cuStreamSynchronize") || seq[i] == "cuCtxSynchronize")
        << seq[i];
    ++i;
  }
  int reps = 0;
  while (i < seq.size()) {
    // A memset waits for the stream first (cuda_device.cpp): skip that synchronize.
    if (seq[i].starts_with("cuStreamSynchronize")) {
      ++i;
      continue;
    }
    ASSERT_LE(i + 4, seq.size()) << "repetition " << reps << " incomplete";
    EXPECT_EQ(seq[i], "cuMemsetD8_v2") << "repetition " << reps;
    EXPECT_EQ(seq[i + 1], record) << "repetition " << reps;
    EXPECT_EQ(seq[i + 2], launch) << "repetition " << reps;
    EXPECT_EQ(seq[i + 3], record) << "repetition " << reps;
    i += 4;
    ++reps;
  }
  EXPECT_EQ(reps, 20);
  EXPECT_EQ(t.reps, 20);
  EXPECT_EQ(t.warmup, 2);
  EXPECT_EQ(t.flush_bytes, uint64_t{100} << 20) << "twice the fake's 50 MiB L2";
  EXPECT_DOUBLE_EQ(t.median_us, 125.0); // the fake's 0.125 ms per launch
  for (DeviceAddress p : {a, b, d})
    rt.free(p);
}

TEST_F(GpuBenchTiming, MedianMinMaxAndQuartilesOfTheRepetitions) {
  RuntimeOptions options;
  options.device = "cuda";
  options.use_database = false;
  Runtime rt(options);
  const Operation op = rt.prepare("gemm m=64 n=64 k=64 a=f16 b=f16:col c=f16 acc=f32");
  const DeviceAddress a = rt.allocate(64 * 64 * 2), d = rt.allocate(64 * 64 * 2);
  cuda::CudaDevice dev;
  Timer timer(dev, TimingOptions{0, 20, true});
  int call = 0;
  // Repetition i takes (i + 1) * 10 us: 10, 20, ..., 200 (in reverse, to show the sort).
  const TimingResult t = timer.time([&](void *s) {
    set_launch_ms_(static_cast<float>(20 - call++) * 0.01f);
    op.launch(GemmArgs{a, a, 0, d, 0}, s);
  });
  EXPECT_EQ(call, 20);
  EXPECT_NEAR(t.min_us, 10, 1e-3);
  EXPECT_NEAR(t.max_us, 200, 1e-3);
  EXPECT_NEAR(t.median_us, 105, 1e-3);
  EXPECT_NEAR(t.p25_us, 57.5, 1e-3); // rank 0.25 * 19 = 4.75 of the sorted times
  EXPECT_NEAR(t.p75_us, 152.5, 1e-3);
  for (DeviceAddress p : {a, d})
    rt.free(p);
}

TEST_F(GpuBenchTiming, FewerThanTwentyRepetitionsAreRefused) {
  cuda::CudaDevice dev;
  EXPECT_THROW(Timer(dev, TimingOptions{3, 19, true}), std::invalid_argument);
  EXPECT_THROW(Timer(dev, TimingOptions{-1, 25, true}), std::invalid_argument);
  try {
    check_timing_options(TimingOptions{3, 5, true});
  } catch (const std::invalid_argument &e) {
    EXPECT_NE(std::string(e.what()).find("at least 20"), std::string::npos) << e.what();
  }
}

} // namespace
} // namespace tcjit::bench
