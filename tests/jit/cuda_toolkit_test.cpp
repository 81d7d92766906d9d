// Run-time discovery of the CUDA toolkit (runtime/jit/cuda_toolkit.h) over fake toolkit folders:
// the search order, each piece from the first root that has it, overrides first, and every path
// tried named when a piece is missing.
#include "runtime/jit/cuda_toolkit.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace tcjit::jit {
namespace {

namespace fs = std::filesystem;

class FakeToolkits : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tcjit_toolkit_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // A toolkit folder with the given pieces ("ptxas", "libdevice", "nvjitlink", "nvrtc").
  std::string toolkit(const std::string &name, std::initializer_list<const char *> pieces) {
    const fs::path root = dir_ / name;
    for (const std::string piece : pieces) {
      fs::path file = piece == "ptxas"       ? root / "bin/ptxas"
                      : piece == "libdevice" ? root / "nvvm/libdevice/libdevice.10.bc"
                      : piece == "nvjitlink" ? root / "lib64/libnvJitLink.so.13"
                                             : root / "lib64/libnvrtc.so.13";
      fs::create_directories(file.parent_path());
      std::ofstream(file) << "#!/bin/sh\n";
      fs::permissions(file, fs::perms::owner_all);
    }
    fs::create_directories(root);
    return root.string();
  }
  fs::path dir_;
};

TEST_F(FakeToolkits, EachPieceComesFromTheFirstRootThatHasIt) {
  ToolkitEnvironment e;
  e.tcjit_cuda_home = toolkit("first", {"ptxas"});
  e.cuda_home = toolkit("second", {"ptxas", "libdevice"});
  e.cuda_path = toolkit("third", {"nvjitlink", "nvrtc", "libdevice"});
  const CudaToolkit t = find_cuda_toolkit(e);
  EXPECT_EQ(t.ptxas.path, *e.tcjit_cuda_home + "/bin/ptxas");
  EXPECT_EQ(t.ptxas.source, "TCJIT_CUDA_HOME");
  EXPECT_EQ(t.libdevice.path, *e.cuda_home + "/nvvm/libdevice/libdevice.10.bc");
  EXPECT_EQ(t.libdevice.source, "CUDA_HOME");
  EXPECT_EQ(t.nvjitlink.path, *e.cuda_path + "/lib64/libnvJitLink.so.13");
  EXPECT_EQ(t.nvjitlink.source, "CUDA_PATH");
  EXPECT_EQ(t.nvrtc.root, *e.cuda_path);
  EXPECT_EQ(toolkit_roots(e).front(), *e.tcjit_cuda_home);
}

TEST_F(FakeToolkits, ThePtxasOnPathNamesItsToolkit) {
  ToolkitEnvironment e;
  const std::string on_path = toolkit("on_path", {"ptxas", "libdevice"});
  e.path = "/nonexistent/bin:" + on_path + "/bin";
  const CudaToolkit t = find_cuda_toolkit(e);
  EXPECT_EQ(t.ptxas.source, "PATH");
  EXPECT_EQ(t.libdevice.path, on_path + "/nvvm/libdevice/libdevice.10.bc");
  // A root set earlier in the order wins over PATH.
  e.cuda_home = toolkit("home", {"ptxas"});
  EXPECT_EQ(find_cuda_toolkit(e).ptxas.source, "CUDA_HOME");
}

TEST_F(FakeToolkits, OverridesComeFirst) {
  ToolkitEnvironment e;
  e.tcjit_cuda_home = toolkit("home", {"ptxas", "libdevice", "nvjitlink"});
  e.tcjit_ptxas = "/opt/other/ptxas";
  e.tcjit_libdevice = "/opt/other/libdevice.10.bc";
  e.tcjit_nvjitlink_library = "/opt/other/libnvJitLink.so";
  const CudaToolkit t = find_cuda_toolkit(e);
  EXPECT_EQ(t.ptxas.path, "/opt/other/ptxas");
  EXPECT_EQ(t.ptxas.source, "TCJIT_PTXAS");
  EXPECT_EQ(t.libdevice.source, "TCJIT_LIBDEVICE");
  EXPECT_EQ(t.nvjitlink.source, "TCJIT_NVJITLINK_LIBRARY");
}

TEST_F(FakeToolkits, AMissingPieceNamesEveryPathTried) {
  ToolkitEnvironment e;
  e.tcjit_cuda_home = toolkit("empty", {});
  const CudaToolkit t = find_cuda_toolkit(e);
  // /usr/local/cuda may hold the piece on this machine: look at the order of what was tried.
  ASSERT_GE(t.ptxas.tried.size(), 4u);
  EXPECT_EQ(t.ptxas.tried[0], *e.tcjit_cuda_home + "/bin/ptxas");
  EXPECT_EQ(t.ptxas.tried[1], "$CUDA_HOME (not set)");
  EXPECT_EQ(t.ptxas.tried[2], "$CUDA_PATH (not set)");
  EXPECT_EQ(t.ptxas.tried[3], "$PATH (not set)");
  ToolkitPiece none;
  none.tried = {"/a/bin/ptxas", "$CUDA_HOME (not set)"};
  EXPECT_EQ(none.missing_message("ptxas"),
            "ptxas not found: tried /a/bin/ptxas, $CUDA_HOME (not set); install the CUDA toolkit "
            "(>= 12) or set TCJIT_CUDA_HOME to its folder");
}

} // namespace
} // namespace tcjit::jit
