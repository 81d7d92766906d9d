// Where cuBLASLt and cuDNN are found (runtime/cuda/vendor_libraries.h), over fake trees: a folder
// of $LD_LIBRARY_PATH, a toolkit root, and a virtualenv's site-packages/nvidia/cudnn/lib each
// holding a stand-in libcudnn.so.9 (tests/cuda/fake_cudnn_version.c, cuDNN "9.19.1"). The loader's
// own search is left out (this machine's ld.so.cache may hold the real cuDNN) except where it is
// the subject.
#include "runtime/cuda/vendor_libraries.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

namespace tcjit::cuda {
namespace {

namespace fs = std::filesystem;

class VendorLibraries : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tcjit_vendor_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  // The stand-in cuDNN copied to `relative`/libcudnn.so.9; returns the file's path.
  std::string fake_cudnn_in(const std::string &relative) {
    const fs::path folder = dir_ / relative;
    fs::create_directories(folder);
    fs::copy_file(TCJIT_FAKE_CUDNN, folder / "libcudnn.so.9", fs::copy_options::overwrite_existing);
    return (folder / "libcudnn.so.9").string();
  }
  // An environment that looks at nothing of this machine's.
  VendorLibraryEnvironment nothing_of_this_machine() const {
    VendorLibraryEnvironment e;
    e.system_python_prefixes.clear();
    e.loader_search = false;
    return e;
  }
  fs::path dir_;
};

TEST_F(VendorLibraries, CudnnIsFoundInAVirtualenvsNvidiaWheel) {
  const std::string wheel = fake_cudnn_in("venv/lib/python3.11/site-packages/nvidia/cudnn/lib");
  VendorLibraryEnvironment e = nothing_of_this_machine();
  e.virtual_env = (dir_ / "venv").string();
  const VendorLibrarySearch search = search_vendor_library(VendorLibrary::cudnn, e);
  ASSERT_EQ(search.candidates.size(), 1u);
  EXPECT_EQ(search.candidates[0].path, wheel);
  EXPECT_EQ(search.candidates[0].source, "Python wheel ($VIRTUAL_ENV)");

  const LoadedVendorLibrary loaded = load_vendor_library(search);
  ASSERT_TRUE(loaded.loaded()) << loaded.error;
  EXPECT_EQ(loaded.path, wheel);
  EXPECT_EQ(loaded.source, "Python wheel ($VIRTUAL_ENV)");
  EXPECT_EQ(loaded.version, "9.19.1");
}

TEST_F(VendorLibraries, TheOrderIsLdLibraryPathTheToolkitThenPythonWheels) {
  const std::string wheel = fake_cudnn_in("venv/lib/python3.12/site-packages/nvidia/cudnn/lib");
  const std::string toolkit = fake_cudnn_in("toolkit/lib64");
  const std::string first = fake_cudnn_in("ld/first");
  VendorLibraryEnvironment e = nothing_of_this_machine();
  e.ld_library_path = (dir_ / "ld/empty").string() + "::" + (dir_ / "ld/first").string();
  e.toolkit_roots = {(dir_ / "toolkit").string()};
  e.virtual_env = (dir_ / "venv").string();
  const VendorLibrarySearch search = search_vendor_library(VendorLibrary::cudnn, e);
  ASSERT_EQ(search.candidates.size(), 3u);
  EXPECT_EQ(search.candidates[0].path, first);
  EXPECT_EQ(search.candidates[0].source, "LD_LIBRARY_PATH");
  EXPECT_EQ(search.candidates[1].path, toolkit);
  EXPECT_EQ(search.candidates[1].source, "CUDA toolkit (" + (dir_ / "toolkit").string() + ")");
  EXPECT_EQ(search.candidates[2].path, wheel);
  // every folder, in order: the empty entry of LD_LIBRARY_PATH left out
  ASSERT_GE(search.folders.size(), 5u);
  EXPECT_EQ(search.folders[0], (dir_ / "ld/empty").string());
  EXPECT_EQ(search.folders[1], (dir_ / "ld/first").string());
  EXPECT_EQ(search.folders[2], (dir_ / "toolkit/lib64").string());
  EXPECT_EQ(search.folders[3], (dir_ / "toolkit/targets/x86_64-linux/lib").string());

  const LoadedVendorLibrary loaded = load_vendor_library(search);
  ASSERT_TRUE(loaded.loaded()) << loaded.error;
  EXPECT_EQ(loaded.path, first);
  EXPECT_EQ(loaded.source, "LD_LIBRARY_PATH");

  // Without LD_LIBRARY_PATH: the toolkit's comes before the wheel's.
  e.ld_library_path.reset();
  EXPECT_EQ(load_vendor_library(search_vendor_library(VendorLibrary::cudnn, e)).path, toolkit);
}

TEST_F(VendorLibraries, TheNewestPythonComesFirstAndEachInstallationInItsOrder) {
  const std::string old_python = fake_cudnn_in("venv/lib/python3.9/site-packages/nvidia/cudnn/lib");
  const std::string new_python =
      fake_cudnn_in("venv/lib/python3.12/site-packages/nvidia/cudnn/lib");
  const std::string user =
      fake_cudnn_in("home/.local/lib/python3.11/site-packages/nvidia/cudnn/lib");
  const std::string system = fake_cudnn_in("usr/lib/python3/dist-packages/nvidia/cudnn/lib");
  const std::string conda = fake_cudnn_in("conda/lib/python3.10/site-packages/nvidia/cudnn/lib");
  VendorLibraryEnvironment e = nothing_of_this_machine();
  e.virtual_env = (dir_ / "venv").string();
  e.conda_prefix = (dir_ / "conda").string();
  e.home = (dir_ / "home").string();
  e.system_python_prefixes = {(dir_ / "usr").string()};
  const VendorLibrarySearch search = search_vendor_library(VendorLibrary::cudnn, e);
  ASSERT_EQ(search.candidates.size(), 5u);
  EXPECT_EQ(search.candidates[0].path, new_python);
  EXPECT_EQ(search.candidates[1].path, old_python);
  EXPECT_EQ(search.candidates[2].path, conda);
  EXPECT_EQ(search.candidates[2].source, "Python wheel ($CONDA_PREFIX)");
  EXPECT_EQ(search.candidates[3].path, user);
  EXPECT_EQ(search.candidates[3].source, "Python wheel (~/.local)");
  EXPECT_EQ(search.candidates[4].path, system);
  EXPECT_EQ(search.candidates[4].source, "Python wheel (" + (dir_ / "usr").string() + ")");
}

TEST_F(VendorLibraries, ACandidateThatDoesNotOpenIsPassedOverWithItsReason) {
  fs::create_directories(dir_ / "ld");
  std::ofstream(dir_ / "ld/libcudnn.so.9") << "not a library\n";
  const std::string wheel = fake_cudnn_in("venv/lib/python3.11/site-packages/nvidia/cudnn/lib");
  VendorLibraryEnvironment e = nothing_of_this_machine();
  e.ld_library_path = (dir_ / "ld").string();
  e.virtual_env = (dir_ / "venv").string();
  const LoadedVendorLibrary loaded =
      load_vendor_library(search_vendor_library(VendorLibrary::cudnn, e));
  ASSERT_TRUE(loaded.loaded()) << loaded.error;
  EXPECT_EQ(loaded.path, wheel);
  bool named = false;
  for (const std::string &line : loaded.tried)
    named = named || line.rfind((dir_ / "ld/libcudnn.so.9").string() + ": ", 0) == 0;
  EXPECT_TRUE(named) << "the unopenable candidate is not among the tried";
}

TEST_F(VendorLibraries, NotFoundNamesEveryFolderLookedIn) {
  VendorLibraryEnvironment e = nothing_of_this_machine();
  e.ld_library_path = (dir_ / "ld").string();
  e.toolkit_roots = {(dir_ / "toolkit").string()};
  const LoadedVendorLibrary loaded =
      load_vendor_library(search_vendor_library(VendorLibrary::cublaslt, e));
  EXPECT_FALSE(loaded.loaded());
  EXPECT_EQ(loaded.tried,
            (std::vector<std::string>{(dir_ / "ld").string(), (dir_ / "toolkit/lib64").string(),
                                      (dir_ / "toolkit/targets/x86_64-linux/lib").string(),
                                      (dir_ / "toolkit/lib").string()}));
  EXPECT_EQ(loaded.error.rfind("cuBLASLt not found: looked in " + (dir_ / "ld").string() + ", ", 0),
            0u)
      << loaded.error;
  EXPECT_NE(loaded.error.find("LD_LIBRARY_PATH"), std::string::npos) << loaded.error;
}

TEST_F(VendorLibraries, TheLoadersSearchComesLastWithEverySoname) {
  const std::string first = fake_cudnn_in("ld");
  VendorLibraryEnvironment e = nothing_of_this_machine();
  e.loader_search = true;
  e.ld_library_path = (dir_ / "ld").string();
  const VendorLibrarySearch search = search_vendor_library(VendorLibrary::cudnn, e);
  ASSERT_EQ(search.candidates.size(), 3u);
  EXPECT_EQ(search.candidates[0].path, first);
  EXPECT_EQ(search.candidates[1].path, "libcudnn.so.9");
  EXPECT_EQ(search.candidates[2].path, "libcudnn.so");
  EXPECT_EQ(search.candidates[2].source, "the loader's search path");
  EXPECT_EQ(vendor_library_sonames(VendorLibrary::cublaslt),
            (std::vector<std::string>{"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"}));
  // The process's own list (what the GPU bench's anchors open) ends with the sonames.
  const std::vector<std::string> cublaslt = default_cublaslt_candidates();
  ASSERT_GE(cublaslt.size(), 3u);
  EXPECT_EQ(cublaslt.back(), "libcublasLt.so");
  EXPECT_EQ(default_cudnn_candidates().back(), "libcudnn.so");
}

TEST(VendorVersions, AsTheLibrariesCountThem) {
  EXPECT_EQ(vendor_version_text(VendorLibrary::cublaslt, 130100), "13.1.0");
  EXPECT_EQ(vendor_version_text(VendorLibrary::cublaslt, 120902), "12.9.2");
  EXPECT_EQ(vendor_version_text(VendorLibrary::cudnn, 91901), "9.19.1");
  EXPECT_EQ(vendor_version_text(VendorLibrary::cudnn, 8906), "8.9.6");
  EXPECT_EQ(vendor_version_text(VendorLibrary::cudart, 13000), "13.0");
  EXPECT_EQ(vendor_version_text(VendorLibrary::cudart, 12040), "12.4");
}

} // namespace
} // namespace tcjit::cuda
