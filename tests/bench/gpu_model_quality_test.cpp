// `tcjit_gpu_bench model-quality` (bench/gpu_tool/model_quality_db.h): the measured candidates of
// each problem of a database tuned by measurement against the cost model's predictions of the
// same configs; results predicted, emulated or failed are not measurements and are left out.
#include "bench/gpu_tool/model_quality_db.h"
#include "compiler/dsl/parser.h"
#include "compiler/spec/problem_key.h"
#include "engine/kernel_records.h"
#include "kernels_db/kernels_db.h"
#include "tests/kernels_db/db_test_util.h"
#include "tuner/cost_model.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tcjit::bench {
namespace {

namespace kdb = kernels_db;

codegen::TileConfig config_with(int bm, int bn, int stages) {
  codegen::TileConfig c;
  c.bm = bm;
  c.bn = bn;
  c.bk = 32;
  c.wm = 64;
  c.wn = 64;
  c.stages = stages;
  return c;
}

kdb::ResultRecord result(const ProblemKey &key, const codegen::TileConfig &config, double median_us,
                         kdb::ProvenanceKind kind) {
  kdb::ResultRecord r;
  r.problem_key = key.text;
  r.config_json = engine::config_json(config);
  r.arch = "sm_80";
  r.status = kdb::ResultStatus::ok;
  r.timing = kdb::Timing{median_us, median_us * 0.9, median_us * 1.1, median_us * 0.02};
  r.provenance.kind = kind;
  r.provenance.device = kind == kdb::ProvenanceKind::measured ? "NVIDIA A100-SXM4-80GB" : "";
  r.tuner_version = "test";
  r.measured_ms = 1700000000000;
  return r;
}

TEST(GpuBenchModelQuality, MeasuredCandidatesAgainstThePredictionsOfTheSameConfigs) {
  kdb::testing::TempDir dir;
  const std::string db_path = dir.file("kernels.db").string();
  const std::string text = "gemm m=512 n=256 k=128 a=f16:row b=f16:col c=f16:row acc=f32";
  const OpSpec spec = parse_spec(text).entries.front().spec;
  const ProblemKey key = make_problem_key(spec, "sm_80", false);
  const std::vector<codegen::TileConfig> configs{config_with(128, 128, 3), config_with(64, 64, 2),
                                                 config_with(128, 64, 4)};
  const std::vector<double> measured{30, 20, 10};
  {
    kdb::KernelsDb db = kdb::KernelsDb::open(db_path);
    db.put_problem(engine::problem_record(spec, key, "sm_80"));
    for (size_t i = 0; i < configs.size(); ++i)
      db.put_result(result(key, configs[i], measured[i], kdb::ProvenanceKind::measured));
    // Not measurements: left out.
    db.put_result(result(key, config_with(64, 128, 3), 5, kdb::ProvenanceKind::predicted));
    db.put_result(result(key, config_with(256, 128, 3), 6, kdb::ProvenanceKind::emulated));
    kdb::ResultRecord failed =
        result(key, config_with(128, 256, 3), 1, kdb::ProvenanceKind::measured);
    failed.status = kdb::ResultStatus::failed;
    failed.timing.reset();
    failed.message = "wrong result";
    db.put_result(failed);
  }

  const ModelQualityReport report = model_quality_of_db(db_path, 2);
  ASSERT_EQ(report.problems.size(), 1u) << (report.skipped.empty() ? "" : report.skipped[0]);
  const ProblemModelQuality &p = report.problems[0];
  EXPECT_EQ(p.arch, "sm_80");
  EXPECT_EQ(p.device, "NVIDIA A100-SXM4-80GB");
  EXPECT_NE(p.model.find("uncalibrated"), std::string::npos) << p.model;
  ASSERT_EQ(p.candidates.size(), 3u);
  std::vector<tuner::PredictedAndMeasured> expected;
  for (size_t i = 0; i < configs.size(); ++i) {
    const tuner::Prediction pred =
        tuner::predict_config(tuner::gpu_model_for_arch("sm_80"), spec, configs[i], false);
    ASSERT_TRUE(pred.launchable) << pred.why_not;
    expected.push_back({codegen::to_string(configs[i]), pred.seconds * 1e6, measured[i]});
  }
  for (const tuner::PredictedAndMeasured &c : p.candidates) {
    bool found = false;
    for (const tuner::PredictedAndMeasured &e : expected)
      if (e.config == c.config) {
        found = true;
        EXPECT_DOUBLE_EQ(c.predicted_us, e.predicted_us) << c.config;
        EXPECT_DOUBLE_EQ(c.measured_us, e.measured_us) << c.config;
      }
    EXPECT_TRUE(found) << c.config;
  }
  const tuner::ModelQuality want = tuner::model_quality(p.candidates, 2);
  EXPECT_EQ(p.quality.measured_best, codegen::to_string(configs[2]));
  EXPECT_DOUBLE_EQ(p.quality.measured_best_us, 10);
  EXPECT_EQ(p.quality.model_top1, want.model_top1);
  EXPECT_DOUBLE_EQ(p.quality.regret_top1, want.regret_top1);
  EXPECT_DOUBLE_EQ(p.quality.regret_topk, want.regret_topk);
  EXPECT_EQ(p.quality.k, 2u);

  const nlohmann::json j = model_quality_json(report);
  ASSERT_EQ(j["problems"].size(), 1u);
  const nlohmann::json &row = j["problems"][0];
  EXPECT_EQ(row["candidates"], 3);
  EXPECT_EQ(row["measured_best_us"], 10.0);
  for (const char *field : {"kendall_tau_b", "winner_predicted_over_measured", "regret_top1",
                            "regret_top_k", "model_top1", "per_candidate", "spec", "device"})
    EXPECT_TRUE(row.contains(field)) << field;
  EXPECT_EQ(row["per_candidate"].size(), 3u);
}

TEST(GpuBenchModelQuality, ADatabaseWithoutMeasurementsHasNoProblems) {
  kdb::testing::TempDir dir;
  const std::string db_path = dir.file("kernels.db").string();
  const OpSpec spec = parse_spec("gemm m=64 n=64 k=64 a=f16 b=f16:col").entries.front().spec;
  const ProblemKey key = make_problem_key(spec, "sm_80", false);
  {
    kdb::KernelsDb db = kdb::KernelsDb::open(db_path);
    db.put_problem(engine::problem_record(spec, key, "sm_80"));
    db.put_result(result(key, config_with(64, 64, 3), 5, kdb::ProvenanceKind::predicted));
  }
  const ModelQualityReport report = model_quality_of_db(db_path);
  EXPECT_TRUE(report.problems.empty());
  EXPECT_TRUE(model_quality_json(report)["problems"].empty());
}

} // namespace
} // namespace tcjit::bench
