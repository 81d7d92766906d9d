// The race's problem lists (bench/gpu_tool/problems.cpp): the issue's GEMMs in every dtype with
// and without bias+GELU, ResNet-50's 23 distinct convolutions at n=32 in each pass, a --quick
// subset of each, and tcjit's DSL text of every problem.
#include "bench/gpu_tool/problems.h"
#include "bench/gpu_tool/race.h"
#include "tcjit/tools.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <tuple>

namespace tcjit::bench {
namespace {

std::string gemm_id(const GemmProblem &p) {
  return p.name + " " + p.dtype + (p.bias_gelu ? " bias+gelu" : "");
}
std::string conv_id(const ConvProblem &p) {
  return p.name + " " + p.pass;
}

TEST(GpuBenchProblems, GemmsOfTheIssueInEveryDtypeAndEpilogue) {
  const std::vector<GemmProblem> all = race_gemm_problems(false);
  std::set<std::string> ids;
  std::map<std::string, std::tuple<int64_t, int64_t, int64_t>> shapes;
  std::set<std::string> dtypes;
  int with_epilogue = 0;
  for (const GemmProblem &p : all) {
    EXPECT_TRUE(ids.insert(gemm_id(p)).second) << "twice: " << gemm_id(p);
    shapes[p.name] = {p.m, p.n, p.k};
    dtypes.insert(p.dtype);
    with_epilogue += p.bias_gelu;
    EXPECT_EQ(p.batch, 1);
  }
  EXPECT_EQ(all.size(), 8u * 4u * 2u);
  EXPECT_EQ(with_epilogue, 32);
  EXPECT_EQ(dtypes, (std::set<std::string>{"f16", "bf16", "tf32", "s8"}));
  using S = std::tuple<int64_t, int64_t, int64_t>;
  EXPECT_EQ(shapes.at("4096^3"), S(4096, 4096, 4096));
  EXPECT_EQ(shapes.at("1024^3"), S(1024, 1024, 1024));
  EXPECT_EQ(shapes.at("16x4096x4096"), S(16, 4096, 4096));
  EXPECT_EQ(shapes.at("1000^3"), S(1000, 1000, 1000));
  // BERT-base at batch 8 x seq 128 = 1024 tokens, hidden 768, FFN 3072.
  EXPECT_EQ(shapes.at("bert_qkv"), S(1024, 2304, 768));
  EXPECT_EQ(shapes.at("bert_attn_out"), S(1024, 768, 768));
  EXPECT_EQ(shapes.at("bert_ffn_up"), S(1024, 3072, 768));
  EXPECT_EQ(shapes.at("bert_ffn_down"), S(1024, 768, 3072));
  EXPECT_EQ(shapes.size(), 8u);
}

TEST(GpuBenchProblems, Resnet50LayersAtBatch32InEveryPass) {
  const std::vector<ConvProblem> all = race_conv_problems(false);
  std::set<std::string> ids, names;
  std::map<std::string, int> passes;
  for (const ConvProblem &p : all) {
    EXPECT_TRUE(ids.insert(conv_id(p)).second) << "twice: " << conv_id(p);
    names.insert(p.name);
    ++passes[p.pass];
    EXPECT_EQ(p.n, 32) << conv_id(p);
    EXPECT_EQ(p.groups, 1);
  }
  EXPECT_EQ(names.size(), 23u);
  EXPECT_EQ(passes, (std::map<std::string, int>{{"dgrad", 23}, {"fprop", 23}, {"wgrad", 23}}));
  // The README workload's stem and a strided 3x3, as written there.
  for (const ConvProblem &p : all) {
    if (p.name == "conv1") {
      EXPECT_EQ(std::tie(p.h, p.w, p.c, p.k, p.r, p.s, p.pad_h, p.stride_h),
                std::make_tuple(224, 224, 3, 64, 7, 7, 3, 2));
      EXPECT_EQ(p.p(), 112);
    }
    if (p.name == "res4_3x3s2") {
      EXPECT_EQ(std::tie(p.h, p.c, p.k, p.r, p.pad_h, p.stride_h),
                std::make_tuple(28, 256, 256, 3, 1, 2));
      EXPECT_EQ(p.q(), 14);
    }
  }
}

TEST(GpuBenchProblems, QuickIsASubsetOfEachList) {
  std::set<std::string> gemms, convs;
  for (const GemmProblem &p : race_gemm_problems(false))
    gemms.insert(gemm_id(p));
  for (const ConvProblem &p : race_conv_problems(false))
    convs.insert(conv_id(p));
  const std::vector<GemmProblem> qg = race_gemm_problems(true);
  const std::vector<ConvProblem> qc = race_conv_problems(true);
  std::set<std::string> quick_dtypes, quick_passes, quick_names;
  for (const GemmProblem &p : qg) {
    EXPECT_TRUE(gemms.contains(gemm_id(p))) << gemm_id(p);
    quick_dtypes.insert(p.dtype);
    quick_names.insert(p.name);
  }
  for (const ConvProblem &p : qc) {
    EXPECT_TRUE(convs.contains(conv_id(p))) << conv_id(p);
    quick_passes.insert(p.pass);
  }
  EXPECT_EQ(quick_names, (std::set<std::string>{"1024^3", "bert_qkv"}));
  EXPECT_EQ(quick_dtypes, (std::set<std::string>{"f16", "s8"}));
  EXPECT_EQ(quick_passes, (std::set<std::string>{"fprop", "dgrad", "wgrad"}));
  EXPECT_EQ(qc.size(), 6u); // four layers forward, one dgrad, one wgrad
  EXPECT_LT(qg.size(), gemms.size());
}

// tcjit's spec of every problem parses, with the operand types and sizes the anchors get.
TEST(GpuBenchProblems, EverySpecTextParses) {
  for (const GemmProblem &p : race_gemm_problems(false)) {
    const std::string text = gemm_spec_text(p);
    SCOPED_TRACE(text);
    const OpSpec spec = parse_ops(text).front().spec;
    EXPECT_EQ(spec.gemm.m.value, p.m);
    EXPECT_EQ(spec.gemm.n.value, p.n);
    EXPECT_EQ(spec.gemm.k.value, p.k);
    EXPECT_EQ(spec.gemm.a.layout, MatrixLayout::row);
    EXPECT_EQ(spec.gemm.b.layout, MatrixLayout::col);
    EXPECT_EQ(spec.gemm.c.layout, MatrixLayout::row);
    EXPECT_EQ(spec.gemm.c.dtype, p.dtype == "s8"     ? DType::s32
                                 : p.dtype == "tf32" ? DType::f32
                                 : p.dtype == "bf16" ? DType::bf16
                                                     : DType::f16);
    EXPECT_EQ(spec.epilogue.bias, p.bias_gelu ? BiasKind::col : BiasKind::none);
    EXPECT_EQ(spec.epilogue.act, p.bias_gelu ? Activation::gelu : Activation::none);
  }
  for (const ConvProblem &p : race_conv_problems(false)) {
    const std::string text = conv_spec_text(p);
    SCOPED_TRACE(text);
    const OpSpec spec = parse_ops(text).front().spec;
    EXPECT_EQ(spec.conv.n.value, 32);
    EXPECT_EQ(spec.conv.pad[1], p.pad_h);
    EXPECT_EQ(spec.conv.stride[2], p.stride_w);
    EXPECT_EQ(std::string(to_string(spec.conv.pass)), p.pass);
    EXPECT_EQ(spec.conv.x.layout, TensorLayout::nhwc);
    EXPECT_EQ(spec.conv.filter.layout, TensorLayout::krsc);
  }
}

} // namespace
} // namespace tcjit::bench
