// A test fixture for bench/gpu_tool on the fake CUDA driver (tests/cuda/fake_libcuda.cpp): the
// fake is loaded as libcuda.so.1 (RTLD_GLOBAL, before any device opens the driver), so tcjit's
// runtimes and the bench's own cuda::CudaDevice run on it; its "device memory" is host memory,
// so a fake anchor can compute real results there, while tcjit's kernels are not executed.
#pragma once

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <filesystem>
#include <string>
#include <unistd.h>

namespace tcjit::bench {

class FakeDriverTest : public ::testing::Test {
protected:
  void SetUp() override {
    fake_ = dlopen(TCJIT_FAKE_LIBCUDA_SO1, RTLD_NOW | RTLD_GLOBAL);
    ASSERT_NE(fake_, nullptr) << dlerror();
    reset_log_ = reinterpret_cast<void (*)()>(dlsym(fake_, "fake_cuda_reset_call_log"));
    call_log_ = reinterpret_cast<const char *(*)()>(dlsym(fake_, "fake_cuda_call_log"));
    set_launch_ms_ = reinterpret_cast<void (*)(float)>(dlsym(fake_, "fake_cuda_set_launch_ms"));
    ASSERT_TRUE(reset_log_ && call_log_ && set_launch_ms_);
    set_launch_ms_(0.125f);
    dir_ = std::filesystem::temp_directory_path() /
           ("tcjit_gpu_bench_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    if (set_launch_ms_)
      set_launch_ms_(0.125f);
    std::filesystem::remove_all(dir_);
  }
  std::string db_path() const { return (dir_ / "bench.db").string(); }

  void *fake_ = nullptr;
  void (*reset_log_)() = nullptr;
  const char *(*call_log_)() = nullptr;
  void (*set_launch_ms_)(float) = nullptr;
  std::filesystem::path dir_;
};

} // namespace tcjit::bench
