// The replay measurer reads the JSON Lines `tcjit db export` writes: a real export of a temporary
// database with problem and result records.
#include "compiler/codegen/plan/tile_config.h"
#include "compiler/dsl/parser.h"
#include "compiler/spec/problem_key.h"
#include "engine/kernel_records.h"
#include "kernels_db/kernels_db.h"
#include "tests/kernels_db/db_test_util.h"
#include "tuner/measure_replay.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace tcjit::tuner {
namespace {

namespace kdb = kernels_db;
using kdb::testing::TempDir;

TuneTask make_task(const std::string &text, const std::string &arch) {
  const ParseResult parsed = parse_spec(text);
  EXPECT_TRUE(parsed.ok() && parsed.entries.size() == 1) << text;
  TuneTask task;
  task.spec = parsed.entries.front().spec;
  task.arch = arch;
  task.key = make_problem_key(task.spec, arch, false);
  return task;
}

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

kdb::ResultRecord result(const TuneTask &task, const codegen::TileConfig &config, double median_us,
                         const std::string &device) {
  kdb::ResultRecord r;
  r.problem_key = task.key.text;
  r.config_json = engine::config_json(config);
  r.arch = task.arch;
  r.status = kdb::ResultStatus::ok;
  r.timing = kdb::Timing{median_us, median_us * 0.9, median_us * 1.1, median_us * 0.02};
  r.tflops = 1000.0 / median_us;
  r.provenance.kind = kdb::ProvenanceKind::measured;
  r.provenance.device = device;
  r.provenance.driver = "550.54.15";
  r.provenance.clock_mhz = 1410;
  r.tuner_version = "test";
  r.measured_ms = 1700000000000;
  return r;
}

kdb::ResultRecord failure(const TuneTask &task, const codegen::TileConfig &config,
                          kdb::ResultStatus status, const std::string &message) {
  kdb::ResultRecord r = result(task, config, 1, "NVIDIA A100-SXM4-80GB");
  r.status = status;
  r.timing.reset();
  r.tflops.reset();
  r.message = message;
  return r;
}

std::string read_text(const std::filesystem::path &path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void write_text(const std::filesystem::path &path, const std::string &text) {
  std::ofstream(path) << text;
}

std::string thrown_message(const std::filesystem::path &path) {
  try {
    make_replay_measurer(path);
  } catch (const std::runtime_error &error) {
    return error.what();
  }
  ADD_FAILURE() << "expected an error for " << path;
  return {};
}

class ReplayMeasurerTest : public ::testing::Test {
protected:
  void SetUp() override {
    task = make_task("gemm m=512 n=256 k=128 a=f16:row b=f16:col c=f16:row acc=f32", "sm_80");
    other_arch = make_task("gemm m=512 n=256 k=128 a=f16:row b=f16:col c=f16:row acc=f32", "sm_90");
    kdb::KernelsDb db = kdb::KernelsDb::open(dir.file("kernels.db"));
    db.put_problem(engine::problem_record(task.spec, task.key, task.arch));
    db.put_problem(engine::problem_record(other_arch.spec, other_arch.key, other_arch.arch));
    db.put_result(result(task, fast, 20.0, "NVIDIA A100-SXM4-80GB"));
    db.put_result(result(task, fast, 15.0, "NVIDIA A100-PCIE-40GB")); // the best of `fast`
    db.put_result(result(task, fast, 30.0, "NVIDIA A10"));
    kdb::ResultRecord predicted = result(task, slow, 50.0, "");
    predicted.provenance = {kdb::ProvenanceKind::predicted, "", "", std::nullopt, "roofline v1"};
    db.put_result(predicted);
    db.put_result(failure(task, broken, kdb::ResultStatus::failed, "wrong result: 12 mismatches"));
    db.put_result(
        failure(task, illegal, kdb::ResultStatus::illegal, "bm * bn too large for sm_80"));
    db.put_result(result(other_arch, fast, 7.0, "NVIDIA H100 80GB HBM3"));
    // An export carries the database's calibrations (schema 6): the replay skips them.
    db.put_calibration({"NVIDIA A100-SXM4-80GB", "sm_80", R"({"dram_bytes_per_s":1.5e12})", 18, 0.3,
                        0.01, 1795000000000, "0.1.0", "tcjit-cost-model 2"});
    std::ofstream out(file);
    db.export_jsonl(out);
  }

  TempDir dir;
  std::filesystem::path file = dir.file("results.jsonl");
  TuneTask task, other_arch;
  codegen::TileConfig fast = config_with(128, 128, 3), slow = config_with(64, 64, 2),
                      broken = config_with(128, 64, 4), illegal = config_with(256, 256, 4),
                      absent = config_with(64, 128, 3);
};

TEST_F(ReplayMeasurerTest, TheExportHasProblemBinaryAndResultLines) {
  const std::string text = read_text(file);
  EXPECT_NE(text.find("\"type\":\"problem\""), std::string::npos);
  EXPECT_NE(text.find("\"type\":\"result\""), std::string::npos);
  EXPECT_NE(text.find("\"type\":\"calibration\""), std::string::npos);
}

TEST_F(ReplayMeasurerTest, ReturnsTheBestOkResultWithItsProvenance) {
  const auto replay = make_replay_measurer(file);
  EXPECT_EQ(replay->name(), "replay");
  EXPECT_FALSE(replay->needs_build());
  const Measurement m = replay->measure(task, fast, nullptr);
  EXPECT_EQ(m.status, kdb::ResultStatus::ok);
  ASSERT_TRUE(m.timing);
  EXPECT_DOUBLE_EQ(m.timing->median_us, 15.0);
  EXPECT_DOUBLE_EQ(m.timing->min_us, 13.5);
  EXPECT_DOUBLE_EQ(m.timing->max_us, 16.5);
  EXPECT_DOUBLE_EQ(m.timing->stddev_us, 0.3);
  EXPECT_DOUBLE_EQ(m.seconds(), 15e-6);
  ASSERT_TRUE(m.tflops);
  EXPECT_DOUBLE_EQ(*m.tflops, 1000.0 / 15.0);
  EXPECT_EQ(m.provenance.kind, kdb::ProvenanceKind::measured);
  EXPECT_EQ(m.provenance.device, "NVIDIA A100-PCIE-40GB");
  EXPECT_EQ(m.provenance.driver, "550.54.15");
  EXPECT_EQ(m.provenance.clock_mhz, 1410);
  EXPECT_EQ(m.message, "replayed from " + file.string());
}

TEST_F(ReplayMeasurerTest, APredictionStaysAPrediction) {
  const Measurement m = make_replay_measurer(file)->measure(task, slow, nullptr);
  EXPECT_EQ(m.status, kdb::ResultStatus::ok);
  EXPECT_EQ(m.provenance.kind, kdb::ProvenanceKind::predicted);
  EXPECT_EQ(m.provenance.model, "roofline v1");
  ASSERT_TRUE(m.timing);
  EXPECT_DOUBLE_EQ(m.timing->median_us, 50.0);
}

TEST_F(ReplayMeasurerTest, TheArchIsPartOfTheKey) {
  const auto replay = make_replay_measurer(file);
  const Measurement m = replay->measure(other_arch, fast, nullptr);
  ASSERT_TRUE(m.timing);
  EXPECT_DOUBLE_EQ(m.timing->median_us, 7.0);
  EXPECT_EQ(m.provenance.device, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(replay->measure(other_arch, slow, nullptr).status, kdb::ResultStatus::failed);
}

TEST_F(ReplayMeasurerTest, FailedAndIllegalResultsKeepTheirStatusAndMessage) {
  const auto replay = make_replay_measurer(file);
  const Measurement failed = replay->measure(task, broken, nullptr);
  EXPECT_EQ(failed.status, kdb::ResultStatus::failed);
  EXPECT_EQ(failed.message, "wrong result: 12 mismatches");
  EXPECT_FALSE(failed.timing);
  EXPECT_EQ(failed.seconds(), 0);
  const Measurement illegal_result = replay->measure(task, illegal, nullptr);
  EXPECT_EQ(illegal_result.status, kdb::ResultStatus::illegal);
  EXPECT_EQ(illegal_result.message, "bm * bn too large for sm_80");
}

TEST_F(ReplayMeasurerTest, AnAbsentConfigIsFailedNamingTheFile) {
  const Measurement m = make_replay_measurer(file)->measure(task, absent, nullptr);
  EXPECT_EQ(m.status, kdb::ResultStatus::failed);
  EXPECT_EQ(m.message, "not in the replay data (" + file.string() + ")");
  EXPECT_FALSE(m.timing);
  EXPECT_FALSE(m.tflops);
}

TEST_F(ReplayMeasurerTest, AnOkResultWithoutTimingIsNotAMeasurement) {
  kdb::ResultRecord verified = result(task, absent, 1, "tcjit emulator");
  verified.timing.reset();
  verified.provenance.kind = kdb::ProvenanceKind::emulated;
  {
    kdb::KernelsDb db = kdb::KernelsDb::open(dir.file("kernels.db"));
    db.put_result(verified);
    std::ofstream out(file);
    db.export_jsonl(out);
  }
  const Measurement m = make_replay_measurer(file)->measure(task, absent, nullptr);
  EXPECT_EQ(m.status, kdb::ResultStatus::failed);
  EXPECT_NE(m.message.find("without timing"), std::string::npos) << m.message;
  EXPECT_NE(m.message.find("emulated"), std::string::npos) << m.message;
}

TEST_F(ReplayMeasurerTest, AMalformedLineIsNamedWithItsNumber) {
  std::string text = read_text(file);
  const auto lines = std::count(text.begin(), text.end(), '\n');
  write_text(file, text + "{\"type\":\"result\", oops\n");
  std::string message = thrown_message(file);
  EXPECT_EQ(message.rfind("replay file " + file.string() + " line " + std::to_string(lines + 1) +
                              ": not JSON",
                          0),
            0u)
      << message;
  EXPECT_NE(message.find("How to fix: "), std::string::npos) << message;
  EXPECT_NE(message.find("tcjit db export"), std::string::npos) << message;

  write_text(file,
             text + "\n{\"type\":\"result\",\"problem\":\"x\",\"config\":{},\"arch\":\"sm_80\"}\n");
  message = thrown_message(file);
  EXPECT_EQ(message.rfind("replay file " + file.string() + " line " + std::to_string(lines + 2) +
                              ": field 'status' is missing",
                          0),
            0u)
      << message;

  write_text(file, text + "{\"type\":\"kernel\"}\n");
  message = thrown_message(file);
  EXPECT_NE(message.find("line " + std::to_string(lines + 1) + ": unknown record type 'kernel'"),
            std::string::npos)
      << message;
}

TEST_F(ReplayMeasurerTest, AFileWithoutTheHeaderIsRefused) {
  std::string text = read_text(file);
  write_text(file, text.substr(text.find('\n') + 1));
  const std::string message = thrown_message(file);
  EXPECT_NE(message.find(" line 1: missing header line"), std::string::npos) << message;
  write_text(file, "");
  EXPECT_NE(thrown_message(file).find("is empty (no header line)"), std::string::npos);
}

TEST(ReplayMeasurer, AMissingFileIsAClearError) {
  const std::string message = thrown_message("/nonexistent/results.jsonl");
  EXPECT_EQ(
      message.rfind("replay file /nonexistent/results.jsonl: cannot be opened for reading", 0), 0u)
      << message;
  EXPECT_NE(message.find("tcjit db export -o FILE"), std::string::npos) << message;
}

} // namespace
} // namespace tcjit::tuner
