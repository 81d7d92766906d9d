#include "runtime/cuda/cuda_device.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstring>

#include "runtime/cuda/cuda_driver.h"
#include "tests/jit/test_ptx.h"

namespace tcjit::cuda {
namespace {

std::string thrown_message(const std::function<void()> &action, device::ErrorKind expected_kind) {
  try {
    action();
  } catch (const device::DeviceError &error) {
    EXPECT_EQ(error.kind(), expected_kind) << error.what();
    return error.what();
  }
  ADD_FAILURE() << "expected a DeviceError";
  return {};
}

TEST(CudaDeviceWithoutDriver, ConstructionFailsWithTheExactMessage) {
  if (process_cuda_driver()->loaded) {
    GTEST_SKIP() << "this machine has a CUDA driver and a device";
  }
  const std::string message =
      thrown_message([] { CudaDevice device; }, device::ErrorKind::Unsupported);
  if (process_cuda_driver()->path.empty()) { // libcuda.so.1 itself is absent
    EXPECT_EQ(message, "no CUDA driver (libcuda.so.1 not found); use --device emu");
  }
  EXPECT_FALSE(cuda_device_available());
  EXPECT_EQ(cuda_unavailable_reason(), message);
}

TEST(CudaDeviceWithoutDriver, AMissingLibraryIsNamed) {
  CudaDeviceOptions options;
  options.driver_library_candidates = {"/nonexistent/libcuda.so.1"};
  EXPECT_EQ(thrown_message([&] { CudaDevice device(options); }, device::ErrorKind::Unsupported),
            "no CUDA driver (/nonexistent/libcuda.so.1 not found); use --device emu");
}

TEST(CudaDeviceWithoutDriver, MissingSymbolsAreReportedByName) {
  CudaDriver driver = load_cuda_driver({TCJIT_FAKE_LIBCUDA_PARTIAL});
  ASSERT_FALSE(driver.loaded);
  EXPECT_NE(driver.error.find("does not export cuDeviceGetCount, cuDeviceGet, "
                              "cuDeviceGetAttribute"),
            std::string::npos)
      << driver.error;
  EXPECT_NE(driver.error.find("cuLaunchKernel"), std::string::npos);
  EXPECT_EQ(driver.error.find("cuInit,"), std::string::npos) << "cuInit is exported";
  EXPECT_NE(driver.error.find("use --device emu"), std::string::npos);
}

TEST(CudaDeviceWithoutDriver, SymbolListCoversTheDriverApiTcjitUses) {
  std::vector<std::string> required = cuda_required_symbol_names();
  for (const char *name :
       {"cuInit", "cuModuleLoadData", "cuLaunchKernel", "cuFuncSetAttribute", "cuMemAlloc_v2",
        "cuDevicePrimaryCtxRetain", "cuEventCreate", "cuEventRecord", "cuEventSynchronize",
        "cuEventElapsedTime", "cuEventDestroy_v2"}) {
    EXPECT_NE(std::find(required.begin(), required.end(), name), required.end()) << name;
  }
  EXPECT_EQ(cuda_optional_symbol_names(),
            (std::vector<std::string>{"cuGetErrorName", "cuGetErrorString"}));
}

// The whole device on a fake libcuda (tests/cuda/fake_libcuda.cpp): every driver call tcjit makes
// runs, with host memory for device memory.
class CudaDeviceOnFakeDriver : public ::testing::Test {
protected:
  void SetUp() override {
    options.driver_library_candidates = {TCJIT_FAKE_LIBCUDA};
    fake = dlopen(TCJIT_FAKE_LIBCUDA, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(fake, nullptr) << dlerror();
  }
  void TearDown() override { dlclose(fake); }
  template <typename Function> Function *fake_symbol(const char *name) {
    return reinterpret_cast<Function *>(dlsym(fake, name));
  }
  int live_allocations() { return fake_symbol<int()>("fake_cuda_live_allocations")(); }

  CudaDeviceOptions options;
  void *fake = nullptr;
};

TEST_F(CudaDeviceOnFakeDriver, PropertiesComeFromTheDriver) {
  CudaDevice device(options);
  device::DeviceInfo info = device.info();
  EXPECT_EQ(info.name, "Fake H100");
  EXPECT_EQ(info.sm_arch, 90);
  EXPECT_EQ(info.sm_count, 132);
  EXPECT_EQ(info.max_shared_bytes_per_block, 232448u);
  EXPECT_EQ(info.global_memory_bytes, uint64_t{80} << 30);
  EXPECT_FALSE(info.is_emulator);
  EXPECT_EQ(device.properties().clock_khz, 1980000);
  EXPECT_EQ(device.properties().driver_version, 13000);
}

TEST_F(CudaDeviceOnFakeDriver, MemoryRoundTrip) {
  CudaDevice device(options);
  const int before = live_allocations();
  device::DevicePtr ptr = device.allocate(64);
  std::vector<uint8_t> data(64, 0x5a);
  device.memset(ptr, 0x11, 64);
  std::vector<uint8_t> back(64);
  device.copy_to_host(back.data(), ptr, 64);
  EXPECT_EQ(back, std::vector<uint8_t>(64, 0x11));
  device.copy_to_device(ptr, data.data(), 64);
  device.copy_to_host(back.data(), ptr, 64);
  EXPECT_EQ(back, data);
  device.free(ptr);
  EXPECT_EQ(live_allocations(), before);
  EXPECT_NE(thrown_message([&] { device.free(ptr); }, device::ErrorKind::NotFound)
                .find("is not an allocation of this device"),
            std::string::npos);
}

TEST_F(CudaDeviceOnFakeDriver, LoadsANvJitLinkCubinForTheDeviceArchAndLaunches) {
  CudaDevice device(options);
  device::ModuleHandle module = device.load_module(jit::test::kAxpyPtx, "axpy.ptx");
  const jit::CompiledPtx &compiled = device.module_compilation(module);
  ASSERT_EQ(compiled.origin, jit::CubinOrigin::NvJitLink) << compiled.fallback_reason;
  EXPECT_EQ(compiled.options.rfind("-arch=sm_90 ", 0), 0u) << compiled.options;
  EXPECT_EQ(fake_symbol<int()>("fake_cuda_last_module_from_ptx")(), 0);

  device::FunctionHandle function = device.get_function(module, "tcjit_axpy");
  const device::KernelInfo &kernel = device.kernel_info(function);
  ASSERT_EQ(kernel.params.size(), 4u);
  EXPECT_EQ(kernel.param_bytes, 28u);
  EXPECT_EQ(kernel.registers_per_thread, 40u);
  EXPECT_EQ(kernel.static_shared_bytes, 1024u);

  device::ParamBuffer params(kernel);
  params.set(0, 2.0f);
  params.set<uint64_t>(1, 0x1000);
  params.set<uint64_t>(2, 0x2000);
  params.set<uint32_t>(3, 77);
  // 100 KiB of dynamic shared memory: the device must raise the function's limit first (the
  // fake refuses the launch otherwise, as the real driver does).
  device.launch(function, {{3, 1, 1}, {128, 1, 1}, 100 * 1024}, params.bytes());
  device.synchronize();
  EXPECT_EQ(fake_symbol<unsigned()>("fake_cuda_last_launch_grid_x")(), 3u);
  EXPECT_EQ(fake_symbol<unsigned()>("fake_cuda_last_launch_block_x")(), 128u);
  EXPECT_EQ(fake_symbol<unsigned()>("fake_cuda_last_launch_shared")(), 100u * 1024);
  std::vector<std::byte> passed(
      fake_symbol<size_t(void *)>("fake_cuda_last_launch_params")(nullptr));
  fake_symbol<size_t(void *)>("fake_cuda_last_launch_params")(passed.data());
  EXPECT_TRUE(
      std::equal(passed.begin(), passed.end(), params.bytes().begin(), params.bytes().end()));
  device.unload_module(module);
  EXPECT_THROW(device.kernel_info(function), device::DeviceError);
}

// A cubin built earlier for the device's arch (the kernel cache's) is loaded as it is, without
// compiling the PTX; one for another arch is ignored and the PTX compiled as by load_module().
TEST_F(CudaDeviceOnFakeDriver, LoadsAPrebuiltCubinOfItsArchInsteadOfCompiling) {
  CudaDevice device(options);
  jit::PtxCompileOptions sm90;
  sm90.sm_arch = 90;
  const jit::CompiledPtx built = jit::compile_ptx(jit::test::kAxpyPtx, "axpy.ptx", sm90);
  ASSERT_EQ(built.origin, jit::CubinOrigin::NvJitLink) << built.fallback_reason;
  const std::vector<uint8_t> image(built.cubin.begin(), built.cubin.end());

  device::ModuleHandle module =
      device.load_module_prebuilt(jit::test::kAxpyPtx, "axpy.ptx", {image, 90});
  const jit::CompiledPtx &used = device.module_compilation(module);
  EXPECT_EQ(used.origin, jit::CubinOrigin::NvJitLink);
  EXPECT_EQ(used.options, "prebuilt cubin");
  EXPECT_EQ(used.cubin, built.cubin);
  EXPECT_EQ(fake_symbol<int()>("fake_cuda_last_module_from_ptx")(), 0);
  device::FunctionHandle function = device.get_function(module, "tcjit_axpy");
  EXPECT_EQ(device.kernel_info(function).params.size(), 4u); // described by the PTX

  device::ModuleHandle other =
      device.load_module_prebuilt(jit::test::kAxpyPtx, "axpy.ptx", {image, 80});
  const jit::CompiledPtx &compiled = device.module_compilation(other);
  EXPECT_EQ(compiled.options.rfind("-arch=sm_90 ", 0), 0u) << compiled.options;
}

// time_ms: events recorded on the stream around the enqueued launches (the fake's clock advances
// by a set time per launch), destroyed afterwards, also when the work throws.
TEST_F(CudaDeviceOnFakeDriver, TimesEnqueuedLaunchesWithEvents) {
  CudaDevice device(options);
  device::ModuleHandle module = device.load_module(jit::test::kAxpyPtx, "axpy.ptx");
  device::FunctionHandle function = device.get_function(module, "tcjit_axpy");
  device::ParamBuffer params(device.kernel_info(function));
  const int events_before = fake_symbol<int()>("fake_cuda_live_events")();
  fake_symbol<void(float)>("fake_cuda_set_launch_ms")(0.25f);
  const int launches_before = fake_symbol<int()>("fake_cuda_launch_count")();
  const double ms = device.time_ms([&] {
    for (int i = 0; i < 3; ++i) {
      device.launch(function, {{1, 1, 1}, {32, 1, 1}, 0}, params.bytes());
    }
  });
  EXPECT_DOUBLE_EQ(ms, 0.75);
  EXPECT_EQ(fake_symbol<int()>("fake_cuda_launch_count")(), launches_before + 3);
  EXPECT_DOUBLE_EQ(device.time_ms([] {}), 0.0);
  EXPECT_EQ(fake_symbol<int()>("fake_cuda_live_events")(), events_before);

  const std::string message = thrown_message(
      [&] {
        device.time_ms([&] {
          device.launch(function, {{7777, 1, 1}, {32, 1, 1}, 0}, params.bytes());
        });
      },
      device::ErrorKind::LaunchFailed);
  EXPECT_NE(message.find("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"), std::string::npos) << message;
  EXPECT_EQ(fake_symbol<int()>("fake_cuda_live_events")(), events_before);
  fake_symbol<void(float)>("fake_cuda_set_launch_ms")(0.125f);
}

TEST_F(CudaDeviceOnFakeDriver, LaunchErrorsNameKernelGridBlockAndSharedBytes) {
  CudaDevice device(options);
  device::ModuleHandle module = device.load_module(jit::test::kAxpyPtx, "axpy.ptx");
  device::FunctionHandle function = device.get_function(module, "tcjit_axpy");
  device::ParamBuffer params(device.kernel_info(function));

  std::string message = thrown_message(
      [&] {
        device.launch(function, {{7777, 2, 1}, {256, 1, 1}, 0}, params.bytes());
      },
      device::ErrorKind::LaunchFailed);
  EXPECT_NE(message.find("cuLaunchKernel failed (CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: too many "
                         "resources requested for launch)"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("kernel 'tcjit_axpy' (grid 7777x2x1, block 256x1x1, 0 dynamic + 1024 "
                         "static shared bytes) on Fake H100"),
            std::string::npos)
      << message;

  message = thrown_message(
      [&] {
        device.launch(function, {{1, 1, 1}, {32, 1, 1}, 240 * 1024}, params.bytes());
      },
      device::ErrorKind::InvalidArgument);
  EXPECT_NE(message.find("246784 shared bytes per block exceed the device's opt-in limit of "
                         "232448"),
            std::string::npos)
      << message;

  message = thrown_message(
      [&] {
        device.launch(function, {{1, 1, 1}, {2048, 1, 1}, 0}, params.bytes());
      },
      device::ErrorKind::InvalidArgument);
  EXPECT_NE(message.find("2048 threads per block, the kernel allows at most 1024"),
            std::string::npos)
      << message;

  std::vector<std::byte> short_buffer(4);
  message = thrown_message(
      [&] {
        device.launch(function, {{1, 1, 1}, {32, 1, 1}, 0}, short_buffer);
      },
      device::ErrorKind::InvalidArgument);
  EXPECT_NE(message.find("the parameter buffer is 4 bytes, the kernel takes 28"), std::string::npos)
      << message;
}

TEST_F(CudaDeviceOnFakeDriver, UnknownKernelListsTheModulesEntries) {
  CudaDevice device(options);
  device::ModuleHandle module = device.load_module(jit::test::kAxpyPtx, "axpy.ptx");
  EXPECT_EQ(
      thrown_message([&] { device.get_function(module, "axpy"); }, device::ErrorKind::NotFound),
      "axpy.ptx has no kernel 'axpy' (its .entry kernels: tcjit_axpy)");
}

TEST_F(CudaDeviceOnFakeDriver, BadPtxFailsWithNvJitLinksLog) {
  CudaDevice device(options);
  const std::string message =
      thrown_message([&] { device.load_module(jit::test::kBrokenPtx, "broken.ptx"); },
                     device::ErrorKind::ModuleLoad);
  EXPECT_NE(message.find("broken.ptx: nvJitLink could not compile the PTX for sm_90"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("undeclared_register"), std::string::npos) << message;
}

TEST_F(CudaDeviceOnFakeDriver, WithoutNvJitLinkTheDriverJitsThePtx) {
  const jit::NvJitLinkLibrary missing =
      jit::load_nvjitlink_library({"/nonexistent/libnvJitLink.so"});
  jit::CompileServiceOptions service_options;
  service_options.worker_threads = 1;
  service_options.compile_function = [&missing](const jit::CompileRequest &request) {
    return jit::compile_ptx(request.ptx, request.source_name, request.options, missing);
  };
  jit::CompileService service(std::move(service_options));
  options.compile_service = &service;
  CudaDevice device(options);

  device::ModuleHandle module = device.load_module(jit::test::kAxpyPtx, "axpy.ptx");
  EXPECT_EQ(device.module_compilation(module).origin, jit::CubinOrigin::DriverJit);
  EXPECT_EQ(fake_symbol<int()>("fake_cuda_last_module_from_ptx")(), 1);
  EXPECT_EQ(device.kernel_info(device.get_function(module, "tcjit_axpy")).param_bytes, 28u);

  // The driver's JIT log and the reason for the fallback reach the message.
  const std::string message =
      thrown_message([&] { device.load_module(".version 9.0\n.target sm_90\n", "empty.ptx"); },
                     device::ErrorKind::ModuleLoad);
  EXPECT_NE(message.find("cuModuleLoadDataEx failed (CUDA_ERROR_INVALID_PTX)"), std::string::npos)
      << message;
  EXPECT_NE(message.find("nvJitLink not found"), std::string::npos) << message;
  EXPECT_NE(message.find("ptxas fatal   : fake: no .entry in the PTX"), std::string::npos)
      << message;
}

TEST_F(CudaDeviceOnFakeDriver, PtxNewerThanTheDriverSaysWhichDriverItNeeds) {
  setenv("TCJIT_FAKE_CUDA_DRIVER_VERSION", "12040", 1);
  CudaDevice device(options);
  std::string ptx = jit::test::kAxpyPtx;
  ptx.replace(ptx.find(".version 7.0"), 12, ".version 9.0");
  const std::string message =
      thrown_message([&] { device.load_module(ptx, "new.ptx"); }, device::ErrorKind::ModuleLoad);
  unsetenv("TCJIT_FAKE_CUDA_DRIVER_VERSION");
  EXPECT_NE(message.find("cuModuleLoadData failed (CUDA_ERROR_UNSUPPORTED_PTX_VERSION)"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("PTX ISA 9.0 needs a CUDA 13.0 driver, this one is CUDA 12.4: update "
                         "the NVIDIA driver or use --device emu"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("the driver's own JIT of the PTX failed too"), std::string::npos)
      << message;
}

TEST_F(CudaDeviceOnFakeDriver, ACubinTheDriverRefusesFallsBackToTheDriversJit) {
  setenv("TCJIT_FAKE_CUDA_DRIVER_VERSION", "12040", 1);
  CudaDevice device(options);
  device::ModuleHandle module = device.load_module(jit::test::kAxpyPtx, "axpy.ptx"); // ISA 7.0
  unsetenv("TCJIT_FAKE_CUDA_DRIVER_VERSION");
  const jit::CompiledPtx &compiled = device.module_compilation(module);
  EXPECT_EQ(compiled.origin, jit::CubinOrigin::DriverJit);
  EXPECT_EQ(compiled.fallback_reason,
            "the CUDA 12.4 driver refused the cubin (CUDA_ERROR_UNSUPPORTED_PTX_VERSION); the "
            "driver JIT-compiled the PTX");
  EXPECT_EQ(fake_symbol<int()>("fake_cuda_last_module_from_ptx")(), 1);
}

TEST_F(CudaDeviceOnFakeDriver, NoDeviceAndBadOrdinal) {
  setenv("TCJIT_FAKE_CUDA_DEVICES", "0", 1);
  EXPECT_EQ(thrown_message([&] { CudaDevice device(options); }, device::ErrorKind::Unsupported),
            "no CUDA device (the CUDA 13.0 driver reports 0 devices); use --device emu");
  unsetenv("TCJIT_FAKE_CUDA_DEVICES");
  options.ordinal = 3;
  EXPECT_NE(thrown_message([&] { CudaDevice device(options); }, device::ErrorKind::InvalidArgument)
                .find("CUDA device 3 does not exist: the driver reports 1 device(s)"),
            std::string::npos);
}

} // namespace
} // namespace tcjit::cuda
