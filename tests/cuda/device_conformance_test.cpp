// The same kernels on whatever open_device("auto") gives: the CUDA device on a machine with a GPU
// (results checked on the hardware), the emulator elsewhere (the PTX and the expectations are
// checked, so they are known good when a GPU runs them).
#include <gtest/gtest.h>

#include <fstream>
#include <numeric>
#include <sstream>

#include "runtime/cuda/ptx_entry_params.h"
#include "runtime/device_factory.h"
#include "tests/jit/test_ptx.h"

namespace tcjit::device {
namespace {

// Writes `value` to dynamic shared memory at `offset`, reads it back after a barrier, stores it.
constexpr const char *kSharedProbePtx = R"(
.version 7.0
.target sm_80
.address_size 64
.extern .shared .align 16 .b8 dynamic_smem[];

.visible .entry tcjit_shared_probe(
	.param .u64 tcjit_shared_probe_out,
	.param .u32 tcjit_shared_probe_offset,
	.param .align 8 .b8 tcjit_shared_probe_pair[16]
)
{
	.reg .b32 	%r<6>;
	.reg .b64 	%rd<5>;
	ld.param.u64 	%rd1, [tcjit_shared_probe_out];
	ld.param.u32 	%r1, [tcjit_shared_probe_offset];
	ld.param.u64 	%rd3, [tcjit_shared_probe_pair];
	ld.param.u64 	%rd4, [tcjit_shared_probe_pair+8];
	mov.u32 	%r2, dynamic_smem;
	add.u32 	%r2, %r2, %r1;
	cvt.u32.u64 	%r3, %rd3;
	cvt.u32.u64 	%r4, %rd4;
	add.u32 	%r3, %r3, %r4;
	st.shared.u32 	[%r2], %r3;
	bar.sync 	0;
	ld.shared.u32 	%r5, [%r2];
	cvta.to.global.u64 	%rd2, %rd1;
	st.global.u32 	[%rd2], %r5;
	ret;
}
)";

TEST(DeviceConformance, AxpyComputesTheRightValues) {
  std::unique_ptr<Device> device = open_device("auto");
  ModuleHandle module = device->load_module(jit::test::kAxpyPtx, "axpy.ptx");
  FunctionHandle function = device->get_function(module, "tcjit_axpy");
  constexpr uint32_t n = 1000;
  std::vector<float> x(n), y(n);
  std::iota(x.begin(), x.end(), 0.0f);
  std::fill(y.begin(), y.end(), 1.0f);
  DevicePtr x_ptr = device->allocate(n * sizeof(float));
  DevicePtr y_ptr = device->allocate(n * sizeof(float));
  device->copy_to_device(x_ptr, x.data(), n * sizeof(float));
  device->copy_to_device(y_ptr, y.data(), n * sizeof(float));
  ParamBuffer params(device->kernel_info(function));
  params.set(0, 2.0f);
  params.set(1, x_ptr);
  params.set(2, y_ptr);
  params.set(3, n);
  device->launch(function, {{(n + 127) / 128, 1, 1}, {128, 1, 1}, 0}, params.bytes());
  device->synchronize();
  device->copy_to_host(y.data(), y_ptr, n * sizeof(float));
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_EQ(y[i], 2.0f * static_cast<float>(i) + 1.0f) << "i = " << i;
  }
  device->free(x_ptr);
  device->free(y_ptr);
  device->unload_module(module);
}

TEST(DeviceConformance, DynamicSharedMemoryAbove48KiB) {
  std::unique_ptr<Device> device = open_device("auto");
  ModuleHandle module = device->load_module(kSharedProbePtx, "shared_probe.ptx");
  FunctionHandle function = device->get_function(module, "tcjit_shared_probe");
  const KernelInfo &kernel = device->kernel_info(function);
  ASSERT_EQ(kernel.param_bytes, 32u);
  DevicePtr out = device->allocate(sizeof(uint32_t));
  device->memset(out, 0, sizeof(uint32_t));
  constexpr uint32_t shared_bytes = 100 * 1024;
  ParamBuffer params(kernel);
  params.set(0, out);
  params.set(1, shared_bytes - 4); // the last word of 100 KiB
  const uint64_t pair[2] = {0xC000, 0xDE};
  params.set_bytes(2, pair, sizeof(pair));
  device->launch(function, {{1, 1, 1}, {32, 1, 1}, shared_bytes}, params.bytes());
  device->synchronize();
  uint32_t value = 0;
  device->copy_to_host(&value, out, sizeof(value));
  EXPECT_EQ(value, 0xC0DEu);
  device->free(out);
}

// The CUDA device reads parameter layouts with its own small parser; the emulator with its full
// one. Both must agree, or a ParamBuffer built on one device would be wrong on the other.
TEST(DeviceConformance, CudaParamParserAgreesWithTheEmulator) {
  std::ifstream file(TCJIT_CUDA_KERNELS_PTX);
  ASSERT_TRUE(file) << TCJIT_CUDA_KERNELS_PTX;
  std::stringstream text;
  text << file.rdbuf();
  const std::string nvcc_ptx = text.str();
  for (const char *ptx : {nvcc_ptx.c_str(), jit::test::kAxpyPtx, kSharedProbePtx}) {
    std::unique_ptr<Device> emulator = open_device("emu");
    ModuleHandle module = emulator->load_module(ptx, "kernels.ptx");
    for (const KernelInfo &parsed : cuda::parse_ptx_entries(ptx, "kernels.ptx")) {
      const KernelInfo &emulated =
          emulator->kernel_info(emulator->get_function(module, parsed.name));
      EXPECT_EQ(parsed.param_bytes, emulated.param_bytes) << parsed.name;
      ASSERT_EQ(parsed.params.size(), emulated.params.size()) << parsed.name;
      for (size_t i = 0; i < parsed.params.size(); ++i) {
        EXPECT_EQ(parsed.params[i].name, emulated.params[i].name) << parsed.name;
        EXPECT_EQ(parsed.params[i].offset, emulated.params[i].offset) << parsed.name << " " << i;
        EXPECT_EQ(parsed.params[i].size, emulated.params[i].size) << parsed.name << " " << i;
        EXPECT_EQ(parsed.params[i].align, emulated.params[i].align) << parsed.name << " " << i;
      }
    }
  }
}

} // namespace
} // namespace tcjit::device
