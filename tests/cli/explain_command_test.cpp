// `tcjit explain` end to end: the binary, its exit codes, its messages.
#include "run_tool.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace tcjit::testing {
namespace {

TEST(Cli, HelpListsSubcommandsAndEachHasHelp) {
  const ToolResult top = run_tool("--help");
  EXPECT_EQ(top.exit_code, 0);
  EXPECT_NE(top.out.find("explain"), std::string::npos);
  const ToolResult sub = run_tool("explain --help");
  EXPECT_EQ(sub.exit_code, 0);
  EXPECT_NE(sub.out.find("--arch"), std::string::npos);
}

TEST(Cli, NoSubcommandIsAUsageError) {
  const ToolResult r = run_tool("");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("subcommand"), std::string::npos);
}

TEST(Cli, ExplainSpecText) {
  const ToolResult r =
      run_tool(shell_quote("gemm m=4096 n=4096 k=4096 a=f16:row b=f16:col c=f16:row acc=f32"));
  ASSERT_EQ(r.exit_code, 2) << "explain is a subcommand; bare spec text is not";
  const ToolResult e = run_tool(
      "explain " + shell_quote("gemm m=4096 n=4096 k=4096 a=f16:row b=f16:col c=f16:row acc=f32"));
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_NE(e.out.find("gemm view:   m=4096 n=4096 k=4096"), std::string::npos) << e.out;
  EXPECT_NE(e.out.find("tensor core: yes, mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"),
            std::string::npos)
      << e.out;
  EXPECT_NE(e.out.find("a1b948a81e94a3b8"), std::string::npos) << e.out; // golden key hash
  EXPECT_NE(e.out.find("alignment:   a=8 (16 B) b=8 (16 B) c=8 (16 B)"), std::string::npos);
  EXPECT_NE(e.out.find("rules:       none broken"), std::string::npos);
  EXPECT_NE(e.out.find("137 GFLOP"), std::string::npos) << e.out; // 2 * 4096^3 = 1.37e11
}

// explain shows the config a cache miss would compile and its predicted time, labelled as a
// prediction; split-K for a long K with a small output, as the cost model ranks it.
TEST(Cli, ExplainShowsTheChosenConfigAndItsPredictedTime) {
  const std::string spec = shell_quote("gemm m=128 n=128 k=8192 a=f16 b=f16:col c=f16 acc=f32");
  const ToolResult e = run_tool("explain " + spec);
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_NE(e.out.find("config:      64x64x32 w32x32 s3 k16 "), std::string::npos) << e.out;
  EXPECT_NE(e.out.find("on A100-SXM4-80GB"), std::string::npos) << e.out;
  EXPECT_NE(e.out.find("a prediction, not a measurement"), std::string::npos) << e.out;
  const ToolResult j = run_tool("explain --json --arch sm_90 " + spec);
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto chosen = nlohmann::json::parse(j.out)[0]["chosen_config"];
  EXPECT_EQ(chosen["provenance"], "predicted");
  EXPECT_EQ(chosen["gpu"], "H100-SXM5-80GB");
  EXPECT_GT(chosen["predicted_us"].get<double>(), 0);
}

// --config predicts a config of the user's (CUTLASS's default for the size, here) instead of the
// chooser's; a config the generator refuses is a usage error naming the rule.
TEST(Cli, ExplainPredictsAGivenConfig) {
  const std::string spec = shell_quote("gemm m=4096 n=4096 k=4096 a=f16 b=f16:col c=f16 acc=f32");
  const ToolResult e = run_tool("explain " + spec + " --config '256x128x64 w64x64 s3'");
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_NE(e.out.find("config:      256x128x64 w64x64 s3 k1 g1 va8 vb8 (given with --config)"),
            std::string::npos)
      << e.out;
  const ToolResult j = run_tool("explain --json " + spec + " --config '64x128x32 w64x64'");
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto chosen = nlohmann::json::parse(j.out)[0]["chosen_config"];
  EXPECT_EQ(chosen["config"], "64x128x32 w64x64 s3 k1 g1 va8 vb8");
  EXPECT_EQ(chosen["given"], true);
  EXPECT_EQ(chosen["bound"], "l2");
  const ToolResult bad = run_tool("explain " + spec + " --config 'w48x16'");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--config 'w48x16': wm: wm=48 must be a power of two"), std::string::npos)
      << bad.err;
}

// A convolution's explanation names the kernel path and how each operand is loaded, and says how
// much of the tensor cores a depthwise convolution uses.
TEST(Cli, ExplainNamesTheConvolutionsKernelPathAndAlignmentStrategy) {
  const ToolResult conv =
      run_tool("explain " + shell_quote("conv2d n=1 h=32 w=32 c=64 k=64 r=3 s=3 pad=1 x=f16:nhwc"));
  ASSERT_EQ(conv.exit_code, 0) << conv.err;
  EXPECT_NE(conv.out.find("config:      "), std::string::npos) << conv.out;
  EXPECT_NE(conv.out.find("kernel path: implicit GEMM (fprop): A = x through the im2col gather, "
                          "B = filter, D = y"),
            std::string::npos)
      << conv.out;
  EXPECT_NE(conv.out.find("loads:       x in 16-byte cp.async pieces (8 x f16)"), std::string::npos)
      << conv.out;
  const ToolResult stem = run_tool(
      "explain " + shell_quote("conv2d n=1 h=32 w=32 c=3 k=64 r=7 s=7 pad=3 stride=2 x=f16"));
  ASSERT_EQ(stem.exit_code, 0) << stem.err;
  EXPECT_NE(stem.out.find("x in 2-byte ld.global pieces (1 x f16), narrower than 16 bytes: c per "
                          "group = 3 is not a multiple of 8"),
            std::string::npos)
      << stem.out;
  const ToolResult dw = run_tool(
      "explain " + shell_quote("conv2d n=1 h=16 w=16 c=32 k=32 r=3 s=3 pad=1 groups=32 x=f16"));
  ASSERT_EQ(dw.exit_code, 0) << dw.err;
  EXPECT_NE(
      dw.out.find("tensor core: no — depthwise (groups = c = k): the direct depthwise kernel"),
      std::string::npos)
      << dw.out;
  EXPECT_NE(dw.out.find("kernel path: direct depthwise kernel (groups = c = k, fprop)"),
            std::string::npos)
      << dw.out;
  EXPECT_EQ(dw.out.find("vector-16B"), std::string::npos) << dw.out;
  // Its wgrad is a grouped implicit GEMM with N = taps per group: tensor cores, and the explanation
  // says how much of each mma is used when N is below the mma's width.
  const ToolResult dw1 = run_tool("explain " + shell_quote("conv2d n=1 h=16 w=16 c=32 k=32 r=1 "
                                                           "s=1 groups=32 pass=wgrad x=f16"));
  EXPECT_NE(dw1.out.find("efficiency:  the implicit GEMM has N = 1 per group: each m16n8k16 mma "
                         "computes 1 of its 8 columns, so at most 12%"),
            std::string::npos)
      << dw1.out;
  const ToolResult dgrad =
      run_tool("explain " + shell_quote("conv2d n=1 h=16 w=16 c=32 k=32 r=3 "
                                        "s=3 pad=1 stride=2 pass=dgrad x=f16"));
  EXPECT_NE(dgrad.out.find("A = y through its phase's taps, B = filter by the phase's filter-tap "
                           "rows, D = x"),
            std::string::npos)
      << dgrad.out;
  // the decomposition: 4 phases of 1, 2, 2 and 4 of the 9 taps, a quarter of the dense work
  EXPECT_NE(dgrad.out.find("strided dgrad by phases: the dx pixels split into 4 phases"),
            std::string::npos)
      << dgrad.out;
  EXPECT_NE(dgrad.out.find("(at most 4 of 9)"), std::string::npos) << dgrad.out;
  EXPECT_NE(dgrad.out.find("1/4 of the dense implicit GEMM's multiply-adds"), std::string::npos)
      << dgrad.out;
  // a 1x1 stride-2 downsample: three of the four phases have no tap
  const ToolResult down = run_tool("explain " + shell_quote("conv2d n=1 h=16 w=16 c=32 k=32 r=1 "
                                                            "s=1 stride=2 pass=dgrad x=f16"));
  EXPECT_NE(down.out.find("3 phases have no tap and only write their epilogue"), std::string::npos)
      << down.out;
}

TEST(Cli, ExplainReportsBrokenRulesWithFixes) {
  const ToolResult r =
      run_tool("explain " + shell_quote("conv2d n=1 h=32 w=32 c=3 k=64 r=3 s=3 pad=1 x=f16:nchw"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("[layout-nhwc] x is nchw"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("[min-32] c=3 input channels < 32"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fix: "), std::string::npos);
}

TEST(Cli, ExplainWorkloadFileAndStdin) {
  const std::string file =
      std::string(TCJIT_SOURCE_DIR) + "/examples/workloads/issue_examples.tcjit";
  const ToolResult f = run_tool("explain " + shell_quote(file));
  ASSERT_EQ(f.exit_code, 0) << f.err;
  EXPECT_NE(f.out.find("== square_f16 (weight 10)"), std::string::npos) << f.out;
  EXPECT_NE(f.out.find("== video_dgrad (weight 1)"), std::string::npos);
  EXPECT_NE(f.out.find("m16n8k8"), std::string::npos); // the tf32 example
  EXPECT_NE(f.out.find("work:        depends on the symbolic dimensions"), std::string::npos);

  const ToolResult s = run_tool("explain -", "", "gemm m=64 n=64 k=64 a=s8 b=s8\n");
  ASSERT_EQ(s.exit_code, 0) << s.err;
  EXPECT_NE(s.out.find("m16n8k32"), std::string::npos);
}

TEST(Cli, ExplainHonoursTf32Override) {
  const std::string spec = shell_quote("gemm m=256 n=256 k=256 a=f32 b=f32 c=f32");
  const ToolResult on = run_tool("explain " + spec);
  EXPECT_NE(on.out.find("m16n8k8"), std::string::npos) << on.out;
  const ToolResult off = run_tool("explain " + spec, "NVIDIA_TF32_OVERRIDE=0");
  EXPECT_NE(off.out.find("tensor core: no"), std::string::npos) << off.out;
  EXPECT_NE(off.out.find("[tf32-disabled] NVIDIA_TF32_OVERRIDE=0 disables TF32"), std::string::npos)
      << off.out;
}

TEST(Cli, BadSpecGivesPreciseDiagnostic) {
  const ToolResult r = run_tool("explain " + shell_quote("gemm m=64 n=64 k=64 a=fp16:row b=f16"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("<command line>:1:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("error: unknown dtype 'fp16' (did you mean 'f16'?)"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("gemm m=64 n=64 k=64 a=fp16:row b=f16"), std::string::npos); // the line
  EXPECT_NE(r.err.find('^'), std::string::npos);                                    // the caret
  EXPECT_EQ(r.out, "");
}

TEST(Cli, NeitherFileNorSpec) {
  const ToolResult r = run_tool("explain no_such_file.tcjit");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("'no_such_file.tcjit' is neither a readable file nor a spec"),
            std::string::npos)
      << r.err;
}

TEST(Cli, UnknownArch) {
  const ToolResult r =
      run_tool("explain --arch sm_75 " + shell_quote("gemm m=8 n=8 k=8 a=f16 b=f16"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown arch 'sm_75' (tcjit targets sm_80, sm_86, sm_89, sm_90)"),
            std::string::npos)
      << r.err;
}

// The roofline is the selected arch's GPU's (the tuner's model), in the text and the JSON.
TEST(Cli, ExplainUsesTheSelectedArchsRoofline) {
  const std::string spec = shell_quote("gemm m=4096 n=4096 k=4096 a=f16 b=f16:col c=f16 acc=f32");
  const ToolResult a100 = run_tool("explain " + spec);
  EXPECT_NE(a100.out.find("roofline:    A100-SXM4-80GB bound 312 TFLOP/s of 312 TFLOP/s peak"),
            std::string::npos)
      << a100.out;
  const ToolResult h100 = run_tool("explain --arch sm_90 " + spec);
  EXPECT_NE(h100.out.find("roofline:    H100-SXM5-80GB bound"), std::string::npos) << h100.out;
  EXPECT_EQ(h100.out.find("A100"), std::string::npos) << h100.out;
  const ToolResult j = run_tool("explain --json --arch sm_86 " + spec);
  const auto roofline = nlohmann::json::parse(j.out)[0]["roofline"];
  EXPECT_NE(roofline["gpu"].get<std::string>().find("A6000"), std::string::npos) << roofline;
  EXPECT_EQ(roofline["bandwidth_bytes_per_s"].get<double>(), 768e9);
}

TEST(Cli, ExplainJson) {
  const ToolResult r =
      run_tool("explain --json " +
               shell_quote("conv2d n=8 h=28 w=28 c=128 k=128 r=3 s=3 pad=1 groups=128 x=f16:nhwc"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["gemm"]["groups"], 128);
  EXPECT_EQ(j[0]["gemm"]["n"], 1);
  EXPECT_EQ(j[0]["gemm"]["k"], 9);
  EXPECT_EQ(j[0]["alignment"]["x"]["elements"], 1);
  EXPECT_EQ(j[0]["hash"].get<std::string>().size(), 16u);
  // a depthwise convolution runs the direct kernel: no tensor cores, and the JSON says so
  EXPECT_EQ(j[0]["tensor_cores"], false);
  EXPECT_NE(j[0]["kernel_path"]["kernel path"].get<std::string>().find("direct depthwise kernel"),
            std::string::npos);
}

} // namespace
} // namespace tcjit::testing
