#include "runtime/jit/ptx_compiler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include "runtime/device/device.h"
#include "tests/jit/test_ptx.h"

namespace tcjit::jit {
namespace {

constexpr uint16_t kElfMachineCuda = 190; // EM_CUDA

uint16_t read_u16(const std::vector<char> &bytes, size_t offset) {
  uint16_t value = 0;
  std::memcpy(&value, bytes.data() + offset, sizeof(value));
  return value;
}

uint32_t read_u32(const std::vector<char> &bytes, size_t offset) {
  uint32_t value = 0;
  std::memcpy(&value, bytes.data() + offset, sizeof(value));
  return value;
}

// The SM architecture in a cubin's ELF header. LLVM's BinaryFormat/ELF.h documents both
// encodings: EF_CUDA_SM (e_flags & 0xff) up to ELF ABI version 7, and from ABI version 8
// (ELFABIVERSION_CUDA_V2, CUDA 12.8 and later) EF_CUDA_SM_MASK = 0xff00 (e_flags >> 8 & 0xff).
int cubin_sm_arch(const std::vector<char> &cubin) {
  const uint8_t abi_version = static_cast<uint8_t>(cubin[8]); // e_ident[EI_ABIVERSION]
  const uint32_t flags = read_u32(cubin, 48);                 // e_flags of an ELF64 header
  return abi_version >= 8 ? static_cast<int>((flags >> 8) & 0xff) : static_cast<int>(flags & 0xff);
}

bool contains(const std::vector<char> &bytes, std::string_view text) {
  return std::search(bytes.begin(), bytes.end(), text.begin(), text.end()) != bytes.end();
}

std::string run_and_capture(const std::string &command) {
  std::string output;
  FILE *pipe = popen(command.c_str(), "r");
  if (!pipe) {
    return output;
  }
  char buffer[4096];
  while (size_t n = fread(buffer, 1, sizeof(buffer), pipe)) {
    output.append(buffer, n);
  }
  pclose(pipe);
  return output;
}

class CubinForArch : public ::testing::TestWithParam<int> {};

TEST_P(CubinForArch, NvJitLinkCompilesPtxToAnElfCubinForTheExactArch) {
  ASSERT_TRUE(nvjitlink_library().loaded) << nvjitlink_library().error;
  PtxCompileOptions options;
  options.sm_arch = GetParam();
  CompiledPtx compiled = compile_ptx(test::kAxpyPtx, "axpy.ptx", options);
  ASSERT_EQ(compiled.origin, CubinOrigin::NvJitLink);
  const std::vector<char> &cubin = compiled.cubin;
  ASSERT_GT(cubin.size(), 64u);
  EXPECT_EQ(std::string(cubin.data(), 4), "\x7f"
                                          "ELF");
  EXPECT_EQ(cubin[4], 2) << "ELFCLASS64";
  EXPECT_EQ(read_u16(cubin, 18), kElfMachineCuda);
  EXPECT_EQ(cubin_sm_arch(cubin), GetParam());
  EXPECT_TRUE(contains(cubin, ".text.tcjit_axpy"));
  EXPECT_EQ(compiled.options, "-arch=sm_" + std::to_string(GetParam()) + " -O3 -Xptxas=-O3");

  // A disassembler from the toolkit accepts it and shows the kernel, when the toolkit has one.
  const std::string cuobjdump = TCJIT_CUOBJDUMP;
  const std::string nvdisasm = TCJIT_NVDISASM;
  if (cuobjdump.empty() && nvdisasm.empty()) {
    return; // this toolkit ships neither (a minimal install): the ELF checks above stand alone
  }
  const std::string path =
      ::testing::TempDir() + "tcjit_axpy_sm" + std::to_string(GetParam()) + ".cubin";
  std::ofstream(path, std::ios::binary).write(cubin.data(), static_cast<long>(cubin.size()));
  const std::string command = cuobjdump.empty() ? nvdisasm + " " + path + " 2>&1"
                                                : cuobjdump + " --dump-sass " + path + " 2>&1";
  EXPECT_NE(run_and_capture(command).find("tcjit_axpy"), std::string::npos);
  std::remove(path.c_str());
}

INSTANTIATE_TEST_SUITE_P(Archs, CubinForArch, ::testing::Values(80, 86, 89, 90),
                         [](const auto &info) { return "sm_" + std::to_string(info.param); });

TEST(PtxCompiler, LineInfoAndOptimisationLevelsAreAccepted) {
  ASSERT_TRUE(nvjitlink_library().loaded) << nvjitlink_library().error;
  for (int level = 0; level <= 3; ++level) {
    PtxCompileOptions options;
    options.optimization_level = level;
    options.line_info = true;
    CompiledPtx compiled = compile_ptx(test::kAxpyPtx, "axpy.ptx", options);
    EXPECT_EQ(read_u16(compiled.cubin, 18), kElfMachineCuda) << "level " << level;
  }
}

TEST(PtxCompiler, ResourceUsageGoesToTheInfoLog) {
  ASSERT_TRUE(nvjitlink_library().loaded) << nvjitlink_library().error;
  PtxCompileOptions options;
  options.resource_usage = true;
  options.max_registers = 32;
  CompiledPtx compiled = compile_ptx(test::kAxpyPtx, "axpy.ptx", options);
  EXPECT_EQ(compiled.options, "-arch=sm_80 -O3 -Xptxas=-O3 -maxrregcount=32 -Xptxas=-v");
  EXPECT_NE(compiled.info_log.find("registers"), std::string::npos) << compiled.info_log;
  EXPECT_NE(compiled.info_log.find("tcjit_axpy"), std::string::npos) << compiled.info_log;
}

TEST(PtxCompiler, BadPtxErrorCarriesNvJitLinkLog) {
  ASSERT_TRUE(nvjitlink_library().loaded) << nvjitlink_library().error;
  try {
    compile_ptx(test::kBrokenPtx, "broken.ptx", PtxCompileOptions{});
    FAIL() << "expected a DeviceError";
  } catch (const device::DeviceError &error) {
    const std::string message = error.what();
    EXPECT_EQ(error.kind(), device::ErrorKind::ModuleLoad);
    EXPECT_NE(message.find("broken.ptx: nvJitLink could not compile the PTX for sm_80"),
              std::string::npos)
        << message;
    // ptxas's own line, as nvJitLink logged it.
    EXPECT_NE(message.find("undeclared_register"), std::string::npos) << message;
    EXPECT_NE(message.find("NVJITLINK_ERROR_PTX_COMPILE"), std::string::npos) << message;
  }
}

TEST(PtxCompiler, BadOptionsAreInvalidArguments) {
  PtxCompileOptions options;
  options.optimization_level = 7;
  EXPECT_THROW(compile_ptx(test::kAxpyPtx, "axpy.ptx", options), device::DeviceError);
  options = {};
  options.sm_arch = 8;
  try {
    compile_ptx(test::kAxpyPtx, "axpy.ptx", options);
    FAIL() << "expected a DeviceError";
  } catch (const device::DeviceError &error) {
    EXPECT_EQ(error.kind(), device::ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(error.what()).find("sm_8 is not an SM architecture"), std::string::npos);
  }
}

TEST(PtxCompiler, MissingNvJitLinkFallsBackToTheDriverJit) {
  NvJitLinkLibrary missing = load_nvjitlink_library({"/nonexistent/libnvJitLink.so.13"});
  ASSERT_FALSE(missing.loaded);
  EXPECT_NE(missing.error.find("nvJitLink not found"), std::string::npos) << missing.error;
  EXPECT_NE(missing.error.find("/nonexistent/libnvJitLink.so.13"), std::string::npos);
  CompiledPtx compiled = compile_ptx(test::kAxpyPtx, "axpy.ptx", PtxCompileOptions{}, missing);
  EXPECT_EQ(compiled.origin, CubinOrigin::DriverJit);
  EXPECT_TRUE(compiled.cubin.empty());
  EXPECT_NE(compiled.fallback_reason.find("the driver will JIT-compile the PTX"),
            std::string::npos);
}

TEST(PtxCompiler, ALibraryWithoutTheSymbolsIsNamedByTheMissingSymbol) {
  // libdl/libc opens but exports no nvJitLink symbol.
  NvJitLinkLibrary wrong = load_nvjitlink_library({"libc.so.6"});
  ASSERT_FALSE(wrong.loaded);
  EXPECT_NE(wrong.error.find("does not export nvJitLinkVersion, nvJitLinkCreate"),
            std::string::npos)
      << wrong.error;
}

TEST(PtxCompiler, LibraryCandidates) {
  // The toolkit roots in cuda_toolkit.h's order first, the loader's search (bare names) last.
  setenv("TCJIT_CUDA_HOME", "/opt/fake-cuda", 1);
  std::vector<std::string> candidates = nvjitlink_library_candidates();
  unsetenv("TCJIT_CUDA_HOME");
  EXPECT_EQ(candidates.front(), "/opt/fake-cuda/lib64/libnvJitLink.so.13");
  EXPECT_EQ(candidates.back(), "libnvJitLink.so");
  EXPECT_NE(
      std::find(candidates.begin(), candidates.end(), "/usr/local/cuda/lib64/libnvJitLink.so"),
      candidates.end());
  setenv("TCJIT_NVJITLINK_LIBRARY", "/opt/my/libnvJitLink.so", 1);
  EXPECT_EQ(nvjitlink_library_candidates(), std::vector<std::string>{"/opt/my/libnvJitLink.so"});
  unsetenv("TCJIT_NVJITLINK_LIBRARY");
}

TEST(PtxCompiler, ReportsTheLibraryVersion) {
  const NvJitLinkLibrary &library = nvjitlink_library();
  ASSERT_TRUE(library.loaded) << library.error;
  EXPECT_GE(library.major, 12u);
  EXPECT_FALSE(library.path.empty());
}

} // namespace
} // namespace tcjit::jit
