// `tcjit doctor` and the toolkit found at run time: a fake toolkit folder given by
// $TCJIT_CUDA_HOME whose bin/ptxas records that it ran (then runs the real one) is the ptxas
// `tcjit compile --cubin` uses, and doctor names where each piece came from.
#include "run_tool.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <unistd.h>

namespace tcjit::testing {
namespace {

namespace fs = std::filesystem;

TEST(Doctor, ReportsTheToolkitTheDriverAndTheDatabase) {
  const fs::path dir = fs::temp_directory_path() / ("tcjit_doctor_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string db = (dir / "k.db").string();
  const ToolResult text = run_tool("doctor --db " + shell_quote(db));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("ptxas:       /"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("database:    " + db + " (not created yet"), std::string::npos)
      << text.out;
  EXPECT_FALSE(fs::exists(db)) << "doctor is read-only";
  const ToolResult json = run_tool("doctor --json --db " + shell_quote(db));
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  EXPECT_TRUE(j["toolkit"]["ptxas"]["found"].get<bool>());
  EXPECT_FALSE(j["database"]["exists"].get<bool>());
  EXPECT_TRUE(j["driver"].contains("found"));
  fs::remove_all(dir);
}

TEST(Doctor, TheToolkitIsFoundAtRunTime) {
  const fs::path dir =
      fs::temp_directory_path() / ("tcjit_fake_cuda_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "bin");
  const fs::path marker = dir / "ptxas-ran";
  // The real ptxas, as this build found it (doctor without the fake).
  const nlohmann::json real = nlohmann::json::parse(run_tool("doctor --json").out);
  const std::string real_ptxas = real["toolkit"]["ptxas"]["path"].get<std::string>();
  {
    std::ofstream script(dir / "bin/ptxas");
    script << "#!/bin/sh\necho ran >> " << shell_quote(marker.string()) << "\nexec "
           << shell_quote(real_ptxas) << " \"$@\"\n";
  }
  fs::permissions(dir / "bin/ptxas", fs::perms::owner_all);
  const std::string env = "TCJIT_CUDA_HOME=" + shell_quote(dir.string()) + " TCJIT_PTXAS=";
  const ToolResult doctor = run_tool("doctor", env);
  EXPECT_NE(doctor.out.find("ptxas:       " + (dir / "bin/ptxas").string()), std::string::npos)
      << doctor.out;
  EXPECT_NE(doctor.out.find("[from TCJIT_CUDA_HOME]"), std::string::npos) << doctor.out;
  // libdevice is not in the fake folder: it comes from the next root that has it.
  EXPECT_EQ(doctor.out.find("libdevice:   NOT FOUND"), std::string::npos) << doctor.out;
  const ToolResult compile =
      run_tool("compile " + shell_quote("gemm m=64 n=64 k=64 a=f16 b=f16:col c=f16 acc=f32") +
                   " --cubin -o " + shell_quote((dir / "k.cubin").string()),
               env);
  EXPECT_EQ(compile.exit_code, 0) << compile.err;
  EXPECT_TRUE(fs::exists(marker)) << "the fake toolkit's ptxas did not run\n" << compile.out;
  fs::remove_all(dir);
}

// cuBLASLt and cuDNN are reported where they are found: a stand-in cuDNN (SONAME libcudnn.so.9,
// tests/cuda/fake_cudnn_version.c) on LD_LIBRARY_PATH, then in a virtualenv's NVIDIA wheel folder;
// doctor succeeds either way (they are optional).
TEST(Doctor, ReportsCublasLtAndCudnnWhereTheyAreFound) {
  const fs::path dir =
      fs::temp_directory_path() / ("tcjit_doctor_vendor_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  const fs::path ld = dir / "ld",
                 wheel = dir / "venv/lib/python3.12/site-packages/nvidia/cudnn/lib";
  for (const fs::path &folder : {ld, wheel}) {
    fs::create_directories(folder);
    fs::copy_file(TCJIT_FAKE_CUDNN, folder / "libcudnn.so.9");
  }
  const ToolResult text = run_tool("doctor", "LD_LIBRARY_PATH=" + shell_quote(ld.string()));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("cuDNN:       " + (ld / "libcudnn.so.9").string() +
                          " (9.19.1)  [from LD_LIBRARY_PATH]"),
            std::string::npos)
      << text.out;
  EXPECT_NE(text.out.find("cuBLASLt:    "), std::string::npos) << text.out;

  const ToolResult json =
      run_tool("doctor --json", "VIRTUAL_ENV=" + shell_quote((dir / "venv").string()));
  ASSERT_EQ(json.exit_code, 0) << json.err;
  const nlohmann::json j = nlohmann::json::parse(json.out);
  const nlohmann::json &cudnn = j["libraries"]["cudnn"];
  ASSERT_TRUE(cudnn["found"].get<bool>()) << json.out;
  // The virtualenv's wheel, unless this machine's toolkit (searched before wheels) has cuDNN.
  if (cudnn["source"].get<std::string>() == "Python wheel ($VIRTUAL_ENV)") {
    EXPECT_EQ(cudnn["path"], (wheel / "libcudnn.so.9").string());
    EXPECT_EQ(cudnn["version"], "9.19.1");
  } else {
    EXPECT_EQ(cudnn["source"].get<std::string>().rfind("CUDA toolkit (", 0), 0u) << json.out;
  }
  EXPECT_TRUE(j["libraries"]["cublaslt"].contains("tried"));
  fs::remove_all(dir);
}

} // namespace
} // namespace tcjit::testing
