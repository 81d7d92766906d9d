// The race driver (bench/gpu_tool/race.h) on the fake CUDA driver with fake anchor plans: every
// column timed the same way, each output checked (tcjit's kernels do not run on the fake, so its
// output is wrong and must be reported so), an anchor's first candidate and its best of the first
// N, an anchor's or a plan's failure recorded while the run goes on, and the report's JSON.
#include "bench/gpu_tool/device_json.h"
#include "bench/gpu_tool/race.h"
#include "bench/gpu_tool/race_json.h"
#include "compiler/reference/gemm_reference.h"
#include "compiler/reference/numeric_convert.h"
#include "fake_driver_fixture.h"
#include "tcjit/tcjit.hpp"
#include "tcjit/tools.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace tcjit::bench {
namespace {

void *host(uint64_t device_address) {
  return reinterpret_cast<void *>(device_address); // the fake's device memory is host memory
}

// D of `problem` computed on the CPU into operands.d: what a correct library writes.
void write_correct_gemm(const GemmProblem &problem, const GemmOperands &o) {
  const OpSpec spec = parse_ops(gemm_spec_text(problem)).front().spec;
  std::vector<std::byte> scratch(static_cast<size_t>(problem.m * problem.n * 4));
  const ReferenceResult r = reference_gemm(
      spec, GemmBuffers{host(o.a), host(o.b), scratch.data(), o.bias ? host(o.bias) : nullptr},
      MathMode::tf32);
  for (size_t i = 0; i < r.values.size(); ++i)
    write_element(spec.gemm.c.dtype, host(o.d), static_cast<int64_t>(i), r.values[i]);
}

class GpuBenchRace : public FakeDriverTest {
protected:
  void SetUp() override {
    FakeDriverTest::SetUp();
    RuntimeOptions options;
    options.device = "cuda";
    options.use_database = false;
    rt_ = std::make_unique<Runtime>(options);
    // A launch that only advances the fake's clock: what a fake anchor's "kernel" takes.
    timer_op_ = std::make_unique<Operation>(
        rt_->prepare("gemm m=16 n=16 k=16 a=f16 b=f16:col c=f16 acc=f32"));
    scratch_ = rt_->allocate(16 * 16 * 2);
    race_options_.timing = TimingOptions{1, 20, true};
    race_options_.db_path = db_path();
    race_options_.tune = false;
  }
  void TearDown() override {
    timer_op_.reset();
    if (rt_)
      rt_->free(scratch_);
    rt_.reset();
    FakeDriverTest::TearDown();
  }
  // A fake candidate: takes `ms` of fake GPU time on the stream, then writes the correct D.
  AnchorCandidate candidate(int rank, float ms, const GemmProblem &p, const GemmOperands &o) {
    AnchorCandidate c;
    c.rank = rank;
    c.description = "fake algo " + std::to_string(rank);
    c.enqueue = [this, ms, p, o](void *stream) {
      set_launch_ms_(ms);
      timer_op_->launch(GemmArgs{scratch_, scratch_, 0, scratch_, 0}, stream);
      set_launch_ms_(0.125f);
      write_correct_gemm(p, o);
    };
    return c;
  }
  AnchorPlanners fake_anchors() {
    AnchorPlanners planners;
    planners.gemm = [this](const GemmProblem &p, const GemmOperands &o) {
      AnchorPlan plan;
      plan.anchor = "FakeBLAS";
      plan.variant = "heuristic";
      plan.ok = true;
      plan.candidates.push_back(candidate(0, 0.3f, p, o));
      plan.candidates.push_back(candidate(1, 0.1f, p, o));
      AnchorCandidate refused;
      refused.rank = 2;
      refused.description = "fake algo 2";
      refused.enqueue = [](void *) { throw std::runtime_error("fake: algo 2 refused"); };
      plan.candidates.push_back(refused);
      plan.candidates.push_back(candidate(3, 0.05f, p, o)); // beyond the first anchor_top = 3
      AnchorPlan none;
      none.anchor = "FakeBLAS";
      none.variant = "other";
      none.why_not = "fake: no int8 GEMM with this epilogue";
      return std::vector<AnchorPlan>{plan, none};
    };
    planners.conv = [](const ConvProblem &, const ConvOperands &) -> std::vector<AnchorPlan> {
      throw std::runtime_error("fake cuDNN: no engine");
    };
    return planners;
  }
  const ColumnResult &column(const ProblemResult &r, const std::string &name) {
    for (const ColumnResult &c : r.columns)
      if (c.column == name)
        return c;
    ADD_FAILURE() << "no column " << name;
    static const ColumnResult none;
    return none;
  }

  std::unique_ptr<Runtime> rt_;
  std::unique_ptr<Operation> timer_op_;
  DeviceAddress scratch_ = 0;
  RaceOptions race_options_;
};

GemmProblem tiny_gemm(bool bias_gelu) {
  GemmProblem p;
  p.name = "tiny";
  p.m = 64;
  p.n = 32;
  p.k = 48;
  p.dtype = "f16";
  p.bias_gelu = bias_gelu;
  return p;
}

ConvProblem tiny_conv() {
  ConvProblem p;
  p.name = "tinyconv";
  p.pass = "fprop";
  p.n = 2;
  p.h = p.w = 8;
  p.c = p.k = 16;
  p.r = p.s = 3;
  p.pad_h = p.pad_w = 1;
  return p;
}

TEST_F(GpuBenchRace, ColumnsAreTimedCheckedAndFailuresRecorded) {
  cuda::CudaDevice dev;
  race_options_.anchor_top = 3;
  std::vector<std::string> log;
  race_options_.log = [&](const std::string &line) { log.push_back(line); };
  const std::vector<ProblemResult> results = run_race(dev, {tiny_gemm(false), tiny_gemm(true)},
                                                      {tiny_conv()}, fake_anchors(), race_options_);
  ASSERT_EQ(results.size(), 3u);

  for (const ProblemResult &r : {results[0], results[1]}) {
    SCOPED_TRACE(r.spec);
    EXPECT_TRUE(r.errors.empty());
    EXPECT_DOUBLE_EQ(r.flops, 2.0 * 64 * 32 * 48);
    ASSERT_EQ(r.columns.size(), 5u); // tcjit heuristic, FakeBLAS first/best, other first/best
    // tcjit's kernel ran on the fake driver, which executes nothing: timed, and its output
    // reported wrong rather than hidden.
    const ColumnResult &tcjit = column(r, "tcjit heuristic");
    EXPECT_TRUE(tcjit.ok) << tcjit.error;
    EXPECT_FALSE(tcjit.config.empty());
    ASSERT_TRUE(tcjit.timing.has_value());
    EXPECT_DOUBLE_EQ(tcjit.timing->median_us, 125.0);
    EXPECT_NEAR(tcjit.tflops, 2.0 * 64 * 32 * 48 / 125e-6 / 1e12, 1e-9);
    ASSERT_TRUE(tcjit.percent_of_peak.has_value()); // the fake is an sm_90 (H100's peaks)
    ASSERT_TRUE(tcjit.verification.has_value());
    EXPECT_TRUE(tcjit.verification->checked);
    EXPECT_FALSE(tcjit.verification->ok);
    EXPECT_GT(tcjit.verification->mismatches, 0);
    EXPECT_FALSE(tcjit.verification->worst.empty());

    // The anchor's first candidate: checked (the fake computes D correctly) and timed.
    const ColumnResult &first = column(r, "FakeBLAS heuristic first");
    EXPECT_TRUE(first.ok) << first.error;
    EXPECT_EQ(first.config, "fake algo 0");
    EXPECT_NEAR(first.timing->median_us, 300, 1e-3);
    ASSERT_TRUE(first.verification.has_value());
    EXPECT_TRUE(first.verification->checked);
    EXPECT_TRUE(first.verification->ok) << first.verification->worst;
    EXPECT_EQ(first.verification->part, "all 2048 elements");

    // The best of the first three: candidate 1; candidate 2's refusal recorded; 3 not tried.
    const ColumnResult &best = column(r, "FakeBLAS heuristic best of 3");
    EXPECT_TRUE(best.ok);
    EXPECT_EQ(best.config, "fake algo 1");
    EXPECT_NEAR(best.timing->median_us, 100, 1e-3);
    ASSERT_EQ(best.candidates.size(), 3u);
    EXPECT_FALSE(best.candidates[2].timing.has_value());
    EXPECT_EQ(best.candidates[2].error, "fake: algo 2 refused");

    // A plan without candidates: both its columns say why, and the run went on.
    for (const char *name : {"FakeBLAS other first", "FakeBLAS other best of 3"}) {
      const ColumnResult &c = column(r, name);
      EXPECT_FALSE(c.ok);
      EXPECT_EQ(c.error, "fake: no int8 GEMM with this epilogue");
      EXPECT_FALSE(c.timing.has_value());
    }
  }

  // The convolution's anchor planner threw: recorded for the problem, tcjit's column still there.
  const ProblemResult &conv = results[2];
  ASSERT_EQ(conv.errors.size(), 1u);
  EXPECT_EQ(conv.errors[0], "planning the anchors failed: fake cuDNN: no engine");
  ASSERT_EQ(conv.columns.size(), 1u);
  EXPECT_TRUE(conv.columns[0].ok) << conv.columns[0].error;
  EXPECT_FALSE(conv.columns[0].verification->ok);
  EXPECT_DOUBLE_EQ(conv.flops, 2.0 * 2 * 8 * 8 * 16 * 16 * 9);
  EXPECT_FALSE(log.empty());
}

TEST_F(GpuBenchRace, TheReportsJson) {
  cuda::CudaDevice dev;
  const std::vector<ProblemResult> results =
      run_race(dev, {tiny_gemm(false)}, {}, fake_anchors(), race_options_);
  const nlohmann::json j = race_json(device_json(dev), race_options_, true, results);
  EXPECT_EQ(j["device"]["name"], "Fake H100");
  EXPECT_EQ(j["device"]["arch"], "sm_90");
  EXPECT_EQ(j["device"]["sm_clock_mhz"], 1980);
  EXPECT_EQ(j["device"]["memory_clock_mhz"], 2619);
  EXPECT_EQ(j["device"]["driver_version"], 13000);
  EXPECT_TRUE(j["device"]["peaks"]["tflops"].contains("f16"));
  EXPECT_EQ(j["options"]["reps"], 20);
  EXPECT_EQ(j["options"]["quick"], true);
  ASSERT_EQ(j["problems"].size(), 1u);
  const nlohmann::json &p = j["problems"][0];
  EXPECT_EQ(p["kind"], "gemm");
  EXPECT_EQ(p["name"], "tiny");
  EXPECT_EQ(p["dtype"], "f16");
  EXPECT_EQ(p["bias_gelu"], false);
  EXPECT_EQ(p["math_unit"], "f16");
  EXPECT_EQ(p["spec"], gemm_spec_text(tiny_gemm(false)));
  const nlohmann::json &tcjit = p["columns"][0];
  EXPECT_EQ(tcjit["column"], "tcjit heuristic");
  EXPECT_EQ(tcjit["measured"], true);
  for (const char *field :
       {"median_us", "min_us", "max_us", "p25_us", "p75_us", "reps", "warmup", "l2_flush_bytes"})
    EXPECT_TRUE(tcjit["timing"].contains(field)) << field;
  EXPECT_EQ(tcjit["timing"]["reps"], 20);
  EXPECT_TRUE(tcjit["tflops"].is_number());
  EXPECT_TRUE(tcjit["percent_of_peak"].is_number());
  EXPECT_EQ(tcjit["verification"]["checked"], true);
  EXPECT_EQ(tcjit["verification"]["ok"], false);
  EXPECT_TRUE(tcjit["verification"]["worst"].is_string());
  const nlohmann::json &best = p["columns"][2];
  EXPECT_EQ(best["pick"], "best of 8");
  EXPECT_EQ(best["candidates"].size(), 4u);
  EXPECT_EQ(best["candidates"][2]["error"], "fake: algo 2 refused");
  EXPECT_EQ(best["config"], "fake algo 3"); // the fastest of the four
  const nlohmann::json &none = p["columns"][3];
  EXPECT_EQ(none["measured"], false);
  EXPECT_EQ(none["error"], "fake: no int8 GEMM with this epilogue");
  EXPECT_FALSE(none.contains("timing"));
}

// With tuning: tcjit tune --device cuda measures on the fake, whose outputs are wrong, so no
// candidate is usable; the tuned column says so instead of timing the heuristic's kernel.
TEST_F(GpuBenchRace, ATuneWithoutAUsableConfigIsRecorded) {
  cuda::CudaDevice dev;
  race_options_.tune = true;
  race_options_.tune_budget = "2";
  const std::vector<ProblemResult> results =
      run_race(dev, {tiny_gemm(false)}, {}, AnchorPlanners{}, race_options_);
  ASSERT_EQ(results.size(), 1u);
  const ColumnResult &tuned = column(results[0], "tcjit tuned");
  EXPECT_FALSE(tuned.ok);
  EXPECT_FALSE(tuned.timing.has_value());
  EXPECT_NE(tuned.error.find("found no usable config"), std::string::npos) << tuned.error;
  // Why, from the database: the first candidate's failure.
  EXPECT_NE(tuned.error.find("wrong result against the CPU reference"), std::string::npos)
      << tuned.error;
  EXPECT_TRUE(column(results[0], "tcjit heuristic").ok);
}

} // namespace
} // namespace tcjit::bench
