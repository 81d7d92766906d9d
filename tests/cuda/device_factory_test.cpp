#include "runtime/device_factory.h"

#include <gtest/gtest.h>

#include "runtime/cuda/cuda_device.h"

namespace tcjit::device {
namespace {

TEST(OpenDevice, EmuIsTheEmulator) {
  std::unique_ptr<Device> device = open_device("emu");
  ASSERT_NE(device, nullptr);
  EXPECT_TRUE(device->info().is_emulator);
}

TEST(OpenDevice, AutoFallsBackToTheEmulatorWithoutADriver) {
  std::unique_ptr<Device> device = open_device("auto");
  ASSERT_NE(device, nullptr);
  EXPECT_EQ(device->info().is_emulator, !cuda::cuda_device_available());
}

TEST(OpenDevice, CudaWithoutADriverSaysUseEmu) {
  if (cuda::cuda_device_available()) {
    GTEST_SKIP() << "this machine has a CUDA device";
  }
  try {
    open_device("cuda");
    FAIL() << "expected a DeviceError";
  } catch (const DeviceError &error) {
    EXPECT_EQ(error.kind(), ErrorKind::Unsupported);
    EXPECT_NE(std::string(error.what()).find("use --device emu"), std::string::npos);
  }
}

TEST(OpenDevice, UnknownKindIsAnInvalidArgument) {
  try {
    open_device("gpu");
    FAIL() << "expected a DeviceError";
  } catch (const DeviceError &error) {
    EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
    EXPECT_STREQ(error.what(), "unknown device 'gpu'; use cuda, emu or auto");
  }
}

} // namespace
} // namespace tcjit::device
