// The CUDA device on a real GPU: memory (allocate, copy both ways, memset), modules (nvcc's PTX of
// tests/cuda/kernels.cu and hand-written PTX, compiled for the device's own arch), launches with
// every kind of parameter, CUDA-event timing, and the arch the runtime compiles for.
#include "gpu_test.h"
#include "kernels_ptx.h" // kNvccKernelsPtx: tests/cuda/kernels.cu, nvcc -ptx -arch=sm_80

#include "compiler/target/arch.h"
#include "engine/kernel_cache.h"
#include "tests/jit/test_ptx.h"

#include <cmath>
#include <cstring>
#include <numeric>

namespace tcjit::gpu_test {
namespace {

using device::DevicePtr;
using device::ParamBuffer;

TEST_F(Gpu, MemoryRoundTripsThroughCopiesAndMemset) {
  cuda::CudaDevice gpu;
  constexpr size_t bytes = (1 << 20) + 3; // not a multiple of anything
  std::vector<uint8_t> data(bytes);
  for (size_t i = 0; i < bytes; ++i)
    data[i] = static_cast<uint8_t>(i * 131 + 7);
  const DevicePtr ptr = gpu.allocate(bytes);
  EXPECT_NE(ptr, 0u);
  EXPECT_EQ(ptr % 256, 0u) << "cuMemAlloc returns 256-byte-aligned memory";
  gpu.copy_to_device(ptr, data.data(), bytes);
  std::vector<uint8_t> back(bytes, 0);
  gpu.copy_to_host(back.data(), ptr, bytes);
  EXPECT_EQ(back, data);
  gpu.memset(ptr + 1000, 0xAB, 5000);
  gpu.copy_to_host(back.data(), ptr, bytes);
  for (size_t i = 0; i < bytes; ++i) {
    const uint8_t expected = i >= 1000 && i < 6000 ? 0xAB : data[i];
    ASSERT_EQ(back[i], expected) << "byte " << i;
  }
  gpu.free(ptr);
  EXPECT_THROW(gpu.free(ptr), device::DeviceError) << "freed twice";
}

TEST_F(Gpu, NvccPtxLoadsAndRunsWithEveryKindOfParameter) {
  cuda::CudaDevice gpu;
  const device::ModuleHandle module = gpu.load_module(kNvccKernelsPtx, "kernels.ptx");
  const std::string expected_arch = "sm_" + std::to_string(gpu.info().sm_arch);
  const jit::CompiledPtx &compiled = gpu.module_compilation(module);
  if (compiled.origin == jit::CubinOrigin::NvJitLink) { // else the driver JITs it for the device
    EXPECT_NE(compiled.options.find("-arch=" + expected_arch), std::string::npos)
        << "compiled for the device's own arch: " << compiled.options;
  }

  // calls_helper: out[i] = 2 * out[i] through a device function.
  const device::FunctionHandle doubling = gpu.get_function(module, "calls_helper");
  std::vector<float> values(64);
  std::iota(values.begin(), values.end(), 1.0f);
  const DevicePtr out = gpu.allocate(values.size() * sizeof(float));
  gpu.copy_to_device(out, values.data(), values.size() * sizeof(float));
  ParamBuffer doubling_params(gpu.kernel_info(doubling));
  doubling_params.set(0, out);
  gpu.launch(doubling, {{1, 1, 1}, {64, 1, 1}, 0}, doubling_params.bytes());
  gpu.synchronize();
  std::vector<float> doubled(values.size());
  gpu.copy_to_host(doubled.data(), out, doubled.size() * sizeof(float));
  for (size_t i = 0; i < values.size(); ++i)
    ASSERT_EQ(doubled[i], 2 * values[i]) << i;

  // mixed_params: f32, pointer, f64, u8, u16, a 32-byte aligned struct, a 3-byte struct, u64.
  const device::FunctionHandle mixed = gpu.get_function(module, "mixed_params");
  const device::KernelInfo &info = gpu.kernel_info(mixed);
  ASSERT_EQ(info.params.size(), 9u);
  EXPECT_EQ(info.params[5].size, 32u);
  EXPECT_EQ(info.params[5].align, 16u);
  EXPECT_EQ(info.params[6].size, 3u);
  const float x0 = 3.0f;
  const DevicePtr x = gpu.allocate(sizeof(float));
  gpu.copy_to_device(x, &x0, sizeof(x0));
  float tile[8] = {};
  tile[5] = 0.25f;
  const char packed[3] = {0, 0, 7};
  ParamBuffer params(info);
  params.set(0, 2.0f);
  params.set(1, x);
  params.set(2, 0.5);
  params.set(3, static_cast<int8_t>(4));
  params.set(4, static_cast<int16_t>(100));
  params.set_bytes(5, tile, sizeof(tile));
  params.set_bytes(6, packed, sizeof(packed));
  params.set(7, uint64_t{1000});
  params.set(8, out);
  gpu.launch(mixed, {{1, 1, 1}, {32, 1, 1}, 0}, params.bytes());
  float result = 0;
  gpu.copy_to_host(&result, out, sizeof(result)); // waits for the launch
  EXPECT_EQ(result, 2.0f * 3.0f + 0.5f + 4 + 100 + 0.25f + 7 + 1000);
  gpu.free(x);
  gpu.free(out);
  gpu.unload_module(module);
}

TEST_F(Gpu, AxpyAndDynamicSharedMemoryAbove48KiB) {
  cuda::CudaDevice gpu;
  const device::ModuleHandle module = gpu.load_module(jit::test::kAxpyPtx, "axpy.ptx");
  const device::FunctionHandle axpy = gpu.get_function(module, "tcjit_axpy");
  constexpr uint32_t n = 100000;
  std::vector<float> x(n), y(n, 1.0f);
  std::iota(x.begin(), x.end(), 0.0f);
  const DevicePtr x_ptr = gpu.allocate(n * sizeof(float)), y_ptr = gpu.allocate(n * sizeof(float));
  gpu.copy_to_device(x_ptr, x.data(), n * sizeof(float));
  gpu.copy_to_device(y_ptr, y.data(), n * sizeof(float));
  ParamBuffer params(gpu.kernel_info(axpy));
  params.set(0, 2.0f);
  params.set(1, x_ptr);
  params.set(2, y_ptr);
  params.set(3, n);
  gpu.launch(axpy, {{(n + 255) / 256, 1, 1}, {256, 1, 1}, 0}, params.bytes());
  gpu.synchronize();
  gpu.copy_to_host(y.data(), y_ptr, n * sizeof(float));
  for (uint32_t i = 0; i < n; ++i)
    ASSERT_EQ(y[i], 2.0f * static_cast<float>(i) + 1.0f) << i;
  gpu.free(x_ptr);
  gpu.free(y_ptr);
  // The opt-in shared memory: A100 and H100/H200 allow over 160 KiB per block.
  EXPECT_GT(gpu.info().max_shared_bytes_per_block, 160u * 1024);
}

TEST_F(Gpu, TimeMsMeasuresTheEnqueuedWorkWithEvents) {
  cuda::CudaDevice gpu;
  const device::ModuleHandle module = gpu.load_module(jit::test::kAxpyPtx, "axpy.ptx");
  const device::FunctionHandle axpy = gpu.get_function(module, "tcjit_axpy");
  constexpr uint32_t n = 1 << 24;
  const DevicePtr x = gpu.allocate(n * sizeof(float)), y = gpu.allocate(n * sizeof(float));
  gpu.memset(x, 0, n * sizeof(float));
  gpu.memset(y, 0, n * sizeof(float));
  ParamBuffer params(gpu.kernel_info(axpy));
  params.set(0, 1.0f);
  params.set(1, x);
  params.set(2, y);
  params.set(3, n);
  const auto launch = [&] { gpu.launch(axpy, {{n / 256, 1, 1}, {256, 1, 1}, 0}, params.bytes()); };
  launch(); // the first launch loads the function (lazy loading): not timed
  gpu.synchronize();
  const double one = gpu.time_ms(launch);
  const double ten = gpu.time_ms([&] {
    for (int i = 0; i < 10; ++i)
      launch();
  });
  EXPECT_TRUE(std::isfinite(one) && one > 0) << one;
  EXPECT_TRUE(std::isfinite(ten) && ten > 0) << ten;
  EXPECT_GT(ten, one) << "ten launches of 128 MiB of traffic each take longer than one";
  gpu.free(x);
  gpu.free(y);
}

TEST_F(Gpu, TheRuntimeCompilesForTheDevicesOwnArch) {
  cuda::CudaDevice gpu;
  const device::DeviceInfo info = gpu.info();
  const std::string own = "sm_" + std::to_string(info.sm_arch);
  std::string error;
  EXPECT_EQ(engine::target_arch("", info, error), own) << error;
  ASSERT_TRUE(find_arch(own)) << info.name << " is " << own << ", which tcjit does not target ("
                              << known_arch_list() << ")";
  if (info.name.find("A100") != std::string::npos) {
    EXPECT_EQ(own, "sm_80");
  }
  if (info.name.find("H100") != std::string::npos || info.name.find("H200") != std::string::npos) {
    EXPECT_EQ(own, "sm_90");
  }

  Runtime rt(cuda_options());
  EXPECT_FALSE(rt.device_is_emulator());
  EXPECT_EQ(rt.arch(), own);
  EXPECT_EQ(rt.device_name(), info.name);
}

} // namespace
} // namespace tcjit::gpu_test
