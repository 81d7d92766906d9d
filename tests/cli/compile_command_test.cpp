// `tcjit compile` end to end: the stage times, -o, the per-kernel resources and --cubin (ptxas as
// a whole program, as the runtime compiles; --nvjitlink to compare. The CUDA toolkit is a build
// dependency, so ptxas and nvJitLink are expected to be there).
#include "run_tool.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <regex>
#include <string>
#include <unistd.h>
#include <vector>

namespace tcjit::testing {
namespace {

namespace fs = std::filesystem;

const std::string kSpec = "gemm m=128 n=128 k=64 a=f16 b=f16:col c=f16 acc=f32";

// A scratch directory, removed at the end of the test.
struct ScratchDir {
  fs::path path =
      fs::temp_directory_path() / ("tcjit_compile_test_" + std::to_string(::getpid()) + "_" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  ScratchDir() { fs::create_directories(path); }
  ~ScratchDir() { fs::remove_all(path); }
};

// The number in "<what> <number> ms" on the times line, or -1.
double stage_ms(const std::string &out, const std::string &what) {
  std::smatch m;
  if (!std::regex_search(out, m, std::regex("(times .*[ ,]" + what + " )([0-9.]+) ms")))
    return -1;
  return std::stod(m[2]);
}

TEST(CliCompile, PrintsConfigPtxasAndEveryStageTimeStartingWithParse) {
  const ToolResult r = run_tool("compile " + shell_quote(kSpec));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("config   "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ptxas    "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("times    parse "), std::string::npos) << r.out;
  for (const char *stage : {"parse", "build_llvm_ir", "optimize_llvm", "emit_ptx", "ptxas"})
    EXPECT_GE(stage_ms(r.out, stage), 0) << stage << " missing in\n" << r.out;
  EXPECT_EQ(r.out.find("nvJitLink"), std::string::npos) << "ptxas compiles, not nvJitLink";
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex(R"(ptxas    tcjit_gemm_\w+: [0-9]+ registers, 0 B spill stores, 0 B spill )"
                        R"(loads, 0 B stack, [0-9]+ B shared memory)")))
      << r.out;
}

TEST(CliCompile, OutputWithoutCubinWritesPtx) {
  ScratchDir dir;
  const fs::path ptx = dir.path / "k.ptx";
  const ToolResult r =
      run_tool("compile " + shell_quote(kSpec) + " --no-ptxas -o " + shell_quote(ptx.string()));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = read_file(ptx);
  EXPECT_NE(text.find(".version "), std::string::npos);
  EXPECT_NE(text.find(".target sm_80"), std::string::npos);
  EXPECT_NE(r.out.find("wrote    " + ptx.string() + " (" + std::to_string(text.size()) + " bytes"),
            std::string::npos)
      << r.out;
}

TEST(CliCompile, CubinWritesTheWholeProgramCubinForTheArchAndTimesPtxas) {
  ScratchDir dir;
  const fs::path cubin = dir.path / "k.cubin";
  const ToolResult r = run_tool("compile " + shell_quote(kSpec) + " --arch sm_86 --cubin -o " +
                                shell_quote(cubin.string()));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const std::string bytes = read_file(cubin);
  ASSERT_GT(bytes.size(), 64u);
  EXPECT_EQ(bytes.substr(0, 4), "\x7f"
                                "ELF");
  EXPECT_EQ(elf_machine(bytes), kElfMachineCuda) << "e_machine is EM_CUDA";
  EXPECT_EQ(cubin_sm(bytes), 86);
  EXPECT_GE(stage_ms(r.out, "ptxas"), 0) << r.out;
  EXPECT_GE(stage_ms(r.out, "parse"), 0) << r.out;
  const std::regex wrote("wrote    " + cubin.string() +
                         R"( \(cubin for sm_86 by ptxas -arch=sm_86 -O3, ([0-9]+) bytes, kernel )"
                         R"((\w+)\))");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, wrote)) << r.out;
  EXPECT_EQ(std::stoul(m[1]), bytes.size());
  EXPECT_NE(bytes.find(".text." + m[2].str()), std::string::npos) << "the kernel is in the cubin";
  EXPECT_EQ(bytes.find("__cuda_sm70_warpsync"), std::string::npos)
      << "whole-program code: the staged epilogue's warp barriers are not calls";
}

TEST(CliCompile, NvJitLinkCubinIsRelocatableCodeWithCalls) {
  ScratchDir dir;
  const fs::path cubin = dir.path / "k.cubin";
  const ToolResult r = run_tool("compile " + shell_quote(kSpec) + " --nvjitlink --cubin -o " +
                                shell_quote(cubin.string()));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_GE(stage_ms(r.out, "nvJitLink"), 0) << r.out;
  EXPECT_NE(r.out.find("by nvJitLink "), std::string::npos) << r.out;
  EXPECT_NE(read_file(cubin).find("__cuda_sm70_warpsync"), std::string::npos);
}

TEST(CliCompile, SplitKCubinHoldsBothKernelsOfTheModule) {
  ScratchDir dir;
  const fs::path cubin = dir.path / "splitk.cubin";
  const ToolResult r =
      run_tool("compile " + shell_quote("gemm m=64 n=64 k=256 a=f16 b=f16:col c=f16 acc=f32") +
               " --config " + shell_quote("64x64x32 w32x32 s3 k4") + " --cubin -o " +
               shell_quote(cubin.string()));
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  // each kernel's own resources: the GEMM kernel with its dynamic shared memory, the reduce
  // kernel with none
  EXPECT_TRUE(
      std::regex_search(r.out, std::regex(R"(ptxas    \w+_splitk_reduce: [0-9]+ registers, )"
                                          R"(.* 0 B shared memory)")))
      << r.out;
  EXPECT_TRUE(std::regex_search(r.out, std::regex(R"(ptxas    \w+_k4_\w+[a-z]: [0-9]+ registers, )"
                                                  R"(.* 24576 B shared memory)")))
      << r.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"(kernels (\w+), (\w+)_splitk_reduce\))")))
      << r.out;
  EXPECT_EQ(m[1].str(), m[2].str());
  const std::string bytes = read_file(cubin);
  EXPECT_EQ(elf_machine(bytes), kElfMachineCuda);
  EXPECT_NE(bytes.find(".text." + m[1].str()), std::string::npos);
  EXPECT_NE(bytes.find(".text." + m[1].str() + "_splitk_reduce"), std::string::npos);
}

TEST(CliCompile, CubinWithNoPtxasIsAUsageError) {
  const ToolResult r = run_tool("compile " + shell_quote(kSpec) + " --no-ptxas --cubin -o x.cubin");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("tcjit compile: error: --no-ptxas skips the compile to a cubin; it cannot "
                       "go with --cubin"),
            std::string::npos)
      << r.err;
}

TEST(CliCompile, CubinWithoutOutputIsAUsageError) {
  const ToolResult r = run_tool("compile " + shell_quote(kSpec) + " --cubin");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("tcjit compile: error: --cubin needs -o FILE.cubin"), std::string::npos)
      << r.err;
}

TEST(CliCompile, CubinForAnUnknownArchIsAUsageError) {
  ScratchDir dir;
  const fs::path cubin = dir.path / "k.cubin";
  const ToolResult r = run_tool("compile " + shell_quote(kSpec) + " --arch sm_75 --cubin -o " +
                                shell_quote(cubin.string()));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("tcjit compile: error: unknown arch 'sm_75' (tcjit targets sm_80"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(cubin));
}

TEST(CliCompile, UnwritableOutputFailsWithTheReason) {
  const std::string path = "/nonexistent_tcjit_dir/k.cubin";
  const ToolResult r =
      run_tool("compile " + shell_quote(kSpec) + " --cubin -o " + shell_quote(path));
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(
      r.err.find("tcjit compile: error: cannot write " + path + ": No such file or directory"),
      std::string::npos)
      << r.err;
  const ToolResult ptx =
      run_tool("compile " + shell_quote(kSpec) + " --no-ptxas -o " + shell_quote(path));
  EXPECT_EQ(ptx.exit_code, 3);
  EXPECT_NE(ptx.err.find("cannot write " + path), std::string::npos) << ptx.err;
}

TEST(CliCompile, CubinWithoutPtxasFailsClearly) {
  ScratchDir dir;
  const fs::path cubin = dir.path / "k.cubin";
  const ToolResult r =
      run_tool("compile " + shell_quote(kSpec) + " --cubin -o " + shell_quote(cubin.string()),
               "TCJIT_PTXAS=/nonexistent/ptxas");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("tcjit compile: error: cannot run ptxas at '/nonexistent/ptxas' (set "
                       "TCJIT_PTXAS"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(cubin));
}

TEST(CliCompile, NvJitLinkWithoutTheLibraryFailsClearly) {
  ScratchDir dir;
  const fs::path cubin = dir.path / "k.cubin";
  const ToolResult r = run_tool("compile " + shell_quote(kSpec) + " --nvjitlink --cubin -o " +
                                    shell_quote(cubin.string()),
                                "TCJIT_NVJITLINK_LIBRARY=/nonexistent/libnvJitLink.so");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.err.find("tcjit compile: error: --nvjitlink needs nvJitLink, which cannot be "
                       "loaded: nvJitLink not found"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("/nonexistent/libnvJitLink.so"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(cubin));
}

// --json: one object with the keys of docs/cli.md, nothing else on stdout.
TEST(CompileCommand, Json) {
  const fs::path out =
      fs::temp_directory_path() / ("tcjit_compile_json_" + std::to_string(::getpid()) + ".cubin");
  const ToolResult r = run_tool("compile --json --cubin -o " + shell_quote(out.string()) + " " +
                                shell_quote("gemm m=64 n=64 k=8192 a=f16 b=f16:col c=f16 acc=f32") +
                                " --config " + shell_quote("64x64x32 w32x32 s3 k4"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  for (const char *key :
       {"spec", "arch", "config", "config_source", "kernel", "identity", "threads",
        "dynamic_shared_bytes", "ptx_bytes", "kernels", "cubin_by", "times_ms", "output"})
    EXPECT_TRUE(j.contains(key)) << key << " in " << j;
  EXPECT_EQ(j["config_source"], "--config");
  EXPECT_EQ(j["kernels"].size(), 2u) << "split-K: the GEMM and its reduction";
  EXPECT_EQ(j["kernels"][0]["spill_stores"], 0);
  EXPECT_GT(j["times_ms"]["ptxas"].get<double>(), 0);
  EXPECT_EQ(j["output"]["kind"], "cubin");
  EXPECT_EQ(j["output"]["bytes"].get<uint64_t>(), fs::file_size(out));
  fs::remove(out);
}

// --json with a path that is not UTF-8: the JSON replaces the bytes, nothing crashes.
TEST(CompileCommand, JsonWithANonUtf8Path) {
  const std::string path =
      (fs::temp_directory_path() / ("tcjit_\xff_" + std::to_string(::getpid()) + ".ptx")).string();
  const ToolResult r = run_tool("compile --json --no-ptxas -o " + shell_quote(path) + " " +
                                shell_quote("gemm m=8 n=8 k=8 a=f16 b=f16 c=f16 acc=f32"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["output"]["kind"], "ptx");
  fs::remove(path);
}

// The nvrtc backend: the same report, a cubin from NVRTC's PTX, the CUDA C++ written by --emit
// cuda (readable: the kernel's name and its mma), a clear refusal, and convolutions.
TEST(CompileCommand, NvrtcBackendAndEmitCuda) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("tcjit_compile_nvrtc_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const ToolResult r = run_tool("compile --backend nvrtc --json " + shell_quote(kSpec));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["backend"], "nvrtc");
  EXPECT_GT(j["times_ms"]["nvrtc"].get<double>(), 0);
  EXPECT_GT(j["kernels"][0]["registers"].get<int>(), 0);
  EXPECT_EQ(j["kernels"][0]["spill_stores"], 0);

  const std::string cu = (dir / "k.cu").string();
  const ToolResult e =
      run_tool("compile --emit cuda -o " + shell_quote(cu) + " " + shell_quote(kSpec));
  ASSERT_EQ(e.exit_code, 0) << e.err;
  const std::string source = read_file(cu);
  EXPECT_NE(source.find("extern \"C\" __global__ void tcjit_gemm_f16_f32_rcr_f16_"),
            std::string::npos);
  EXPECT_NE(source.find("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"), std::string::npos);
  EXPECT_EQ(source.find("#include"), std::string::npos) << "the source needs no header";
  EXPECT_NE(e.out.find("wrote    " + cu + " ("), std::string::npos) << e.out;
  // without -o the source is the output
  const ToolResult printed = run_tool("compile --emit cuda " + shell_quote(kSpec));
  EXPECT_EQ(printed.out, source);

  const ToolResult conflict = run_tool("compile --emit cuda --backend llvm " + shell_quote(kSpec));
  EXPECT_EQ(conflict.exit_code, 2);
  EXPECT_NE(conflict.err.find("--emit cuda writes the nvrtc backend's source"), std::string::npos)
      << conflict.err;
  // a convolution compiles too: its implicit GEMM with the im2col gather, and with channel
  // padding the module's second kernel, through ptxas without spills
  const ToolResult conv =
      run_tool("compile --backend nvrtc --json --config \"32x32x32 w16x16 s3 pc8\" "
               "\"conv2d n=1 h=8 w=8 c=3 k=16 r=3 s=3 pad=1 x=f16 bias=col act=relu\"");
  ASSERT_EQ(conv.exit_code, 0) << conv.err;
  const nlohmann::json cj = nlohmann::json::parse(conv.out);
  EXPECT_EQ(cj["backend"], "nvrtc");
  std::vector<std::string> names;
  for (const nlohmann::json &k : cj["kernels"]) {
    names.push_back(k["name"].get<std::string>());
    EXPECT_EQ(k["spill_stores"], 0) << k.dump();
  }
  ASSERT_EQ(names.size(), 2u) << cj["kernels"].dump();
  std::sort(names.begin(), names.end()); // the cubin's order is ptxas's
  EXPECT_EQ(names[0].rfind("tcjit_conv2d_fprop_", 0), 0u) << names[0];
  EXPECT_EQ(names[1], names[0] + "_pad_channels");
  const ToolResult conv_source = run_tool(
      "compile --emit cuda \"conv2d n=1 h=8 w=8 c=16 k=16 r=3 s=3 pad=1 pass=dgrad x=f16\"");
  ASSERT_EQ(conv_source.exit_code, 0) << conv_source.err;
  // dgrad: A by the strided gather, B by tap rows (plan/formulas.h, printed in the tile copies)
  EXPECT_NE(conv_source.out.find("(outer, contig) by the strided gather"), std::string::npos);
  EXPECT_NE(conv_source.out.find("(outer, contig) by the tap_rows gather"), std::string::npos);
  EXPECT_NE(conv_source.out.find("const u64 elem = "), std::string::npos);
  std::filesystem::remove_all(dir);
}

} // namespace
} // namespace tcjit::testing
