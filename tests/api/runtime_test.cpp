// tcjit::Runtime / tcjit::Operation (include/tcjit/tcjit.hpp) on the emulator with a temporary
// kernel database.
#include "tcjit/tcjit.hpp"
#include "tcjit/tools.hpp"

#include "emu_runtime_test_base.h"

#include "compiler/dsl/parser.h"
#include "compiler/reference/bind_dims.h"
#include "compiler/reference/conv_geometry.h"
#include "compiler/reference/conv_reference.h"
#include "compiler/reference/gemm_geometry.h"
#include "compiler/reference/gemm_reference.h"
#include "compiler/reference/random_fill.h"
#include "compiler/reference/tolerance.h"
#include "compiler/spec/printer.h"
#include "compiler/spec/problem_key.h"
#include "engine/kernel_records.h"
#include "kernels_db/dispatch.h"
#include "kernels_db/kernels_db.h"
#include "tuner/measure_model.h"
#include "tuner/size_range.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

constexpr const char *small_gemm = "gemm m=32 n=32 k=32 a=f16:row b=f16:col c=f16:row acc=f32";

// A database path of its own per test, removed at the end.
class ApiTest : public tcjit::testing::EmuRuntimeTest {};

TEST_F(ApiTest, OriginsMemoryThenDatabase) {
  tcjit::Runtime first(options());
  const tcjit::Operation compiled = first.prepare(small_gemm);
  EXPECT_EQ(compiled.origin(), tcjit::Origin::compiled_now);
  EXPECT_FALSE(compiled.config().empty());
  EXPECT_EQ(compiled.key_hash_hex().size(), 16u);
  EXPECT_NE(compiled.key_text().find("arch=sm_80"), std::string::npos);
  EXPECT_NE(compiled.spec_text().find("gemm m=32"), std::string::npos);
  EXPECT_GT(compiled.resources().shared_bytes, 0);

  const tcjit::Operation again = first.prepare(small_gemm);
  EXPECT_EQ(again.origin(), tcjit::Origin::memory);
  EXPECT_EQ(again.key_hash(), compiled.key_hash());
  EXPECT_EQ(again.config(), compiled.config());

  tcjit::Runtime second(options());
  const tcjit::Operation stored = second.prepare(small_gemm);
  EXPECT_EQ(stored.origin(), tcjit::Origin::database);
  EXPECT_EQ(stored.key_hash(), compiled.key_hash());
  EXPECT_EQ(stored.config(), compiled.config());
  EXPECT_EQ(stored.resources().registers, compiled.resources().registers);
}

TEST_F(ApiTest, PrepareFromOpSpecMatchesText) {
  tcjit::Runtime rt(options());
  const tcjit::ParseResult parsed = tcjit::parse_spec(small_gemm);
  ASSERT_TRUE(parsed.ok());
  const tcjit::Operation from_text = rt.prepare(small_gemm);
  const tcjit::Operation from_spec = rt.prepare(parsed.entries[0].spec);
  EXPECT_EQ(from_spec.origin(), tcjit::Origin::memory);
  EXPECT_EQ(from_spec.key_text(), from_text.key_text());
}

// Launches `op` at the sizes of `spec` (the operation's spec, or it with its symbolic sizes bound)
// through the API on random inputs and compares D with the CPU reference.
void expect_launch_matches(tcjit::Runtime &rt, const tcjit::Operation &op,
                           const tcjit::OpSpec &spec) {
  const tcjit::GemmGeometry geo = tcjit::gemm_geometry(spec);
  auto random_bytes = [](tcjit::DType t, int64_t count, uint64_t seed) {
    std::vector<std::byte> v(static_cast<size_t>((count * tcjit::dtype_bits(t) + 7) / 8));
    tcjit::fill_random(t, v.data(), count, seed);
    return v;
  };
  const auto a = random_bytes(geo.a.dtype, geo.batch * geo.a.batch_stride, 11);
  const auto b = random_bytes(geo.b.dtype, geo.batch * geo.b.batch_stride, 12);
  const auto c = random_bytes(geo.c.dtype, geo.batch * geo.c.batch_stride, 13);
  const auto bias = random_bytes(geo.c.dtype, geo.n, 14);
  const bool has_bias = spec.epilogue.bias != tcjit::BiasKind::none;

  std::vector<std::byte> expected_c = c;
  const tcjit::MathMode math =
      tcjit::resolve_math(spec.math, tcjit::tf32_disabled_by_environment());
  const tcjit::ReferenceResult ref = tcjit::reference_gemm(
      spec, {a.data(), b.data(), expected_c.data(), has_bias ? bias.data() : nullptr}, math);

  auto upload = [&](const std::vector<std::byte> &host) {
    const tcjit::DeviceAddress p = rt.allocate(host.size());
    rt.copy_to_device(p, host.data(), host.size());
    return p;
  };
  const tcjit::DeviceAddress da = upload(a), db = upload(b), dc = upload(c), dbias = upload(bias);
  tcjit::GemmArgs args{da, db, dc, dc, has_bias ? dbias : 0};
  args.m = geo.m;
  args.n = geo.n;
  args.k = geo.k;
  args.batch = geo.batch;
  op.launch(args);
  std::vector<std::byte> out(c.size());
  rt.copy_to_host(out.data(), dc, out.size());
  for (tcjit::DeviceAddress p : {da, db, dc, dbias})
    rt.free(p);

  const tcjit::CompareReport report = tcjit::compare_with_reference(spec, math, out.data(), ref);
  EXPECT_TRUE(report.ok()) << tcjit::print_spec(spec) << ": " << report.summary();
  EXPECT_EQ(report.count, geo.m * geo.n * geo.batch);
}

void expect_matches_reference(tcjit::Runtime &rt, const std::string &text) {
  const tcjit::Operation op = rt.prepare(text);
  expect_launch_matches(rt, op, op.spec());
}

TEST_F(ApiTest, LaunchMatchesReference) {
  tcjit::Runtime rt(options());
  expect_matches_reference(rt, small_gemm);
  expect_matches_reference(
      rt, "gemm m=48 n=32 k=64 a=f16:row b=f16:row c=f32:row acc=f32 alpha=1 beta=1 bias=col "
          "act=relu");
  expect_matches_reference(rt,
                           "gemm m=32 n=32 k=32 a=f32:row b=f32:row c=f32:row acc=f32 math=f32");
}

// Packed sub-byte inputs through the runtime's launch: pointers and leading dimensions checked in
// bits (two s4 per byte, eight b1), symbolic sizes bound at launch.
TEST_F(ApiTest, PackedInputsLaunchMatchesReference) {
  tcjit::Runtime rt(options());
  expect_matches_reference(rt, "gemm m=40 n=24 k=256 a=s4 b=u4:col c=s32 acc=s32");
  expect_matches_reference(rt, "gemm m=33 n=17 k=384 batch=2 a=b1 b=b1:col c=s8 acc=s32 "
                               "alpha=0.5 bop=xor");
  // symbolic K: 16-byte vectors, K's packing rule checked when the sizes are bound
  const tcjit::Operation op = rt.prepare("gemm m=? n=? k=? a=u4 b=s4:col c=s32 acc=s32");
  for (const int64_t k : {32, 96, 224})
    expect_launch_matches(rt, op, tcjit::bind_gemm_sizes(op.spec(), {29, 19, k, 1}));
  const tcjit::DeviceAddress p = rt.allocate(1 << 16);
  tcjit::GemmArgs args{p, p, p, p};
  args.m = args.n = 16;
  args.k = 100;
  try {
    op.launch(args);
    ADD_FAILURE() << "k=100 launched for packed u4";
  } catch (const tcjit::Error &e) {
    EXPECT_NE(std::string(e.what()).find("not a multiple of 32"), std::string::npos) << e.what();
  }
  rt.free(p);
}

TEST_F(ApiTest, MissPolicyFailOnEmptyDatabase) {
  tcjit::Runtime rt(options(tcjit::MissPolicy::fail));
  try {
    rt.prepare(small_gemm);
    FAIL() << "prepare should have thrown";
  } catch (const tcjit::Error &e) {
    EXPECT_EQ(e.code(), tcjit::ErrorCode::not_found);
    const std::string what = e.what();
    EXPECT_NE(what.find("no kernel for"), std::string::npos) << what;
    EXPECT_NE(what.find("miss policy is fail"), std::string::npos) << what;
    EXPECT_NE(e.how_to_fix().find("tcjit run"), std::string::npos) << e.how_to_fix();
  }
}

TEST_F(ApiTest, BadSpecErrorCarriesDiagnostic) {
  tcjit::Runtime rt(options());
  try {
    rt.prepare("gemm m=64 n=64 k=64 a=fp16:row b=f16");
    FAIL() << "prepare should have thrown";
  } catch (const tcjit::Error &e) {
    EXPECT_EQ(e.code(), tcjit::ErrorCode::bad_spec);
    const std::string what = e.what();
    EXPECT_NE(what.find("unknown dtype 'fp16'"), std::string::npos) << what;
    EXPECT_NE(what.find("did you mean 'f16'"), std::string::npos) << what;
    EXPECT_EQ(e.where(), "prepare");
  }
}

// One kernel serves many sizes: an operation prepared with m=? is compiled once and launched at
// 50 values of M, every result checked against the reference.
TEST_F(ApiTest, OneSymbolicOperationServesFiftySizes) {
  tcjit::RuntimeOptions o = options();
  o.use_database = false;
  tcjit::Runtime rt(o);
  const tcjit::Operation op =
      rt.prepare("gemm m=? n=72 k=40 a=f16:row b=f16:col c=f16:row acc=f32 bias=col act=gelu");
  EXPECT_EQ(op.origin(), tcjit::Origin::compiled_now);
  for (int i = 0; i < 50; ++i) {
    const int64_t m = 1 + (i * 37) % 300; // 1..300, tails of every kind
    SCOPED_TRACE("m=" + std::to_string(m));
    expect_launch_matches(rt, op, tcjit::bind_gemm_sizes(op.spec(), {m, 72, 40, 1}));
  }
}

// Fifty concrete problems that differ only in M: each is its own problem (key), but they share
// kernels: one compile per distinct config the default chooser picks, the rest are served from
// memory; every one verifies.
TEST_F(ApiTest, FiftyProblemsShareTheirKernels) {
  tcjit::RuntimeOptions o = options();
  o.use_database = false;
  tcjit::Runtime rt(o);
  int compiled = 0;
  std::set<std::string> kernels, keys, configs;
  for (int i = 0; i < 50; ++i) {
    const int64_t m = 8 + i * 5; // 8..253
    const tcjit::Operation op = rt.prepare("gemm m=" + std::to_string(m) +
                                           " n=64 k=32 a=bf16:row b=bf16:col c=f32:row acc=f32");
    compiled += op.origin() == tcjit::Origin::compiled_now;
    configs.insert(op.config());
    kernels.insert(op.kernel_id());
    keys.insert(op.key_text());
    if (i % 7 == 0)
      expect_launch_matches(rt, op, op.spec());
  }
  EXPECT_EQ(keys.size(), 50u);
  EXPECT_EQ(kernels.size(), configs.size());
  EXPECT_LE(kernels.size(), 4u);
  EXPECT_EQ(compiled, int(kernels.size()));
}

TEST_F(ApiTest, SymbolicSizesMustBeGivenAtLaunchAndStayInTheirRange) {
  tcjit::RuntimeOptions o = options();
  o.use_database = false;
  tcjit::Runtime rt(o);
  const tcjit::Operation op = rt.prepare("gemm m=1..128 n=? k=32 a=f16:row b=f16:col");
  const tcjit::DeviceAddress p = rt.allocate(1 << 20);
  auto launch_error = [&](tcjit::GemmArgs args) {
    args.a = args.b = args.c = args.d = p;
    try {
      op.launch(args);
    } catch (const tcjit::Error &e) {
      EXPECT_EQ(e.code(), tcjit::ErrorCode::invalid_argument);
      EXPECT_EQ(e.where(), "launch");
      return std::string(e.what());
    }
    return std::string("no error");
  };
  tcjit::GemmArgs args;
  args.m = 64;
  EXPECT_NE(launch_error(args).find("n is symbolic in the prepared spec"), std::string::npos);
  EXPECT_NE(launch_error(args).find("pass GemmArgs::n"), std::string::npos);
  args.n = 32;
  args.m = 200;
  EXPECT_NE(launch_error(args).find("200"), std::string::npos) << "outside m=1..128";
  args.m = 64;
  args.k = 16;
  EXPECT_NE(launch_error(args).find("GemmArgs::k = 16, but the operation was prepared for k=32"),
            std::string::npos)
      << "k is fixed to 32";
  args.k = -1;
  EXPECT_NE(launch_error(args).find("negative"), std::string::npos);
  rt.free(p);
}

// Sizes given at launch obey the spec's rules like written ones: a leading dimension too small
// for them, or a size past the kernel's 32-bit arguments, is an Error, never a silent no-op.
TEST_F(ApiTest, LaunchSizesAreValidatedLikeTheSpec) {
  tcjit::RuntimeOptions o = options();
  o.use_database = false;
  tcjit::Runtime rt(o);
  const tcjit::DeviceAddress p = rt.allocate(1 << 20);
  auto launch_error = [&](const char *text, int64_t m, int64_t n) {
    const tcjit::Operation op = rt.prepare(text);
    tcjit::GemmArgs args{p, p, p, p};
    args.m = m;
    args.n = n;
    try {
      op.launch(args);
    } catch (const tcjit::Error &e) {
      EXPECT_EQ(e.code(), tcjit::ErrorCode::invalid_argument) << e.what();
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string ldc = launch_error("gemm m=64 n=? k=64 a=f16 b=f16:col c=f32 ldc=256", 0, 512);
  EXPECT_NE(ldc.find("ldc"), std::string::npos) << ldc;
  const std::string huge = launch_error("gemm m=? n=64 k=64 a=f16 b=f16:col", int64_t{1} << 31, 0);
  EXPECT_NE(huge.find("invalid"), std::string::npos) << huge;
  rt.free(p);
}

TEST_F(ApiTest, CudaWithoutDriverSaysSo) {
  try {
    tcjit::RuntimeOptions o;
    o.use_database = false;
    o.device = "cuda";
    tcjit::Runtime rt(o);
    GTEST_SKIP() << "a CUDA device is present: " << rt.device_name();
  } catch (const tcjit::Error &e) {
    EXPECT_EQ(e.code(), tcjit::ErrorCode::unsupported);
    const std::string what = e.what();
    EXPECT_NE(what.find("emu"), std::string::npos) << what; // the fix: use the emulator
  }
}

// A spec with a size range and a dispatch table in the database (what `tcjit tune` stores for it):
// each launch runs the kernel of its sizes' bucket, and each verifies.
TEST_F(ApiTest, SizeRangeLaunchesTheKernelOfTheirBucket) {
  const std::string text = "gemm m=1..256 n=64 k=64 a=f16:row b=f16:col c=f16:row acc=f32";
  store_two_bucket_table(text, {32, 32, 32, 16, 16, 3, 1, 1, 8, 8},
                         {64, 64, 32, 32, 32, 3, 1, 1, 8, 8});
  tcjit::Runtime rt(options()); // the table's configs are compiled now (no binaries stored)
  const tcjit::Operation op = rt.prepare(text);
  tcjit::GemmArgs sizes;
  sizes.m = 16;
  EXPECT_EQ(op.config_for(sizes).substr(0, 17), "32x32x32 w16x16 s");
  sizes.m = 33;
  EXPECT_EQ(op.config_for(sizes).substr(0, 17), "64x64x32 w32x32 s");
  for (int64_t m : {1, 16, 32, 33, 100, 256}) {
    SCOPED_TRACE("m=" + std::to_string(m));
    expect_launch_matches(rt, op, tcjit::bind_gemm_sizes(op.spec(), {m, 64, 64, 1}));
  }
  sizes.m = 300;
  EXPECT_THROW(op.config_for(sizes), tcjit::Error);
}

// Replacing (or destroying) a runtime stops its background tune and waits for it: nothing it
// uses is freed under it (ASan checks this).
TEST_F(ApiTest, ReplacingARuntimeStopsItsBackgroundTune) {
  tcjit::RuntimeOptions o = options(tcjit::MissPolicy::background);
  o.tune_budget = 50;
  tcjit::Runtime rt(o);
  for (const char *spec : {"gemm m=256 n=256 k=256 a=f16:row b=f16:col c=f16:row acc=f32",
                           "gemm m=128 n=256 k=512 a=f16:row b=f16:col c=f16:row acc=f32"})
    EXPECT_EQ(rt.prepare(spec).origin(), tcjit::Origin::compiled_now);
  rt = tcjit::Runtime(options(tcjit::MissPolicy::fail));
  // The new runtime finds the kernels the old one compiled, whether or not its tunes finished.
  EXPECT_NE(rt.prepare("gemm m=256 n=256 k=256 a=f16:row b=f16:col c=f16:row acc=f32").origin(),
            tcjit::Origin::compiled_now);
}

// The whole path of a size range: tuned (what `tcjit tune` does), stored, then prepared by a
// runtime that may not compile anything: every kernel of the table comes from the database, and
// each launch runs its bucket's.
TEST_F(ApiTest, ATunedSizeRangeIsServedFromTheDatabase) {
  const std::string text = "gemm m=1..512 n=128 k=256 a=f16:row b=f16:col c=f16:row acc=f32";
  tcjit::tuner::TuneTask ranged;
  ranged.spec = tcjit::parse_spec(text).entries.front().spec;
  ranged.arch = "sm_80";
  ranged.key = tcjit::make_problem_key(ranged.spec, "sm_80", false);
  tcjit::kernels_db::DispatchTable table;
  {
    auto db = tcjit::kernels_db::KernelsDb::open(db_path_);
    auto measurer = tcjit::tuner::make_model_measurer(tcjit::tuner::a100_model(), nullptr);
    std::string error;
    const auto sizes = tcjit::tuner::representative_tasks(ranged, error);
    ASSERT_FALSE(sizes.empty()) << error;
    tcjit::tuner::TuneOptions topt;
    topt.measurer = measurer.get();
    topt.budget.candidates = 2;
    std::vector<tcjit::tuner::TuneResult> results;
    for (const auto &t : sizes)
      results.push_back(tcjit::tuner::tune_problem(t, topt, &db));
    ASSERT_GE(tcjit::tuner::store_dispatch_table(ranged, sizes, results, db), 1);
    table = *db.find_dispatch_table(ranged.key.text, "sm_80");
  }
  tcjit::Runtime rt(options(tcjit::MissPolicy::fail));
  const tcjit::Operation op = rt.prepare(text);
  EXPECT_EQ(op.origin(), tcjit::Origin::database);
  const tcjit::kernels_db::DispatchIndex index(table);
  for (int64_t m : {1, 7, 64, 100, 300, 512}) {
    SCOPED_TRACE("m=" + std::to_string(m));
    tcjit::GemmArgs sizes;
    sizes.m = m;
    const auto *entry = index.find({m, 128, 256, 1});
    ASSERT_NE(entry, nullptr);
    tcjit::codegen::TileConfig expected;
    std::string error;
    ASSERT_TRUE(tcjit::codegen::parse_tile_config(op.config_for(sizes), expected, error));
    EXPECT_EQ(tcjit::engine::config_json(expected), entry->config_json);
    expect_launch_matches(rt, op, tcjit::bind_gemm_sizes(op.spec(), {m, 128, 256, 1}));
  }
}

TEST_F(ApiTest, TuneBudgetOutOfRangeIsRefused) {
  tcjit::RuntimeOptions o = options(tcjit::MissPolicy::tune);
  o.tune_budget = 0;
  try {
    tcjit::Runtime rt(o);
    FAIL() << "a tune budget of 0 was accepted";
  } catch (const tcjit::Error &e) {
    EXPECT_EQ(e.code(), tcjit::ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("tune_budget = 0"), std::string::npos) << e.what();
  }
}

// RuntimeOptions::emulator_timeout_seconds reaches the emulator's launches: an act=custom function
// that never returns fails the verification at the limit (Error(device), "time limit reached")
// instead of running for minutes; a negative limit is refused.
TEST_F(ApiTest, EmulatorTimeoutEndsALaunchThatNeverFinishes) {
  const std::filesystem::path act = db_path_.string() + ".spin.cu";
  std::ofstream(act) << "__device__ float act(float x) {\n  volatile float y = x;\n"
                        "  while (y == y) y = y + 0.0f;\n  return y;\n}\n";
  const std::vector<tcjit::WorkloadEntry> ops = tcjit::parse_ops(
      "gemm m=16 n=16 k=16 a=f16 b=f16:col c=f16 act=custom:" + act.string(), "<test>");
  tcjit::RuntimeOptions o = options();
  o.use_database = false;
  o.backend = "nvrtc";
  o.emulator_timeout_seconds = 1;
  tcjit::Runtime rt(o);
  try {
    rt.verify(ops.front().spec, {});
    ADD_FAILURE() << "a launch that never ends finished";
  } catch (const tcjit::Error &e) {
    EXPECT_EQ(e.code(), tcjit::ErrorCode::device) << e.what();
    EXPECT_NE(e.problem().find("time limit reached: the launch ran longer than 1 s"),
              std::string::npos)
        << e.what();
  }
  std::filesystem::remove(act);
  o.emulator_timeout_seconds = -1;
  try {
    tcjit::Runtime bad(o);
    ADD_FAILURE() << "a negative timeout was accepted";
  } catch (const tcjit::Error &e) {
    EXPECT_EQ(e.code(), tcjit::ErrorCode::invalid_argument);
    EXPECT_NE(e.problem().find("emulator_timeout_seconds"), std::string::npos) << e.what();
  }
}

// MissPolicy::tune: the miss is tuned now (the cost model, each candidate verified on an
// emulator), the winner is stored and used; another runtime finds it in the database.
TEST_F(ApiTest, MissPolicyTuneTunesNowAndStoresTheWinner) {
  constexpr const char *spec = "gemm m=128 n=128 k=512 a=f16:row b=f16:col c=f16:row acc=f32";
  std::string tuned_config;
  {
    tcjit::RuntimeOptions o = options(tcjit::MissPolicy::tune);
    o.tune_budget = 4;
    tcjit::Runtime rt(o);
    const tcjit::Operation op = rt.prepare(spec);
    EXPECT_EQ(op.origin(), tcjit::Origin::tuned_now);
    tuned_config = op.config();
    expect_launch_matches(rt, op, op.spec());
  }
  tcjit::Runtime again(options(tcjit::MissPolicy::fail));
  const tcjit::Operation op = again.prepare(spec);
  EXPECT_EQ(op.origin(), tcjit::Origin::database);
  EXPECT_EQ(op.config(), tuned_config);
}

// MissPolicy::background: the heuristic's kernel now, the tuned winner once the background tune
// has stored it; launches stay correct throughout.
TEST_F(ApiTest, MissPolicyBackgroundSwitchesToTheWinner) {
  constexpr const char *spec = "gemm m=256 n=64 k=2048 a=bf16:row b=bf16:col c=f32:row acc=f32";
  tcjit::RuntimeOptions o = options(tcjit::MissPolicy::background);
  o.tune_budget = 4;
  tcjit::Runtime rt(o);
  const tcjit::Operation op = rt.prepare(spec);
  EXPECT_EQ(op.origin(), tcjit::Origin::compiled_now);
  expect_launch_matches(rt, op, op.spec());
  rt.wait_for_tuning();
  expect_launch_matches(rt, op, op.spec());
  // The operation now runs what a fresh runtime takes from the database: the tune's winner.
  tcjit::Runtime fresh(options(tcjit::MissPolicy::fail));
  const tcjit::Operation stored = fresh.prepare(spec);
  EXPECT_EQ(stored.origin(), tcjit::Origin::database);
  EXPECT_EQ(op.config(), stored.config());
}

TEST_F(ApiTest, NoDatabaseCompilesEachRuntime) {
  tcjit::RuntimeOptions o;
  o.use_database = false;
  o.device = "emu";
  tcjit::Runtime rt(o);
  EXPECT_EQ(rt.database_path(), "");
  EXPECT_EQ(rt.prepare(small_gemm).origin(), tcjit::Origin::compiled_now);
  EXPECT_FALSE(std::filesystem::exists(db_path_));
}

TEST_F(ApiTest, ConcurrentPrepareCompilesOnce) {
  tcjit::Runtime rt(options());
  std::vector<tcjit::Origin> origins(4);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < origins.size(); ++i)
    threads.emplace_back([&, i] { origins[i] = rt.prepare(small_gemm).origin(); });
  for (std::thread &t : threads)
    t.join();
  EXPECT_EQ(std::count(origins.begin(), origins.end(), tcjit::Origin::compiled_now), 1);
  EXPECT_EQ(std::count(origins.begin(), origins.end(), tcjit::Origin::memory), 3);
}

} // namespace

namespace conv_api {

std::vector<std::byte> random_tensor(tcjit::DType t, int64_t count, uint64_t seed) {
  std::vector<std::byte> v(static_cast<size_t>((count * tcjit::dtype_bits(t) + 7) / 8));
  tcjit::fill_random(t, v.data(), count, seed);
  return v;
}

// Launches a convolution operation at batch n through the API and compares the written tensor
// with reference_conv.
void expect_conv_matches(tcjit::Runtime &rt, const tcjit::Operation &op, int64_t n) {
  tcjit::OpSpec any_batch = op.spec();
  any_batch.conv.n = tcjit::Dim::any_size();
  const tcjit::OpSpec spec = tcjit::bind_conv_batch(any_batch, n);
  const tcjit::ConvGeometry g = tcjit::conv_geometry(spec);
  std::vector<std::byte> x = random_tensor(g.x_dtype, tcjit::x_element_count(g), 21);
  std::vector<std::byte> w = random_tensor(g.filter_dtype, tcjit::filter_element_count(g), 22);
  std::vector<std::byte> y = random_tensor(g.y_dtype, tcjit::y_element_count(g), 23);
  const int64_t out_channels = g.pass == tcjit::ConvPass::dgrad ? g.c : g.k;
  const auto bias =
      random_tensor(g.pass == tcjit::ConvPass::dgrad ? g.x_dtype : g.y_dtype, out_channels, 24);
  const bool has_bias = spec.epilogue.bias != tcjit::BiasKind::none;
  std::vector<std::byte> rx = x, rw = w, ry = y;
  const tcjit::MathMode math = tcjit::resolve_math(spec.math, false);
  const tcjit::ReferenceResult ref = tcjit::reference_conv(
      spec, {rx.data(), rw.data(), ry.data(), has_bias ? bias.data() : nullptr}, math);
  auto upload = [&](const std::vector<std::byte> &host) {
    const tcjit::DeviceAddress p = rt.allocate(host.size());
    rt.copy_to_device(p, host.data(), host.size());
    return p;
  };
  const tcjit::DeviceAddress dx = upload(x), dw = upload(w), dy = upload(y), db = upload(bias);
  tcjit::ConvArgs args{dx, dw, dy, has_bias ? db : 0};
  args.n = op.spec().conv.n == tcjit::Dim::fixed_size(n) ? 0 : n;
  op.launch_conv(args);
  std::vector<std::byte> &host_out = g.pass == tcjit::ConvPass::fprop   ? y
                                     : g.pass == tcjit::ConvPass::dgrad ? x
                                                                        : w;
  const tcjit::DeviceAddress out = g.pass == tcjit::ConvPass::fprop   ? dy
                                   : g.pass == tcjit::ConvPass::dgrad ? dx
                                                                      : dw;
  rt.copy_to_host(host_out.data(), out, host_out.size());
  for (tcjit::DeviceAddress p : {dx, dw, dy, db})
    rt.free(p);
  const tcjit::CompareReport report =
      tcjit::compare_with_reference(spec, math, host_out.data(), ref);
  EXPECT_TRUE(report.ok()) << tcjit::print_spec(spec) << ": " << report.summary();
  EXPECT_GT(report.count, 0);
}

} // namespace conv_api

// One prepared `n=?` convolution serves every batch size with one kernel; each pass works through
// launch_conv; GEMM and convolution arguments are not interchangeable.
TEST_F(ApiTest, ConvolutionsLaunchAtAnyBatchSize) {
  tcjit::Runtime rt(options());
  const tcjit::Operation op =
      rt.prepare("conv2d n=? h=6 w=5 c=16 k=24 r=3 s=3 pad=1 groups=2 x=f16 bias=col act=relu");
  for (int64_t n : {1, 3})
    conv_api::expect_conv_matches(rt, op, n);
  EXPECT_EQ(rt.prepare("conv2d n=7 h=6 w=5 c=16 k=24 r=3 s=3 pad=1 groups=2 x=f16 bias=col "
                       "act=relu")
                .kernel_id(),
            op.kernel_id());
  for (const char *pass : {"dgrad", "wgrad"}) {
    const tcjit::Operation p = rt.prepare(
        std::string("conv2d n=2 h=7 w=7 c=8 k=16 r=3 s=3 pad=1 stride=2 x=f16 pass=") + pass);
    conv_api::expect_conv_matches(rt, p, 2);
  }
  // The batch size is a launch argument whatever n the spec was prepared with.
  const tcjit::Operation fixed = rt.prepare("conv2d n=2 h=6 w=5 c=16 k=24 r=3 s=3 pad=1 x=f16");
  const tcjit::Operation ranged = rt.prepare("conv2d n=1..2 h=6 w=5 c=16 k=24 r=3 s=3 pad=1 x=f16");
  for (int64_t n : {1, 2, 3}) {
    conv_api::expect_conv_matches(rt, fixed, n);
    conv_api::expect_conv_matches(rt, ranged, n);
  }
  try {
    op.launch_conv({1, 2, 3, 4});
    FAIL() << "a launch without n of an n=? operation must be refused";
  } catch (const tcjit::Error &e) {
    EXPECT_NE(std::string(e.what()).find("n is symbolic"), std::string::npos) << e.what();
  }
  try {
    op.launch(tcjit::GemmArgs{1, 2, 3, 3, 4});
    FAIL() << "GemmArgs for a convolution must be refused";
  } catch (const tcjit::Error &e) {
    EXPECT_NE(std::string(e.what()).find("launch a convolution with ConvArgs"), std::string::npos)
        << e.what();
  }
}
