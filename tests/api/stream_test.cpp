// The stream a launch is given reaches cuLaunchKernel: the runtime on the CUDA device over the
// fake driver (tests/cuda/fake_libcuda.cpp, loaded as libcuda.so.1 before the runtime opens the
// driver), GEMM and convolution, with split-K; without a stream the device's own is used.
#include "tcjit/tcjit.hpp"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <filesystem>
#include <string>
#include <unistd.h>

namespace {

class StreamOnFakeDriver : public ::testing::Test {
protected:
  void SetUp() override {
    fake_ = dlopen(TCJIT_FAKE_LIBCUDA_SO1, RTLD_NOW | RTLD_GLOBAL);
    ASSERT_NE(fake_, nullptr) << dlerror();
    last_stream_ = reinterpret_cast<void *(*)()>(dlsym(fake_, "fake_cuda_last_launch_stream"));
    launches_ = reinterpret_cast<int (*)()>(dlsym(fake_, "fake_cuda_launch_count"));
    ASSERT_TRUE(last_stream_ && launches_);
    db_ = (std::filesystem::temp_directory_path() /
           ("tcjit_stream_" + std::to_string(::getpid()) + ".db"))
              .string();
    std::filesystem::remove(db_);
  }
  void TearDown() override {
    for (const char *suffix : {"", "-wal", "-shm"})
      std::filesystem::remove(db_ + suffix);
  }
  void *fake_ = nullptr;
  void *(*last_stream_)() = nullptr;
  int (*launches_)() = nullptr;
  std::string db_;
};

TEST_F(StreamOnFakeDriver, LaunchesGoToTheGivenStream) {
  tcjit::RuntimeOptions options;
  options.device = "cuda";
  options.db_path = db_;
  tcjit::Runtime rt(options);
  EXPECT_NE(rt.device_name().find("Fake"), std::string::npos) << rt.device_name();
  void *const user_stream = reinterpret_cast<void *>(0x5eed);

  const tcjit::Operation gemm = rt.prepare("gemm m=64 n=64 k=64 a=f16 b=f16:col c=f16 acc=f32");
  const tcjit::DeviceAddress a = rt.allocate(64 * 64 * 2), b = rt.allocate(64 * 64 * 2),
                             d = rt.allocate(64 * 64 * 2);
  const int before = launches_();
  gemm.launch({a, b, d, d}, user_stream);
  EXPECT_EQ(launches_(), before + 1);
  EXPECT_EQ(last_stream_(), user_stream);
  gemm.launch({a, b, d, d});
  EXPECT_NE(last_stream_(), user_stream) << "without a stream: the device's own";
  EXPECT_NE(last_stream_(), nullptr);

  // Split-K: both kernels on the stream.
  const tcjit::Operation split = rt.prepare("gemm m=16 n=16 k=8192 a=f16 b=f16:col c=f16 acc=f32");
  const tcjit::DeviceAddress sa = rt.allocate(16 * 8192 * 2), sb = rt.allocate(16 * 8192 * 2);
  const int at = launches_();
  split.launch({sa, sb, d, d}, user_stream);
  EXPECT_GE(launches_(), at + 1);
  EXPECT_EQ(last_stream_(), user_stream);

  const tcjit::Operation conv = rt.prepare("conv2d n=1 h=8 w=8 c=8 k=8 r=3 s=3 pad=1 x=f16");
  conv.launch_conv({a, b, d}, user_stream);
  EXPECT_EQ(last_stream_(), user_stream);
  for (tcjit::DeviceAddress p : {a, b, d, sa, sb})
    rt.free(p);
}

} // namespace
