// Launches are asynchronous and allocation-free, with a workspace the caller gives or the
// runtime's pool: on the CUDA device over the fake driver (tests/cuda/fake_libcuda.cpp, loaded as
// libcuda.so.1 before the runtime opens the driver), the exact driver calls of a launch; on the
// emulator, the results of launches with a workspace (a launch has finished when it returns).
#include "tcjit/tcjit.h"
#include "tcjit/tcjit.hpp"
#include "tcjit/tools.hpp"

#include "emu_runtime_test_base.h"

#include "compiler/codegen/plan/tile_config.h"
#include "compiler/dsl/parser.h"
#include "compiler/reference/gemm_geometry.h"
#include "compiler/reference/gemm_reference.h"
#include "compiler/reference/random_fill.h"
#include "compiler/reference/tolerance.h"
#include "compiler/spec/problem_key.h"
#include "engine/kernel_records.h"
#include "kernels_db/dispatch.h"
#include "kernels_db/kernels_db.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

constexpr const char *split_k_gemm = "gemm m=16 n=16 k=8192 a=f16 b=f16:col c=f16 acc=f32";
constexpr const char *plain_gemm = "gemm m=64 n=64 k=64 a=f16 b=f16:col c=f16 acc=f32";
// c = 7 channels: the chooser copies x and the filter with c padded to 8 into the workspace.
constexpr const char *padded_conv = "conv2d n=64 h=56 w=56 c=7 k=64 r=3 s=3 pad=1 x=f16";

// The runtime on the CUDA device of the fake driver, with the driver's call log.
class FakeDriverLaunch : public ::testing::Test {
protected:
  void SetUp() override {
    fake_ = dlopen(TCJIT_FAKE_LIBCUDA_SO1, RTLD_NOW | RTLD_GLOBAL);
    ASSERT_NE(fake_, nullptr) << dlerror();
    reset_log_ = reinterpret_cast<void (*)()>(dlsym(fake_, "fake_cuda_reset_call_log"));
    call_log_ = reinterpret_cast<const char *(*)()>(dlsym(fake_, "fake_cuda_call_log"));
    last_params_ =
        reinterpret_cast<size_t (*)(void *)>(dlsym(fake_, "fake_cuda_last_launch_params"));
    live_allocations_ = reinterpret_cast<int (*)()>(dlsym(fake_, "fake_cuda_live_allocations"));
    ASSERT_TRUE(reset_log_ && call_log_ && last_params_ && live_allocations_);
    db_ = (std::filesystem::temp_directory_path() /
           ("tcjit_async_" + std::to_string(::getpid()) + ".db"))
              .string();
    std::filesystem::remove(db_);
  }
  void TearDown() override {
    for (const char *suffix : {"", "-wal", "-shm"})
      std::filesystem::remove(db_ + suffix);
  }
  tcjit::RuntimeOptions options() const {
    tcjit::RuntimeOptions o;
    o.device = "cuda";
    o.db_path = db_;
    return o;
  }
  // The driver calls of `launch` (after a reset of the log).
  template <typename Launch> std::string calls_of(Launch &&launch) {
    reset_log_();
    launch();
    return call_log_();
  }
  // The 8-byte values of the last launch's parameter buffer.
  std::vector<uint64_t> last_launch_words() {
    std::vector<char> bytes(last_params_(nullptr));
    last_params_(bytes.data());
    std::vector<uint64_t> words(bytes.size() / 8);
    std::memcpy(words.data(), bytes.data(), words.size() * 8);
    return words;
  }
  bool last_launch_has(uint64_t value) {
    for (uint64_t w : last_launch_words())
      if (w == value)
        return true;
    return false;
  }
  // `count` kernel launches on `stream`, each after making the context current: the whole of a
  // launch's driver calls.
  static std::string launches_on(void *stream, int count) {
    char line[96];
    std::snprintf(line, sizeof(line), "cuCtxSetCurrent\ncuLaunchKernel stream=%p\n", stream);
    std::string text;
    for (int i = 0; i < count; ++i)
      text += line;
    return text;
  }

  void *fake_ = nullptr;
  void (*reset_log_)() = nullptr;
  const char *(*call_log_)() = nullptr;
  size_t (*last_params_)(void *) = nullptr;
  int (*live_allocations_)() = nullptr;
  std::string db_;
  void *const stream_ = reinterpret_cast<void *>(0x5eed);
};

// After a first launch (which grows the pool), a launch is its kernel launches on the given
// stream and nothing else: no allocation, free, copy, memset or synchronization.
TEST_F(FakeDriverLaunch, ALaunchIsOnlyItsKernelLaunchesOnTheStream) {
  tcjit::Runtime rt(options());
  const tcjit::DeviceAddress a = rt.allocate(size_t{8} << 20), b = rt.allocate(size_t{8} << 20),
                             d = rt.allocate(size_t{32} << 20);

  const tcjit::Operation split = rt.prepare(split_k_gemm);
  ASSERT_GT(split.workspace_bytes({}), 0u) << split.config();
  split.launch({a, b, d, d}, stream_); // warm-up: the pool's buffer for the stream
  EXPECT_EQ(calls_of([&] {
              split.launch({a, b, d, d}, stream_);
            }),
            launches_on(stream_, 2))
      << "split-K: the slices, then their reduction";

  const tcjit::Operation plain = rt.prepare(plain_gemm);
  EXPECT_EQ(plain.workspace_bytes({}), 0u) << plain.config();
  plain.launch({a, b, d, d}, stream_);
  EXPECT_EQ(calls_of([&] { plain.launch({a, b, d, d}, stream_); }), launches_on(stream_, 1));

  const tcjit::Operation conv = rt.prepare(padded_conv);
  ASSERT_NE(conv.config().find("pc8"), std::string::npos) << conv.config();
  ASSERT_GT(conv.workspace_bytes_conv({}), 0u);
  conv.launch_conv({a, b, d}, stream_);
  EXPECT_EQ(calls_of([&] {
              conv.launch_conv({a, b, d}, stream_);
            }),
            launches_on(stream_, 3))
      << "x and the filter padded into the workspace, then the convolution";
  for (tcjit::DeviceAddress p : {a, b, d})
    rt.free(p);
}

// The caller's workspace is the one the kernels get, and a launch with one allocates nothing even
// the first time; one too small (or misaligned, or 0 with bytes) is refused before any launch.
TEST_F(FakeDriverLaunch, TheCallersWorkspaceIsTheOneTheKernelsGet) {
  tcjit::Runtime rt(options());
  const tcjit::DeviceAddress a = rt.allocate(size_t{8} << 20), b = rt.allocate(size_t{8} << 20),
                             d = rt.allocate(size_t{32} << 20);
  const tcjit::Operation split = rt.prepare(split_k_gemm);
  const size_t bytes = split.workspace_bytes({});
  const tcjit::DeviceAddress ws = rt.allocate(bytes);
  EXPECT_EQ(calls_of([&] {
              split.launch({a, b, d, d}, stream_, {ws, bytes});
            }),
            launches_on(stream_, 2));
  EXPECT_TRUE(last_launch_has(ws)) << "the reduction reads the slices from the caller's workspace";

  try {
    reset_log_();
    split.launch({a, b, d, d}, stream_, {ws, bytes - 1});
    FAIL() << "a workspace one byte too small was accepted";
  } catch (const tcjit::Error &e) {
    EXPECT_EQ(e.code(), tcjit::ErrorCode::invalid_argument);
    EXPECT_NE(e.problem().find("Workspace::bytes = " + std::to_string(bytes - 1)),
              std::string::npos)
        << e.what();
    EXPECT_NE(e.problem().find("needs " + std::to_string(bytes) + " bytes"), std::string::npos)
        << e.what();
    EXPECT_NE(e.how_to_fix().find("Operation::workspace_bytes"), std::string::npos) << e.what();
    EXPECT_STREQ(call_log_(), "") << "nothing was launched";
  }
  EXPECT_THROW(split.launch({a, b, d, d}, stream_, {ws + 8, bytes}), tcjit::Error)
      << "a workspace aligned to 8 bytes";
  EXPECT_THROW(split.launch({a, b, d, d}, stream_, {0, bytes}), tcjit::Error);

  // Channel padding: x and the filter are copied to the start of the caller's workspace, and the
  // convolution reads them there.
  const tcjit::Operation conv = rt.prepare(padded_conv);
  const size_t conv_bytes = conv.workspace_bytes_conv({});
  const tcjit::DeviceAddress conv_ws = rt.allocate(conv_bytes);
  EXPECT_EQ(calls_of([&] {
              conv.launch_conv({a, b, d}, stream_, {conv_ws, conv_bytes});
            }),
            launches_on(stream_, 3));
  EXPECT_TRUE(last_launch_has(conv_ws)) << "the convolution reads the padded x from the workspace";
  EXPECT_THROW(conv.launch_conv({a, b, d}, stream_, {conv_ws, conv_bytes / 2}), tcjit::Error);
  for (tcjit::DeviceAddress p : {a, b, d, ws, conv_ws})
    rt.free(p);
}

// The pool: one buffer per stream (launches on two streams may run at once), reused by every
// launch on its stream; a buffer outgrown is kept (launches enqueued before may still use it) and
// every buffer is freed with the runtime.
TEST_F(FakeDriverLaunch, ThePoolHasOneGrowingBufferPerStream) {
  const int allocations_before = live_allocations_();
  {
    tcjit::Runtime rt(options());
    const tcjit::DeviceAddress a = rt.allocate(size_t{1} << 20), b = rt.allocate(size_t{1} << 20),
                               d = rt.allocate(size_t{1} << 20);
    const tcjit::Operation split = rt.prepare(split_k_gemm);
    void *const other = reinterpret_cast<void *>(0xfeed);
    split.launch({a, b, d, d}, stream_);
    const uint64_t first = last_launch_words().back(); // the reduction's workspace (kernel_abi.h)
    split.launch({a, b, d, d}, other);
    const uint64_t second = last_launch_words().back();
    EXPECT_NE(first, second) << "two streams share a workspace";
    split.launch({a, b, d, d}, stream_);
    EXPECT_EQ(last_launch_words().back(), first) << "a stream's buffer is reused";

    // A launch that needs more grows the stream's buffer: allocates, frees nothing.
    const tcjit::Operation larger = rt.prepare("gemm m=64 n=64 k=8192 a=f16 b=f16:col c=f16 "
                                               "acc=f32");
    ASSERT_GT(larger.workspace_bytes({}), split.workspace_bytes({})) << larger.config();
    const std::string grow = calls_of([&] { larger.launch({a, b, d, d}, stream_); });
    EXPECT_NE(grow.find("cuMemAlloc"), std::string::npos) << grow;
    EXPECT_EQ(grow.find("cuMemFree"), std::string::npos) << grow;
    EXPECT_EQ(grow.find("Synchronize"), std::string::npos) << grow;
    EXPECT_EQ(calls_of([&] {
                split.launch({a, b, d, d}, stream_);
              }),
              launches_on(stream_, 2))
        << "the grown buffer serves the smaller launch";

    // A pool that cannot grow (as in a CUDA graph capture, which allows no allocation) says what
    // to do instead.
    auto set_alloc_limit =
        reinterpret_cast<void (*)(size_t)>(dlsym(fake_, "fake_cuda_set_alloc_limit"));
    ASSERT_NE(set_alloc_limit, nullptr);
    set_alloc_limit(64);
    try {
      larger.launch({a, b, d, d}, reinterpret_cast<void *>(0xbeef));
      set_alloc_limit(0);
      FAIL() << "an allocation the driver refused went unnoticed";
    } catch (const tcjit::Error &e) {
      set_alloc_limit(0);
      EXPECT_EQ(e.code(), tcjit::ErrorCode::device);
      EXPECT_NE(e.problem().find("growing the runtime's workspace pool"), std::string::npos)
          << e.what();
      EXPECT_NE(e.how_to_fix().find("Operation::workspace_bytes"), std::string::npos) << e.what();
    }
    for (tcjit::DeviceAddress p : {a, b, d})
      rt.free(p);
  }
  EXPECT_EQ(live_allocations_(), allocations_before) << "the pool's buffers outlived the runtime";
}

// The C API: the workspace query and the launches with a workspace, in the C parameters' words.
TEST_F(FakeDriverLaunch, TheCApiLaunchesWithAWorkspace) {
  tcjit_runtime_options o{};
  o.db_path = db_.c_str();
  o.device = "cuda";
  tcjit_runtime *rt = nullptr;
  ASSERT_EQ(tcjit_runtime_open(&o, &rt), TCJIT_OK) << tcjit_last_error_message();
  tcjit_operation *split = nullptr, *conv = nullptr;
  ASSERT_EQ(tcjit_prepare(rt, split_k_gemm, &split), TCJIT_OK) << tcjit_last_error_message();
  ASSERT_EQ(tcjit_prepare(rt, padded_conv, &conv), TCJIT_OK) << tcjit_last_error_message();
  tcjit_device_ptr a = 0, b = 0, d = 0, ws = 0;
  for (tcjit_device_ptr *p : {&a, &b, &d})
    ASSERT_EQ(tcjit_malloc(rt, size_t{32} << 20, p), TCJIT_OK);

  size_t bytes = 0, conv_bytes = 0;
  ASSERT_EQ(tcjit_operation_workspace_bytes(split, 0, 0, 0, 0, &bytes), TCJIT_OK);
  ASSERT_EQ(tcjit_operation_workspace_bytes_conv(conv, 0, &conv_bytes), TCJIT_OK);
  EXPECT_GT(bytes, 0u);
  EXPECT_GT(conv_bytes, 0u);
  ASSERT_EQ(tcjit_malloc(rt, std::max(bytes, conv_bytes), &ws), TCJIT_OK);
  EXPECT_EQ(calls_of([&] {
              EXPECT_EQ(tcjit_launch_gemm_ex(split, 0, 0, 0, 0, a, b, 0, d, 0, stream_, ws, bytes),
                        TCJIT_OK)
                  << tcjit_last_error_message();
            }),
            launches_on(stream_, 2));
  EXPECT_TRUE(last_launch_has(ws));
  EXPECT_EQ(
      calls_of([&] {
        EXPECT_EQ(tcjit_launch_conv_ex(conv, 0, a, b, d, 0, stream_, ws, conv_bytes), TCJIT_OK)
            << tcjit_last_error_message();
      }),
      launches_on(stream_, 3));

  EXPECT_EQ(tcjit_launch_gemm_ex(split, 0, 0, 0, 0, a, b, 0, d, 0, stream_, ws, 256),
            TCJIT_ERROR_INVALID_ARGUMENT);
  const std::string message = tcjit_last_error_message();
  EXPECT_NE(message.find("parameter workspace_bytes = 256"), std::string::npos) << message;
  EXPECT_NE(message.find("tcjit_operation_workspace_bytes"), std::string::npos) << message;
  EXPECT_EQ(message.find("Workspace::"), std::string::npos) << message;
  EXPECT_EQ(tcjit_launch_conv_ex(conv, 0, a, b, d, 0, stream_, 0, conv_bytes),
            TCJIT_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(tcjit_last_error_message()).find("parameter workspace is 0"),
            std::string::npos)
      << tcjit_last_error_message();
  EXPECT_EQ(tcjit_operation_workspace_bytes(conv, 0, 0, 0, 0, &bytes),
            TCJIT_ERROR_INVALID_ARGUMENT);
  const std::string kind_message = tcjit_last_error_message();
  EXPECT_NE(kind_message.find("tcjit_operation_workspace_bytes_conv"), std::string::npos)
      << kind_message;
  EXPECT_EQ(kind_message.find("ConvArgs"), std::string::npos) << kind_message;
  EXPECT_EQ(tcjit_operation_workspace_bytes(split, 0, 0, 0, 0, nullptr),
            TCJIT_ERROR_INVALID_ARGUMENT);

  for (tcjit_device_ptr p : {a, b, d, ws})
    EXPECT_EQ(tcjit_free(rt, p), TCJIT_OK);
  tcjit_operation_release(split);
  tcjit_operation_release(conv);
  tcjit_runtime_close(rt);
}

using EmuWorkspace = tcjit::testing::EmuRuntimeTest;

// The workspace a launch needs is of the kernel that runs at its sizes: 0 without split-K or
// channel padding, growing with m for a split-K kernel of an `m=?` spec.
TEST_F(EmuWorkspace, TheQueryFollowsTheLaunchSizes) {
  tcjit::Runtime rt(options());
  EXPECT_EQ(rt.prepare(plain_gemm).workspace_bytes({}), 0u);
  const tcjit::Operation symbolic =
      rt.prepare("gemm m=? n=16 k=4096 a=f16 b=f16:col c=f16 acc=f32");
  ASSERT_NE(symbolic.config().find(" k8 "), std::string::npos) << symbolic.config();
  tcjit::GemmArgs small, large;
  small.m = 16;
  large.m = 1024;
  EXPECT_GT(symbolic.workspace_bytes(large), symbolic.workspace_bytes(small));
  EXPECT_GT(symbolic.workspace_bytes(small), 0u);
  EXPECT_THROW(symbolic.workspace_bytes({}), tcjit::Error) << "m is symbolic: it must be given";
  EXPECT_THROW(symbolic.workspace_bytes_conv({}), tcjit::Error) << "a GEMM";
  const tcjit::Operation conv = rt.prepare("conv2d n=? h=8 w=8 c=8 k=8 r=3 s=3 pad=1 x=f16");
  tcjit::ConvArgs one;
  one.n = 1;
  EXPECT_EQ(conv.workspace_bytes_conv(one), 0u) << conv.config();
  EXPECT_THROW(conv.workspace_bytes({}), tcjit::Error) << "a convolution";
}

// A spec with a size range and a dispatch table (what `tcjit tune` stores): the workspace is of
// the kernel of the sizes' bucket — none for the small bucket's, split-K's slices for the large
// one's — and a launch is checked against it.
TEST_F(EmuWorkspace, TheQueryIsOfTheKernelOfTheSizesBucket) {
  const std::string text = "gemm m=1..256 n=64 k=1024 a=f16:row b=f16:col c=f32:row acc=f32";
  store_two_bucket_table(text, {32, 32, 32, 16, 16, 3, 1, 1, 8, 8},
                         {32, 32, 32, 16, 16, 3, 4, 1, 8, 8});
  tcjit::Runtime rt(options());
  const tcjit::Operation op = rt.prepare(text);
  tcjit::GemmArgs small, large;
  small.m = 16;
  large.m = 100;
  ASSERT_NE(op.config_for(large).find(" k4 "), std::string::npos) << op.config_for(large);
  EXPECT_EQ(op.workspace_bytes(small), 0u);
  const size_t bytes = op.workspace_bytes(large);
  EXPECT_GE(bytes, size_t{4} * 100 * 64 * 4) << "4 slices of 100x64 f32";

  const tcjit::DeviceAddress a = rt.allocate(256 * 1024 * 2), b = rt.allocate(64 * 1024 * 2),
                             d = rt.allocate(256 * 64 * 4), ws = rt.allocate(bytes);
  for (tcjit::GemmArgs *args : {&small, &large}) {
    args->a = a;
    args->b = b;
    args->d = d;
  }
  EXPECT_NO_THROW(op.launch(small, nullptr, {ws, 0})) << "the small bucket's kernel needs none";
  EXPECT_THROW(op.launch(large, nullptr, {ws, 0}), tcjit::Error);
  EXPECT_NO_THROW(op.launch(large, nullptr, {ws, bytes}));
  for (tcjit::DeviceAddress p : {a, b, d, ws})
    rt.free(p);
}

// On the emulator a launch has finished when it returns: its results are read right after, and a
// split-K launch with the caller's workspace computes what the reference does.
TEST_F(EmuWorkspace, ASplitKLaunchWithTheCallersWorkspaceMatchesTheReference) {
  tcjit::Runtime rt(options());
  const tcjit::Operation op = rt.prepare("gemm m=16 n=16 k=1024 a=f16 b=f16:col c=f32 acc=f32");
  const size_t bytes = op.workspace_bytes({});
  ASSERT_GT(bytes, 0u) << op.config();
  const tcjit::GemmGeometry geo = tcjit::gemm_geometry(op.spec());
  auto random_bytes = [](tcjit::DType t, int64_t count, uint64_t seed) {
    std::vector<std::byte> v(static_cast<size_t>((count * tcjit::dtype_bits(t) + 7) / 8));
    tcjit::fill_random(t, v.data(), count, seed);
    return v;
  };
  const auto a = random_bytes(geo.a.dtype, geo.a.batch_stride, 1);
  const auto b = random_bytes(geo.b.dtype, geo.b.batch_stride, 2);
  std::vector<std::byte> expected(size_t(geo.c.batch_stride) * 4);
  const tcjit::MathMode math =
      tcjit::resolve_math(op.spec().math, tcjit::tf32_disabled_by_environment());
  const tcjit::ReferenceResult ref =
      tcjit::reference_gemm(op.spec(), {a.data(), b.data(), expected.data(), nullptr}, math);
  const tcjit::DeviceAddress da = rt.allocate(a.size()), db = rt.allocate(b.size()),
                             dd = rt.allocate(expected.size()), ws = rt.allocate(bytes);
  rt.copy_to_device(da, a.data(), a.size());
  rt.copy_to_device(db, b.data(), b.size());
  for (const tcjit::Workspace &workspace : {tcjit::Workspace{ws, bytes}, tcjit::Workspace{}}) {
    op.launch({da, db, 0, dd}, nullptr, workspace);
    std::vector<std::byte> out(expected.size());
    rt.copy_to_host(out.data(), dd, out.size());
    const tcjit::CompareReport report =
        tcjit::compare_with_reference(op.spec(), math, out.data(), ref);
    EXPECT_TRUE(report.ok()) << (workspace.address ? "caller's" : "pool's") << ": "
                             << report.summary();
  }
  EXPECT_THROW(op.launch({da, db, 0, dd}, nullptr, {ws, bytes - 4}), tcjit::Error);
  for (tcjit::DeviceAddress p : {da, db, dd, ws})
    rt.free(p);
}

} // namespace
