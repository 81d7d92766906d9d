// What a service asks of a prepared operation (include/tcjit/tcjit.hpp, tcjit.h): the predicted
// time of a launch (measured when the database decided it, else the cost model's), the config per
// size and the kernel identity from C, the library's version; every message in the words of the
// API it comes from; an unsupported layout reported as unsupported; and a symbolic spec prepared
// without compiling (its kernel compiled on a background thread, correct at every size).
#include "emu_runtime_test_base.h"
#include "expect_error.h"
#include "tcjit/tcjit.h"
#include "tcjit/tcjit.hpp"

#include "api/runtime_state.h"
#include "compiler/dsl/parser.h"
#include "compiler/reference/bind_dims.h"
#include "compiler/reference/gemm_geometry.h"
#include "compiler/reference/gemm_reference.h"
#include "compiler/reference/random_fill.h"
#include "compiler/reference/tolerance.h"
#include "compiler/spec/printer.h"
#include "compiler/spec/problem_key.h"
#include "engine/kernel_records.h"
#include "kernels_db/kernels_db.h"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <future>
#include <string>
#include <vector>

namespace {

namespace kdb = tcjit::kernels_db;
using tcjit::testing::expect_error;

constexpr const char *kSymbolic = "gemm m=? n=? k=? a=f16:row b=f16:col c=f16:row acc=f32";
constexpr const char *kSymbolicM = "gemm m=? n=512 k=512 a=f16:row b=f16:col c=f16:row acc=f32";

class ServiceApiTest : public tcjit::testing::EmuRuntimeTest {
protected:
  void TearDown() override {
    tcjit::api::set_background_compile_hook(nullptr);
    EmuRuntimeTest::TearDown();
  }
  tcjit_runtime_options c_options(tcjit_miss_policy on_miss = TCJIT_MISS_HEURISTIC) const {
    tcjit_runtime_options o{};
    o.db_path = db_path_.c_str();
    o.device = "emu";
    o.on_miss = on_miss;
    return o;
  }
};

// The message of a failed C call holds no C++ API name (Type::member).
void expect_c_words(const std::string &message) {
  EXPECT_EQ(message.find("::"), std::string::npos) << message;
  EXPECT_EQ(message.find("--device"), std::string::npos) << message;
}

std::vector<std::byte> random_bytes(tcjit::DType t, int64_t count, uint64_t seed) {
  std::vector<std::byte> v(static_cast<size_t>((count * tcjit::dtype_bits(t) + 7) / 8));
  tcjit::fill_random(t, v.data(), count, seed);
  return v;
}

// Launches `op` at sizes m, n, k (batch 1, beta 0) and checks D against the CPU reference.
void expect_sized_launch_matches(tcjit::Runtime &rt, const tcjit::Operation &op, int64_t m,
                                 int64_t n, int64_t k) {
  const tcjit::OpSpec spec = tcjit::bind_gemm_sizes(op.spec(), {m, n, k, 1});
  const tcjit::GemmGeometry geo = tcjit::gemm_geometry(spec);
  const auto a = random_bytes(geo.a.dtype, geo.a.batch_stride, 31);
  const auto b = random_bytes(geo.b.dtype, geo.b.batch_stride, 32);
  std::vector<std::byte> c(static_cast<size_t>(geo.c.batch_stride * 2));
  const tcjit::MathMode math =
      tcjit::resolve_math(spec.math, tcjit::tf32_disabled_by_environment());
  const tcjit::ReferenceResult ref =
      tcjit::reference_gemm(spec, {a.data(), b.data(), c.data(), nullptr}, math);
  const tcjit::DeviceAddress da = rt.allocate(a.size()), db = rt.allocate(b.size()),
                             dd = rt.allocate(c.size());
  rt.copy_to_device(da, a.data(), a.size());
  rt.copy_to_device(db, b.data(), b.size());
  tcjit::GemmArgs args{da, db, dd, dd, 0};
  args.m = m;
  args.n = n;
  args.k = k;
  op.launch(args);
  std::vector<std::byte> out(c.size());
  rt.copy_to_host(out.data(), dd, out.size());
  for (tcjit::DeviceAddress p : {da, db, dd})
    rt.free(p);
  const tcjit::CompareReport report = tcjit::compare_with_reference(spec, math, out.data(), ref);
  EXPECT_TRUE(report.ok()) << tcjit::print_spec(spec) << ": " << report.summary();
  EXPECT_EQ(report.count, m * n);
}

// Holds every background compile until released (or 120 s passed), counting them.
struct CompileGate {
  std::promise<void> open;
  std::shared_future<void> opened = open.get_future().share();
  std::atomic<int> started{0};
  CompileGate() {
    tcjit::api::set_background_compile_hook([this] {
      ++started;
      opened.wait_for(std::chrono::seconds(120));
    });
  }
  ~CompileGate() {
    release();
    tcjit::api::set_background_compile_hook(nullptr);
  }
  void release() {
    if (!released) {
      released = true;
      open.set_value();
    }
  }
  bool released = false;
};

TEST_F(ServiceApiTest, SymbolicSpecIsPreparedWithoutCompilingAndServesEverySize) {
  tcjit::Runtime rt(options());
  CompileGate gate;
  // prepare() returns while the compile is held: it did not compile.
  const tcjit::Operation op = rt.prepare(kSymbolic);
  EXPECT_EQ(op.origin(), tcjit::Origin::compiled_now);
  EXPECT_FALSE(op.ready());
  // The same spec prepared again shares the pending kernel.
  const tcjit::Operation again = rt.prepare(kSymbolic);
  EXPECT_EQ(again.origin(), tcjit::Origin::memory);
  EXPECT_FALSE(again.ready());
  gate.release();
  EXPECT_FALSE(op.config().empty()); // waits for the compile
  EXPECT_TRUE(op.ready());
  EXPECT_EQ(gate.started.load(), 1);
  EXPECT_EQ(again.kernel_id(), op.kernel_id());
  // Aligned and less-aligned sizes alike (the kernel of a fully symbolic spec reads one element
  // at a time).
  for (const auto &[m, n, k] : std::vector<std::array<int64_t, 3>>{
           {64, 64, 64}, {37, 19, 23}, {8, 24, 40}, {1, 1, 1}, {130, 3, 17}})
    expect_sized_launch_matches(rt, op, m, n, k);
  // A fresh runtime finds the stored kernel: ready at once, nothing compiled.
  tcjit::Runtime fresh(options());
  const tcjit::Operation stored = fresh.prepare(kSymbolic);
  EXPECT_EQ(stored.origin(), tcjit::Origin::database);
  EXPECT_TRUE(stored.ready());
  EXPECT_EQ(gate.started.load(), 1);
}

TEST_F(ServiceApiTest, CPrepareOfSymbolicSpecReturnsBeforeTheCompile) {
  // tcjit_prepare returns while the compile is held; tcjit_operation_config waits for it.
  tcjit_runtime_options o = c_options();
  tcjit_runtime *rt = nullptr;
  ASSERT_EQ(tcjit_runtime_open(&o, &rt), TCJIT_OK) << tcjit_last_error_message();
  CompileGate gate;
  tcjit_operation *op = nullptr;
  ASSERT_EQ(tcjit_prepare(rt, kSymbolicM, &op), TCJIT_OK) << tcjit_last_error_message();
  gate.release();
  tcjit_runtime_close(rt); // waits for the compile; the operation stays usable
  const char *config = tcjit_operation_config(op);
  ASSERT_NE(config, nullptr) << tcjit_last_error_message();
  EXPECT_NE(std::string(config).find("va8 vb8"), std::string::npos) << config;
  EXPECT_EQ(gate.started.load(), 1); // compiled in the background, after prepare returned
  tcjit_operation_release(op);
}

TEST_F(ServiceApiTest, FailedBackgroundCompileFailsEveryUseOfTheKernel) {
  tcjit::api::set_background_compile_hook([] {
    throw tcjit::Error(tcjit::ErrorCode::device, "the compile failed here", "prepare", "");
  });
  tcjit_runtime_options o = c_options();
  tcjit_runtime *rt = nullptr;
  ASSERT_EQ(tcjit_runtime_open(&o, &rt), TCJIT_OK) << tcjit_last_error_message();
  tcjit_operation *op = nullptr;
  ASSERT_EQ(tcjit_prepare(rt, kSymbolicM, &op), TCJIT_OK) << tcjit_last_error_message();
  EXPECT_EQ(tcjit_operation_config(op), nullptr);
  std::string message = tcjit_last_error_message();
  EXPECT_EQ(message.rfind("tcjit: tcjit_operation_config: the compile failed here", 0), 0u)
      << message;
  EXPECT_EQ(tcjit_launch_gemm_sized(op, 64, 0, 0, 0, 256, 256, 0, 256, 0, nullptr),
            TCJIT_ERROR_DEVICE);
  message = tcjit_last_error_message();
  EXPECT_EQ(message.rfind("tcjit: tcjit_launch_gemm_sized: the compile failed here", 0), 0u)
      << message;
  EXPECT_EQ(tcjit_operation_kernel_id(op), nullptr);
  tcjit_operation_release(op);
  tcjit_runtime_close(rt);
}

TEST_F(ServiceApiTest, PredictedTimeIsTheCostModelsAtTheLaunchSizes) {
  tcjit::Runtime rt(options());
  const tcjit::Operation op = rt.prepare(kSymbolicM);
  tcjit::GemmArgs small, large;
  small.m = 64;
  large.m = 8192;
  const std::optional<tcjit::TimeEstimate> t_small = op.predicted_time(small);
  const std::optional<tcjit::TimeEstimate> t_large = op.predicted_time(large);
  ASSERT_TRUE(t_small && t_large);
  EXPECT_FALSE(t_small->measured);
  EXPECT_GT(t_small->time_us, 0);
  EXPECT_GT(t_large->time_us, t_small->time_us);
  expect_error([&] { (void)op.predicted_time({}); }, tcjit::ErrorCode::invalid_argument,
               "m is symbolic");
  // A convolution's time at its batch size.
  const tcjit::Operation conv =
      rt.prepare("conv2d n=? h=8 w=8 c=16 k=16 r=3 s=3 pad=1 x=f16 acc=f32");
  tcjit::ConvArgs one, many;
  one.n = 1;
  many.n = 64;
  ASSERT_TRUE(conv.predicted_time_conv(one) && conv.predicted_time_conv(many));
  EXPECT_GT(conv.predicted_time_conv(many)->time_us, conv.predicted_time_conv(one)->time_us);
}

TEST_F(ServiceApiTest, PredictedTimeIsTheDatabasesMeasurementOfTheDecision) {
  const char *spec_text = "gemm m=128 n=128 k=64 a=f16:row b=f16:col c=f16:row acc=f32";
  const tcjit::codegen::TileConfig config{32, 32, 32, 16, 16, 3, 1, 1, 8, 8};
  const tcjit::OpSpec spec = tcjit::parse_spec(spec_text).entries.front().spec;
  const tcjit::ProblemKey key = tcjit::make_problem_key(spec, "sm_80", false);
  const int64_t now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                             std::chrono::system_clock::now().time_since_epoch())
                             .count();
  {
    // What a tune on a GPU stores: the measurement and the winner's one-bucket table.
    auto db = kdb::KernelsDb::open(db_path_.string());
    db.put_problem(tcjit::engine::problem_record(spec, key, "sm_80"));
    kdb::ResultRecord result;
    result.problem_key = key.text;
    result.config_json = tcjit::engine::config_json(config);
    result.arch = "sm_80";
    result.timing = kdb::Timing{12.5, 12.4, 12.6, 0.01};
    result.provenance.device = "NVIDIA A100-SXM4-80GB";
    result.tuner_version = "tcjit-tuner 1 / 0.1.0 / cuda";
    result.measured_ms = now_ms;
    db.put_result(result);
    kdb::DispatchTable table;
    table.problem_key = key.text;
    table.arch = "sm_80";
    table.tuner_version = result.tuner_version;
    table.created_ms = now_ms;
    table.entries.push_back({"{}", result.config_json, 12.5, kdb::ProvenanceKind::measured});
    db.put_dispatch_table(table);
  }
  tcjit::Runtime rt(options());
  const tcjit::Operation op = rt.prepare(spec_text);
  ASSERT_EQ(op.config(), tcjit::codegen::to_string(config));
  const std::optional<tcjit::TimeEstimate> t = op.predicted_time({});
  ASSERT_TRUE(t);
  EXPECT_TRUE(t->measured);
  EXPECT_DOUBLE_EQ(t->time_us, 12.5);
}

TEST_F(ServiceApiTest, CApiGivesVersionConfigPerSizeKernelIdAndPredictedTime) {
  int major = -1, minor = -1, patch = -1;
  tcjit_version_numbers(&major, &minor, &patch);
  ASSERT_NE(tcjit_version(), nullptr);
  EXPECT_EQ(std::string(tcjit_version()),
            std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch));
  EXPECT_GE(major, 0);

  tcjit_runtime_options o = c_options();
  tcjit_runtime *rt = nullptr;
  ASSERT_EQ(tcjit_runtime_open(&o, &rt), TCJIT_OK) << tcjit_last_error_message();
  tcjit_operation *op = nullptr;
  ASSERT_EQ(tcjit_prepare(rt, kSymbolicM, &op), TCJIT_OK) << tcjit_last_error_message();
  const char *config = tcjit_operation_config_for(op, 300, 0, 0, 0);
  ASSERT_NE(config, nullptr) << tcjit_last_error_message();
  EXPECT_STREQ(config, tcjit_operation_config(op));
  EXPECT_EQ(tcjit_operation_config_for(op, 0, 0, 0, 0), nullptr);
  const std::string symbolic = tcjit_last_error_message();
  EXPECT_NE(symbolic.find("tcjit_operation_config_for"), std::string::npos) << symbolic;
  EXPECT_NE(symbolic.find("parameter m"), std::string::npos) << symbolic;
  expect_c_words(symbolic);
  EXPECT_EQ(tcjit_operation_config_for(op, 300, 256, 0, 0), nullptr); // n is 512
  expect_c_words(tcjit_last_error_message());

  const char *id = tcjit_operation_kernel_id(op);
  ASSERT_NE(id, nullptr);
  EXPECT_FALSE(std::string(id).empty());

  double us = 0;
  int measured = -1;
  ASSERT_EQ(tcjit_operation_predicted_time(op, 300, 0, 0, 0, &us, &measured), TCJIT_OK)
      << tcjit_last_error_message();
  EXPECT_GT(us, 0);
  EXPECT_EQ(measured, 0);
  EXPECT_EQ(tcjit_operation_predicted_time(op, 0, 0, 0, 0, &us, &measured),
            TCJIT_ERROR_INVALID_ARGUMENT);
  expect_c_words(tcjit_last_error_message());
  EXPECT_EQ(tcjit_operation_predicted_time_conv(op, 1, &us, &measured),
            TCJIT_ERROR_INVALID_ARGUMENT);
  tcjit_operation_release(op);
  tcjit_runtime_close(rt);
}

TEST_F(ServiceApiTest, CApiMessagesUseCNames) {
  // A database file that is not a tcjit database: the fix names the C options.
  const std::string not_db = db_path_.string() + ".txt";
  std::ofstream(not_db) << "not a database\n";
  tcjit_runtime_options o = c_options();
  o.db_path = not_db.c_str();
  tcjit_runtime *rt = nullptr;
  EXPECT_NE(tcjit_runtime_open(&o, &rt), TCJIT_OK);
  std::string message = tcjit_last_error_message();
  EXPECT_NE(message.find("tcjit: tcjit_runtime_open:"), std::string::npos) << message;
  EXPECT_NE(message.find("tcjit_runtime_options.db_path"), std::string::npos) << message;
  EXPECT_NE(message.find("tcjit_runtime_options.no_database = 1"), std::string::npos) << message;
  expect_c_words(message);
  std::remove(not_db.c_str());

  // A miss under TCJIT_MISS_FAIL: the fix names TCJIT_MISS_HEURISTIC.
  o = c_options(TCJIT_MISS_FAIL);
  ASSERT_EQ(tcjit_runtime_open(&o, &rt), TCJIT_OK) << tcjit_last_error_message();
  tcjit_operation *op = nullptr;
  EXPECT_EQ(tcjit_prepare(rt, "gemm m=64 n=64 k=64 a=f16 b=f16:col", &op), TCJIT_ERROR_NOT_FOUND);
  message = tcjit_last_error_message();
  EXPECT_NE(message.find("tcjit: tcjit_prepare:"), std::string::npos) << message;
  EXPECT_NE(message.find("TCJIT_MISS_HEURISTIC"), std::string::npos) << message;
  expect_c_words(message);
  tcjit_runtime_close(rt);

  // A device allocation that fails: tcjit_malloc's error.
  o = c_options();
  ASSERT_EQ(tcjit_runtime_open(&o, &rt), TCJIT_OK) << tcjit_last_error_message();
  tcjit_device_ptr p = 0;
  EXPECT_NE(tcjit_malloc(rt, size_t(1) << 60, &p), TCJIT_OK);
  message = tcjit_last_error_message();
  EXPECT_EQ(message.rfind("tcjit: tcjit_malloc:", 0), 0u) << message;
  expect_c_words(message);

  // A gemm operation launched as a convolution: the fix names the C launches.
  ASSERT_EQ(tcjit_prepare(rt, "gemm m=16 n=16 k=16 a=f16 b=f16:col", &op), TCJIT_OK);
  EXPECT_EQ(tcjit_launch_conv(op, 1, 256, 256, 256, 0, nullptr), TCJIT_ERROR_INVALID_ARGUMENT);
  message = tcjit_last_error_message();
  EXPECT_NE(message.find("tcjit_launch_gemm"), std::string::npos) << message;
  expect_c_words(message);
  tcjit_operation_release(op);
  tcjit_runtime_close(rt);
}

TEST_F(ServiceApiTest, NoCudaDeviceSaysWhichOptionToSet) {
  tcjit::RuntimeOptions o = options();
  o.device = "cuda";
  std::string cxx;
  try {
    tcjit::Runtime rt(o);
    GTEST_SKIP() << "a CUDA device is present: nothing to refuse";
  } catch (const tcjit::Error &e) {
    EXPECT_EQ(e.code(), tcjit::ErrorCode::unsupported);
    cxx = e.what();
  }
  EXPECT_NE(cxx.find("set RuntimeOptions::device to \"emu\" or \"auto\""), std::string::npos)
      << cxx;
  EXPECT_EQ(cxx.find("--device"), std::string::npos) << cxx;
  tcjit_runtime_options c = c_options();
  c.device = "cuda";
  tcjit_runtime *rt = nullptr;
  EXPECT_EQ(tcjit_runtime_open(&c, &rt), TCJIT_ERROR_UNSUPPORTED);
  const std::string message = tcjit_last_error_message();
  EXPECT_NE(message.find("set tcjit_runtime_options.device to \"emu\" or \"auto\""),
            std::string::npos)
      << message;
  expect_c_words(message);
}

TEST_F(ServiceApiTest, ChannelsFirstLayoutIsUnsupported) {
  tcjit_runtime_options o = c_options();
  tcjit_runtime *rt = nullptr;
  ASSERT_EQ(tcjit_runtime_open(&o, &rt), TCJIT_OK) << tcjit_last_error_message();
  for (const char *spec : {"conv2d n=1 h=8 w=8 c=16 k=16 r=3 s=3 x=f16:nchw",
                           "conv2d n=1 h=8 w=8 c=16 k=16 r=3 s=3 x=f16 filter=f16:kcrs",
                           "conv3d n=1 d=4 h=4 w=4 c=16 k=16 t=1 r=1 s=1 x=f16:ncdhw"}) {
    tcjit_operation *op = nullptr;
    EXPECT_EQ(tcjit_prepare(rt, spec, &op), TCJIT_ERROR_UNSUPPORTED) << spec;
    EXPECT_NE(std::string(tcjit_last_error_message()).find("channels-last"), std::string::npos)
        << tcjit_last_error_message();
  }
  tcjit_runtime_close(rt);
  tcjit::Runtime cxx(options());
  expect_error([&] { (void)cxx.prepare("conv2d n=1 h=8 w=8 c=16 k=16 r=3 s=3 x=f16:nchw"); },
               tcjit::ErrorCode::unsupported, "x is nchw");
}

} // namespace
