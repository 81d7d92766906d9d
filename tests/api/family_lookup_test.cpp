// The lookup rules of docs/tuner.md ("Which decision serves a spec"): a problem without a decision
// of its own is served by a tuned dispatch table of its kernel family (the same spec but for its
// sizes) — in Runtime::prepare, in `tcjit run` (Runtime::verify) and in resolve_op.
#include "tcjit/tcjit.hpp"
#include "tcjit/tools.hpp"

#include "emu_runtime_test_base.h"

#include "compiler/dsl/parser.h"
#include "compiler/spec/problem_key.h"
#include "engine/kernel_records.h"
#include "kernels_db/dispatch.h"
#include "kernels_db/kernels_db.h"
#include "tuner/measure_model.h"
#include "tuner/size_family.h"
#include "tuner/size_range.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

namespace {

using tcjit::codegen::TileConfig;

class FamilyLookupTest : public tcjit::testing::EmuRuntimeTest {
protected:
  static constexpr const char *kTail = " n=64 k=64 a=f16:row b=f16:col c=f16:row acc=f32";
  const TileConfig small_{32, 32, 32, 16, 16, 4, 1, 1, 8, 8};
  const TileConfig large_{64, 64, 32, 32, 32, 4, 1, 1, 8, 8};

  static std::string gemm(const std::string &m) { return "gemm m=" + m + kTail; }
  static std::string config_text(const TileConfig &c) {
    return tcjit::codegen::to_string(
        tcjit::codegen::resolve_vectors(tcjit::parse_spec(gemm("16")).entries.front().spec, c));
  }

  // What `tcjit tune "gemm m=1..256 ..."` stores, with two buckets of known configs (no
  // binaries: a runtime that may compile builds them).
  void store_range_table() { store_two_bucket_table(gemm("1..256"), small_, large_); }

  // A real tune of the range (the cost model's predictions, 2 candidates a size) with its
  // kernels stored, as `tcjit tune` does.
  tcjit::kernels_db::DispatchTable tune_range(const std::string &text) {
    tcjit::tuner::TuneTask ranged;
    ranged.spec = tcjit::parse_spec(text).entries.front().spec;
    ranged.arch = "sm_80";
    ranged.key = tcjit::make_problem_key(ranged.spec, "sm_80", false);
    auto db = tcjit::kernels_db::KernelsDb::open(db_path_);
    auto measurer = tcjit::tuner::make_model_measurer(tcjit::tuner::a100_model(), nullptr);
    std::string error;
    const auto sizes = tcjit::tuner::representative_tasks(ranged, error);
    EXPECT_FALSE(sizes.empty()) << error;
    tcjit::tuner::TuneOptions topt;
    topt.measurer = measurer.get();
    topt.budget.candidates = 2;
    std::vector<tcjit::tuner::TuneResult> results;
    for (const auto &t : sizes)
      results.push_back(tcjit::tuner::tune_problem(t, topt, &db));
    EXPECT_GE(tcjit::tuner::store_dispatch_table(ranged, sizes, results, db), 1);
    return *db.find_dispatch_table(ranged.key.text, "sm_80");
  }
};

TEST(FamilyKey, SizesAreErasedAndTheRestKept) {
  const std::string a =
      "gemm m=37 n=64 k=64 batch=1 a=f16:row b=f16:col c=f16:row acc=f32 alpha=1 beta=0 "
      "bias=none act=none align=a8,b8,c8 arch=sm_80";
  const std::string b =
      "gemm m=1..256 n=? k=64 batch=1 a=f16:row b=f16:col c=f16:row acc=f32 alpha=1 beta=0 "
      "bias=none act=none align=a8,b8,c8 arch=sm_80";
  EXPECT_EQ(tcjit::tuner::family_key(a), tcjit::tuner::family_key(b));
  EXPECT_NE(tcjit::tuner::family_key(a),
            tcjit::tuner::family_key(a.substr(0, a.size() - 2) + "90"));
  // The alignment is part of the family; a convolution's k (output channels) is not a size.
  EXPECT_NE(tcjit::tuner::family_key(a),
            tcjit::tuner::family_key(a.substr(0, a.find("align=")) + "align=a2,b8,c8 arch=sm_80"));
  EXPECT_EQ(tcjit::tuner::family_key("conv2d n=8 h=8 w=8 c=16 k=16"),
            "conv2d n=* h=8 w=8 c=16 k=16");
  const auto sizes = tcjit::tuner::family_sizes(b);
  ASSERT_EQ(sizes.size(), 4u);
  EXPECT_EQ(sizes[0].first, "m");
  EXPECT_EQ(sizes[0].second.lo, 1);
  EXPECT_EQ(sizes[0].second.hi, 256);
  EXPECT_EQ(sizes[1].second.hi, INT64_MAX); // n=?
}

// Rule 1 and 2: a concrete size inside the tuned range takes its bucket's config; `m=?` and a
// sub-range take the range's table (bucket per launch size).
TEST_F(FamilyLookupTest, ConcreteSizesAndSubRangesTakeTheTunedRangesBuckets) {
  {
    tcjit::RuntimeOptions o = options();
    o.use_database = false;
    tcjit::Runtime plain(o); // what they got before: the default chooser's configs
    EXPECT_NE(plain.prepare(gemm("100")).config(), config_text(large_));
    EXPECT_NE(plain.prepare(gemm("16")).config(), config_text(small_));
  }
  store_range_table();
  tcjit::Runtime rt(options());
  EXPECT_EQ(rt.prepare(gemm("100")).config(), config_text(large_));
  EXPECT_EQ(rt.prepare(gemm("16")).config(), config_text(small_));
  for (const char *m : {"?", "1..64"}) {
    SCOPED_TRACE(m);
    const tcjit::Operation op = rt.prepare(gemm(m));
    tcjit::GemmArgs sizes;
    sizes.m = 16;
    EXPECT_EQ(op.config_for(sizes), config_text(small_));
    sizes.m = 40;
    EXPECT_EQ(op.config_for(sizes), config_text(large_));
  }
}

// Under MissPolicy::fail, `m=?`, a sub-range and a concrete size are served from the tuned range's
// stored kernels: no miss. `tcjit run`'s path (Runtime::verify) takes the stored kernel too, and it
// verifies at the new size.
TEST_F(FamilyLookupTest, FailPolicyIsServedByTheFamilysStoredKernels) {
  const tcjit::kernels_db::DispatchTable table =
      tune_range("gemm m=1..512 n=128 k=256 a=f16:row b=f16:col c=f16:row acc=f32");
  for (const char *m : {"?", "1..128", "37"}) {
    SCOPED_TRACE(m);
    tcjit::Runtime fresh(options(tcjit::MissPolicy::fail));
    const tcjit::Operation op = fresh.prepare(std::string("gemm m=") + m +
                                              " n=128 k=256 a=f16:row b=f16:col c=f16:row acc=f32");
    EXPECT_EQ(op.origin(), tcjit::Origin::database);
  }
  tcjit::Runtime rt(options(tcjit::MissPolicy::fail));
  const tcjit::kernels_db::DispatchIndex index(table);
  const auto *entry = index.find({37, 128, 256, 1});
  ASSERT_NE(entry, nullptr);
  const tcjit::VerifyReport report =
      rt.verify(tcjit::parse_spec("gemm m=37 n=128 k=256 a=f16:row b=f16:col c=f16:row acc=f32")
                    .entries.front()
                    .spec,
                {});
  EXPECT_TRUE(report.ok);
  TileConfig expected;
  std::string error;
  ASSERT_TRUE(tcjit::codegen::parse_tile_config(report.config, expected, error)) << error;
  EXPECT_EQ(tcjit::engine::config_json(expected), entry->config_json);
  EXPECT_NE(report.json.find("hit (database"), std::string::npos) << report.json;
}

// A convolution decided at n=8 serves the same convolution at n=1 and n=?; the nearest tuned n
// wins.
TEST_F(FamilyLookupTest, AConvolutionTakesTheDecisionOfTheNearestTunedBatch) {
  const std::string conv = " h=6 w=6 c=16 k=32 r=3 s=3 pad=1 x=f16";
  const TileConfig c8{32, 32, 32, 16, 16, 4, 1, 1, 8, 8};
  const TileConfig c64{64, 32, 32, 32, 16, 3, 1, 1, 8, 8};
  {
    auto db = tcjit::kernels_db::KernelsDb::open(db_path_);
    for (const auto &[n, config] : {std::pair{8, c8}, std::pair{64, c64}}) {
      const tcjit::OpSpec spec =
          tcjit::parse_spec("conv2d n=" + std::to_string(n) + conv).entries.front().spec;
      const tcjit::ProblemKey key = tcjit::make_problem_key(spec, "sm_80", false);
      db.put_problem(tcjit::engine::problem_record(spec, key, "sm_80"));
      tcjit::kernels_db::DispatchTable table;
      table.problem_key = key.text;
      table.arch = "sm_80";
      table.tuner_version = "tcjit-tuner 1 / test / model";
      table.entries.push_back({"{}", tcjit::engine::config_json(config), 1.0,
                               tcjit::kernels_db::ProvenanceKind::predicted});
      db.put_dispatch_table(table);
    }
  }
  tcjit::Runtime rt(options());
  const tcjit::OpSpec one = tcjit::parse_spec("conv2d n=1" + conv).entries.front().spec;
  const std::string near8 = tcjit::codegen::to_string(tcjit::codegen::resolve_vectors(one, c8));
  const std::string near64 = tcjit::codegen::to_string(tcjit::codegen::resolve_vectors(one, c64));
  {
    tcjit::RuntimeOptions o = options();
    o.use_database = false;
    tcjit::Runtime plain(o); // what they got before: the default chooser's configs
    EXPECT_NE(plain.prepare("conv2d n=1" + conv).config(), near8);
    EXPECT_NE(plain.prepare("conv2d n=50" + conv).config(), near64);
  }
  EXPECT_EQ(rt.prepare("conv2d n=1" + conv).config(), near8);
  EXPECT_EQ(rt.prepare("conv2d n=50" + conv).config(), near64);
  EXPECT_EQ(rt.prepare("conv2d n=2..16" + conv).config(), near8);
}

// MissPolicy::tune on a symbolic GEMM tunes representative sizes and stores their dispatch table:
// a runtime that may not compile then serves the spec.
TEST_F(FamilyLookupTest, TunePolicyOnASymbolicSpecTunesRepresentativeSizes) {
  tcjit::RuntimeOptions o = options(tcjit::MissPolicy::tune);
  o.tune_budget = 1;
  const std::string text = "gemm m=? n=16 k=16 a=f16:row b=f16:col c=f16:row acc=f32";
  {
    tcjit::Runtime rt(o);
    EXPECT_EQ(rt.prepare(text).origin(), tcjit::Origin::tuned_now);
  }
  auto db = tcjit::kernels_db::KernelsDb::open(db_path_);
  const tcjit::OpSpec spec = tcjit::parse_spec(text).entries.front().spec;
  const auto served = tcjit::tuner::serving_dispatch_table(
      db, tcjit::make_problem_key(spec, "sm_80", false).text, "sm_80");
  ASSERT_TRUE(served.has_value());
  EXPECT_NE(served->table.problem_key.find("m=1..4096"), std::string::npos);
  tcjit::Runtime strict(options(tcjit::MissPolicy::fail));
  EXPECT_EQ(strict.prepare(text).origin(), tcjit::Origin::database);
}

// The fix a MissPolicy::fail miss suggests for a symbolic spec is a command that works for it:
// `tcjit tune` of its sizes as ranges (`tcjit run` needs numbers).
TEST_F(FamilyLookupTest, AFailMissOfASymbolicSpecSuggestsATuneOfARange) {
  tcjit::Runtime rt(options(tcjit::MissPolicy::fail));
  try {
    rt.prepare(gemm("?"));
    FAIL() << "nothing is stored: the prepare must fail";
  } catch (const tcjit::Error &e) {
    EXPECT_NE(e.how_to_fix().find("tcjit tune \"gemm m=1..4096 n=64 k=64"), std::string::npos)
        << e.what();
    EXPECT_EQ(e.how_to_fix().find("tcjit run \"gemm m=?"), std::string::npos) << e.what();
  }
}

// resolve_op says what prepare gets — per bucket for a range, the family's decision for a size —
// and writes nothing: a missing database is not created, an existing one is unchanged.
TEST_F(FamilyLookupTest, ResolveSaysWhatPrepareGetsAndWritesNothing) {
  tcjit::ResolveRequest request;
  request.db_path = db_path_.string();
  const auto spec_of = [](const std::string &text) {
    return tcjit::parse_spec(text).entries.front().spec;
  };
  const tcjit::Resolution none = tcjit::resolve_op(spec_of(gemm("100")), request);
  EXPECT_FALSE(std::filesystem::exists(db_path_));
  ASSERT_EQ(none.kernels.size(), 1u);
  EXPECT_EQ(none.kernels[0].origin, "heuristic");
  EXPECT_FALSE(none.kernels[0].stored);
  EXPECT_TRUE(none.database.empty());

  store_range_table();
  const auto size_before = std::filesystem::file_size(db_path_);
  const auto time_before = std::filesystem::last_write_time(db_path_);
  const tcjit::Resolution concrete = tcjit::resolve_op(spec_of(gemm("100")), request);
  ASSERT_EQ(concrete.kernels.size(), 1u);
  EXPECT_EQ(concrete.kernels[0].config, config_text(large_));
  EXPECT_EQ(concrete.kernels[0].origin, "tuned predicted");
  EXPECT_NE(concrete.kernels[0].decided_for.find("m=1..256"), std::string::npos);
  EXPECT_EQ(concrete.kernels[0].time_us, 2.0);
  EXPECT_FALSE(concrete.kernels[0].stored);
  const tcjit::Resolution ranged = tcjit::resolve_op(spec_of(gemm("?")), request);
  ASSERT_EQ(ranged.kernels.size(), 3u); // sizes in no bucket, then the two buckets
  EXPECT_EQ(ranged.kernels[1].sizes, "m=1..32");
  EXPECT_EQ(ranged.kernels[1].config, config_text(small_));
  EXPECT_EQ(ranged.kernels[2].sizes, "m=33..256");
  EXPECT_EQ(std::filesystem::file_size(db_path_), size_before);
  EXPECT_EQ(std::filesystem::last_write_time(db_path_), time_before);

  tcjit::Runtime rt(options());
  const tcjit::Operation op = rt.prepare(gemm("100"));
  EXPECT_EQ(op.config(), concrete.kernels[0].config);
  EXPECT_EQ(op.kernel_id(), concrete.kernels[0].identity);
  const tcjit::Resolution after = tcjit::resolve_op(spec_of(gemm("100")), request);
  EXPECT_TRUE(after.kernels[0].stored); // prepare compiled and stored it
}

} // namespace
