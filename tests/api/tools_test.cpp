// The tools API (include/tcjit/tools.hpp): what the command line does, done by an application —
// parse, compile, explain, verify, tune — on the emulator with a temporary database. Only public
// headers: an embedding application sees nothing else.
#include "tcjit/tcjit.hpp"
#include "tcjit/tools.hpp"
#include "tests/api/expect_error.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

namespace fs = std::filesystem;

constexpr const char *kGemm = "gemm m=64 n=48 k=64 a=f16:row b=f16:col c=f16:row acc=f32";
constexpr const char *kConv = "conv2d n=2 h=8 w=8 c=16 k=16 r=3 s=3 pad=1 x=f16";

tcjit::OpSpec spec_of(const char *text) {
  return tcjit::parse_ops(text).at(0).spec;
}

using tcjit::testing::expect_error;

class ToolsApi : public ::testing::Test {
protected:
  void SetUp() override {
    db_ = fs::temp_directory_path() /
          ("tcjit_tools_" +
           std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()) + "_" +
           std::to_string(::getpid()) + ".db");
    fs::remove(db_);
  }
  void TearDown() override {
    for (const char *suffix : {"", "-wal", "-shm", "-journal"})
      fs::remove(db_.string() + suffix);
  }
  fs::path db_;
};

TEST_F(ToolsApi, ParseOpsReturnsEntriesOrRenderedDiagnostics) {
  const std::vector<tcjit::WorkloadEntry> ops = tcjit::parse_ops(
      "qkv: gemm m=128 n=64 k=32 a=f16 b=f16 weight=4\n" + std::string(kConv), "w.tcjit");
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0].name, "qkv");
  EXPECT_EQ(ops[0].weight, 4);
  EXPECT_EQ(tcjit::entry_label(ops[1]), "line 2");
  EXPECT_EQ(tcjit::canonical_text(ops[0].spec).rfind("gemm m=128 n=64 k=32 batch=1", 0), 0u);
  // the diagnostics as the CLI prints them: file:line:col, the line, a caret
  expect_error([] { tcjit::parse_ops("gemm m=64 n=64 k=64 a=f17 b=f16", "x.tcjit"); },
               tcjit::ErrorCode::bad_spec, "x.tcjit:1:");
  expect_error([] { tcjit::parse_ops("# nothing\n", "empty.tcjit"); }, tcjit::ErrorCode::bad_spec,
               "empty.tcjit holds no operation");
  EXPECT_TRUE(tcjit::is_target_arch("sm_90"));
  EXPECT_FALSE(tcjit::is_target_arch("sm_70"));
  EXPECT_NE(tcjit::target_arch_names().find("sm_80"), std::string::npos);
}

TEST_F(ToolsApi, CompileGivesPtxCubinAndTheCubinsResources) {
  tcjit::CompileRequest request;
  request.config = "64x64x32 w32x32 s3 k2"; // split-K: a second kernel in the module
  const tcjit::CompiledModule m = tcjit::compile(spec_of(kGemm), request);
  EXPECT_EQ(m.config.rfind("64x64x32 w32x32 s3 k2", 0), 0u) << m.config;
  EXPECT_FALSE(m.default_config);
  EXPECT_NE(m.ptx.find(".entry " + m.kernel_name), std::string::npos);
  ASSERT_EQ(m.kernels.size(), 2u);
  EXPECT_EQ(m.kernels[0], m.kernel_name);
  EXPECT_EQ(m.cubin_compiler, "ptxas");
  ASSERT_GE(m.cubin.size(), 64u);
  EXPECT_EQ(std::string(m.cubin.begin(), m.cubin.begin() + 4), "\x7f"
                                                               "ELF");
  ASSERT_EQ(m.usage.size(), 2u);
  for (const tcjit::KernelUsage &u : m.usage) {
    EXPECT_GT(u.registers, 0) << u.kernel;
    EXPECT_EQ(u.spill_store_bytes + u.spill_load_bytes, 0) << u.kernel;
  }
  EXPECT_EQ(m.times.back().stage, "ptxas");
  // the JSON is the documented object of `tcjit compile --json`
  const nlohmann::json j = nlohmann::json::parse(m.json);
  EXPECT_EQ(j["kernel"], m.kernel_name);
  EXPECT_EQ(j["kernels"].size(), 2u);
  EXPECT_NE(m.text.find("ptxas    " + m.kernel_name + ": "), std::string::npos) << m.text;

  // PTX only, from text (its parse timed first)
  tcjit::CompileRequest ptx_only;
  ptx_only.cubin = tcjit::CubinCompiler::none;
  const tcjit::CompiledModule p = tcjit::compile(kConv, "<text>", ptx_only);
  EXPECT_TRUE(p.cubin.empty());
  EXPECT_TRUE(p.default_config);
  EXPECT_EQ(p.times.front().stage, "parse");
  EXPECT_TRUE(p.usage.empty());
}

TEST_F(ToolsApi, CompileErrorsSayWhatAndOfWhichKind) {
  tcjit::CompileRequest bad_config;
  bad_config.config = "64x64x32 w48x32";
  expect_error([&] { tcjit::compile(spec_of(kGemm), bad_config); },
               tcjit::ErrorCode::invalid_argument, "wm: wm=48 must be a power of two");
  tcjit::CompileRequest bad_arch;
  bad_arch.arch = "sm_75";
  expect_error([&] { tcjit::compile(spec_of(kGemm), bad_arch); },
               tcjit::ErrorCode::invalid_argument, "unknown arch 'sm_75'");
  expect_error([] { tcjit::compile(std::string(kGemm) + "\n" + kGemm, "w", {}); },
               tcjit::ErrorCode::invalid_argument, "give one operation (the workload has 2)");
}

TEST_F(ToolsApi, ExplainOpReportsTheRooflineOfTheArchAndTheConfig) {
  const tcjit::WorkloadEntry entry = tcjit::parse_ops(kGemm).at(0);
  tcjit::ExplainRequest request;
  request.arch = "sm_90";
  const tcjit::OpExplanation e = tcjit::explain_op(entry, request);
  EXPECT_FALSE(e.config.empty());
  const nlohmann::json j = nlohmann::json::parse(e.json);
  EXPECT_EQ(j["arch"], "sm_90");
  EXPECT_NE(j["roofline"]["gpu"].get<std::string>().find("H100"), std::string::npos) << e.json;
  EXPECT_EQ(j["chosen_config"]["config"], e.config);
  EXPECT_NE(e.text.find("config:      " + e.config), std::string::npos) << e.text;
  request.arch = "sm_61";
  expect_error([&] { tcjit::explain_op(entry, request); }, tcjit::ErrorCode::invalid_argument,
               "unknown arch 'sm_61'");
}

TEST_F(ToolsApi, VerifyRunsChecksRecordsAndReportsProgress) {
  tcjit::RuntimeOptions options;
  options.device = "emu";
  options.db_path = db_.string();
  tcjit::Runtime rt(options);
  for (const char *text : {kGemm, kConv}) {
    std::ostringstream log;
    std::mutex mutex;
    std::vector<tcjit::Progress> seen;
    tcjit::VerifyRequest request;
    request.log = &log;
    request.on_progress = [&](const tcjit::Progress &p) {
      std::lock_guard lock(mutex);
      seen.push_back(p);
    };
    const tcjit::VerifyReport r = rt.verify(spec_of(text), request);
    EXPECT_TRUE(r.ok) << r.text;
    EXPECT_EQ(r.mismatches, 0);
    EXPECT_LE(r.worst_error_over_tolerance, 1.0);
    EXPECT_EQ(r.elements, std::string(text) == kGemm ? 64 * 48 : 2 * 8 * 8 * 16);
    EXPECT_TRUE(r.recorded);
    EXPECT_TRUE(r.estimate_seconds.has_value());
    EXPECT_EQ(log.str(), r.text) << "the log gets the report line by line";
    EXPECT_NE(r.text.find("result:   ok, verified on the emulator and recorded"), std::string::npos)
        << r.text;
    // the launch's blocks, ending with all of them
    ASSERT_FALSE(seen.empty());
    EXPECT_EQ(seen.back().what, "blocks");
    EXPECT_EQ(seen.back().done, seen.back().total);
    for (size_t i = 1; i < seen.size(); ++i)
      EXPECT_GE(seen[i].done, seen[i - 1].done);
    EXPECT_EQ(nlohmann::json::parse(r.json)["result"], "ok");
  }
  // the second run of the GEMM finds the kernel the first stored
  const tcjit::VerifyReport again = rt.verify(spec_of(kGemm), {});
  EXPECT_EQ(again.cache.rfind("hit", 0), 0u) << again.cache;
  expect_error([&] { rt.verify(spec_of("gemm m=? n=64 k=64 a=f16 b=f16"), {}); },
               tcjit::ErrorCode::bad_spec, "symbolic sizes");
  tcjit::VerifyRequest bad;
  bad.config = "nonsense";
  expect_error([&] { rt.verify(spec_of(kGemm), bad); }, tcjit::ErrorCode::invalid_argument,
               "--config 'nonsense'");
}

TEST_F(ToolsApi, TuneOpsStoresAWinnerThatPrepareThenTakes) {
  tcjit::TuneRequest request;
  request.db_path = db_.string();
  request.device = "emu";
  request.budget = "3";
  std::vector<tcjit::TuneEvent::Kind> kinds;
  request.on_event = [&](const tcjit::TuneEvent &e) { kinds.push_back(e.kind); };
  const tcjit::TuneReport report = tcjit::tune_ops(tcjit::parse_ops(kGemm), request);
  EXPECT_EQ(report.problems, 1u);
  EXPECT_EQ(report.failed, 0u);
  EXPECT_FALSE(report.interrupted);
  ASSERT_GE(kinds.size(), 3u);
  EXPECT_EQ(kinds.front(), tcjit::TuneEvent::Kind::setup);
  EXPECT_EQ(kinds[1], tcjit::TuneEvent::Kind::started);
  EXPECT_EQ(kinds.back(), tcjit::TuneEvent::Kind::finished);
  const nlohmann::json j = nlohmann::json::parse(report.json);
  ASSERT_EQ(j.size(), 1u);
  const std::string best = j[0]["sizes"][0]["config"];
  EXPECT_EQ(j[0]["sizes"][0]["provenance"], "predicted");
  tcjit::RuntimeOptions options;
  options.device = "emu";
  options.db_path = db_.string();
  tcjit::Runtime rt(options);
  EXPECT_EQ(rt.prepare(kGemm).config(), best);

  request.strategy = "greedy";
  expect_error([&] { tcjit::tune_ops(tcjit::parse_ops(kGemm), request); },
               tcjit::ErrorCode::invalid_argument, "--strategy 'greedy'");
  // a symbolic convolution is skipped with why, the rest tuned
  request.strategy = "model-topk";
  const tcjit::TuneReport skipped = tcjit::tune_ops(
      tcjit::parse_ops("conv2d n=? h=8 w=8 c=16 k=16 r=3 s=3 pad=1 x=f16"), request);
  ASSERT_EQ(skipped.skipped.size(), 1u);
  EXPECT_NE(skipped.skipped[0].find("give n"), std::string::npos) << skipped.skipped[0];
  EXPECT_EQ(skipped.problems, 0u);
}

// RuntimeOptions::backend = "nvrtc": kernels compiled now are the CUDA C++ backend's, verified
// like any other, stored apart (an llvm runtime does not take them); convolutions too. tune_ops
// builds its candidates with the backend asked for.
TEST_F(ToolsApi, TheNvrtcBackendThroughTheRuntimeAndTheTuner) {
  tcjit::RuntimeOptions options;
  options.device = "emu";
  options.db_path = db_.string();
  options.backend = "nvrtc";
  {
    tcjit::Runtime rt(options);
    const tcjit::VerifyReport r =
        rt.verify(spec_of("gemm m=100 n=72 k=64 a=bf16 b=bf16:col c=bf16 act=gelu bias=col"), {});
    EXPECT_TRUE(r.ok) << r.text;
    EXPECT_NE(r.cache.find("miss, compiled"), std::string::npos) << r.cache;
    const tcjit::VerifyReport again =
        rt.verify(spec_of("gemm m=100 n=72 k=64 a=bf16 b=bf16:col c=bf16 act=gelu bias=col"), {});
    EXPECT_EQ(again.cache.rfind("hit", 0), 0u) << again.cache;
    const tcjit::VerifyReport conv = rt.verify(spec_of(kConv), {});
    EXPECT_TRUE(conv.ok) << conv.text;
    EXPECT_NE(conv.cache.find("miss, compiled"), std::string::npos) << conv.cache;
    // a prepared operation launches the NVRTC kernel
    tcjit::Operation op = rt.prepare("gemm m=32 n=32 k=32 a=f16 b=f16:col c=f32");
    EXPECT_EQ(op.origin(), tcjit::Origin::compiled_now);
  }
  {
    tcjit::RuntimeOptions llvm = options;
    llvm.backend = "llvm";
    tcjit::Runtime rt(llvm);
    const tcjit::VerifyReport r =
        rt.verify(spec_of("gemm m=100 n=72 k=64 a=bf16 b=bf16:col c=bf16 act=gelu bias=col"), {});
    EXPECT_NE(r.cache.find("miss, compiled"), std::string::npos)
        << "an llvm runtime took the nvrtc kernel: " << r.cache;
  }
  tcjit::RuntimeOptions bad = options;
  bad.backend = "gcc";
  expect_error([&] { tcjit::Runtime rt(bad); }, tcjit::ErrorCode::invalid_argument,
               "unknown backend 'gcc'");

  tcjit::TuneRequest tune;
  tune.db_path = db_.string();
  tune.device = "emu";
  tune.budget = "2";
  tune.backend = "nvrtc";
  const tcjit::TuneReport report =
      tcjit::tune_ops(tcjit::parse_ops("gemm m=64 n=64 k=64 a=f16 b=f16:col"), tune);
  EXPECT_EQ(report.failed, 0u) << report.text;
  EXPECT_EQ(nlohmann::json::parse(report.json)[0]["sizes"][0]["failed"], 0) << report.json;
}

// act=custom:FILE: parse_ops reads the file (relative to the workload's folder), the runtime
// compiles it with the NVRTC backend and verifies it; the LLVM backend, a missing or unreadable
// file and a spec without its text are refused with the fix.
TEST_F(ToolsApi, CustomActivationFromAWorkloadFolder) {
  const fs::path dir = fs::temp_directory_path() / ("tcjit_custom_" + std::to_string(::getpid()));
  fs::create_directories(dir / "acts");
  std::ofstream(dir / "acts" / "softsign.cu")
      << "// softsign\n__device__ float act(float x) { return x / (1.0f + fabsf(x)); }\n";
  const std::string line = "gemm m=40 n=32 k=48 a=f16 b=f16:col c=f16 bias=col act=custom:acts/"
                           "softsign.cu";
  std::ofstream(dir / "w.tcjit") << line << "\n";
  const std::vector<tcjit::WorkloadEntry> ops =
      tcjit::parse_ops(line + "\n", (dir / "w.tcjit").string());
  ASSERT_EQ(ops.size(), 1u);
  const tcjit::OpSpec &spec = ops[0].spec;
  EXPECT_EQ(spec.epilogue.custom.path, "acts/softsign.cu");
  EXPECT_NE(spec.epilogue.custom.source.find("fabsf"), std::string::npos);
  EXPECT_NE(tcjit::canonical_text(spec).find("act=custom:acts/softsign.cu"), std::string::npos);
  // text given on its own: the current directory, where the file is not
  expect_error([&] { tcjit::parse_ops(line); }, tcjit::ErrorCode::bad_spec,
               "act=custom:acts/softsign.cu: no such file (looked for ");

  tcjit::RuntimeOptions options;
  options.device = "emu";
  options.db_path = db_.string();
  options.backend = "nvrtc";
  {
    tcjit::Runtime rt(options);
    const tcjit::VerifyReport r = rt.verify(spec, {});
    EXPECT_TRUE(r.ok) << r.text;
    EXPECT_NE(r.cache.find("miss, compiled"), std::string::npos) << r.cache;
    tcjit::OpSpec unloaded = spec;
    unloaded.epilogue.custom.source.clear();
    expect_error([&] { rt.prepare(unloaded); }, tcjit::ErrorCode::bad_spec,
                 "act=custom:acts/softsign.cu: the spec holds no source text");
  }
  options.backend = "llvm";
  tcjit::Runtime llvm(options);
  try {
    llvm.verify(spec, {});
    ADD_FAILURE() << "the LLVM backend compiled act=custom";
  } catch (const tcjit::Error &e) {
    EXPECT_NE(std::string(e.what()).find("only the CUDA C++ backend compiles it"),
              std::string::npos)
        << e.what();
  }

  tcjit::OpSpec big = spec;
  big.epilogue.custom.source.clear();
  std::ofstream(dir / "big.cu") << std::string(70000, ' ');
  big.epilogue.custom.path = (dir / "big.cu").string();
  expect_error([&] { tcjit::load_custom_activation(big); }, tcjit::ErrorCode::bad_spec,
               "70000 bytes, over the limit of 65536");
  std::ofstream(dir / "bin.cu", std::ios::binary) << std::string("ok\n\x01", 4);
  big.epilogue.custom.path = "bin.cu";
  expect_error([&] { tcjit::load_custom_activation(big, dir.string()); },
               tcjit::ErrorCode::bad_spec, "bin.cu:2: byte 0x01 is not text");
  big.epilogue.custom.path = "acts"; // a directory (a FIFO or a device likewise): not opened
  expect_error([&] { tcjit::load_custom_activation(big, dir.string()); },
               tcjit::ErrorCode::invalid_argument, "is not a regular file (it is a directory)");
  fs::remove_all(dir);
}

} // namespace
