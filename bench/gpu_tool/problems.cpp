#include "bench/gpu_tool/problems.h"

#include <array>

namespace tcjit::bench {

namespace {

struct GemmShape {
  const char *name;
  int64_t m, n, k;
};

// The benchmark's GEMMs; BERT-base's four at batch 8 x seq 128 = 1024 tokens (hidden 768, FFN
// 3072): the fused QKV projection, the attention output, the FFN's up and down projections.
constexpr std::array<GemmShape, 8> kGemmShapes{{
    {"4096^3", 4096, 4096, 4096},
    {"1024^3", 1024, 1024, 1024},
    {"16x4096x4096", 16, 4096, 4096},
    {"1000^3", 1000, 1000, 1000},
    {"bert_qkv", 1024, 2304, 768},
    {"bert_attn_out", 1024, 768, 768},
    {"bert_ffn_up", 1024, 3072, 768},
    {"bert_ffn_down", 1024, 768, 3072},
}};

constexpr std::array<const char *, 4> kGemmDtypes{"f16", "bf16", "tf32", "s8"};

struct ConvLayer {
  const char *name;
  int64_t h, w, c, k, r, s, pad, stride;
};

// examples/workloads/resnet50.tcjit: every distinct convolution of ResNet-50's forward pass.
constexpr std::array<ConvLayer, 23> kResnet50{{
    {"conv1", 224, 224, 3, 64, 7, 7, 3, 2},         {"res2_reduce0", 56, 56, 64, 64, 1, 1, 0, 1},
    {"res2_3x3", 56, 56, 64, 64, 3, 3, 1, 1},       {"res2_expand", 56, 56, 64, 256, 1, 1, 0, 1},
    {"res2_reduce", 56, 56, 256, 64, 1, 1, 0, 1},   {"res3_reduce0", 56, 56, 256, 128, 1, 1, 0, 1},
    {"res3_3x3s2", 56, 56, 128, 128, 3, 3, 1, 2},   {"res3_down", 56, 56, 256, 512, 1, 1, 0, 2},
    {"res3_expand", 28, 28, 128, 512, 1, 1, 0, 1},  {"res3_reduce", 28, 28, 512, 128, 1, 1, 0, 1},
    {"res3_3x3", 28, 28, 128, 128, 3, 3, 1, 1},     {"res4_reduce0", 28, 28, 512, 256, 1, 1, 0, 1},
    {"res4_3x3s2", 28, 28, 256, 256, 3, 3, 1, 2},   {"res4_down", 28, 28, 512, 1024, 1, 1, 0, 2},
    {"res4_expand", 14, 14, 256, 1024, 1, 1, 0, 1}, {"res4_reduce", 14, 14, 1024, 256, 1, 1, 0, 1},
    {"res4_3x3", 14, 14, 256, 256, 3, 3, 1, 1},     {"res5_reduce0", 14, 14, 1024, 512, 1, 1, 0, 1},
    {"res5_3x3s2", 14, 14, 512, 512, 3, 3, 1, 2},   {"res5_down", 14, 14, 1024, 2048, 1, 1, 0, 2},
    {"res5_expand", 7, 7, 512, 2048, 1, 1, 0, 1},   {"res5_reduce", 7, 7, 2048, 512, 1, 1, 0, 1},
    {"res5_3x3", 7, 7, 512, 512, 3, 3, 1, 1},
}};

constexpr int64_t kConvBatch = 32;
constexpr std::array<const char *, 3> kConvPasses{"fprop", "dgrad", "wgrad"};

GemmProblem gemm_problem(const GemmShape &shape, const char *dtype, bool bias_gelu) {
  GemmProblem p;
  p.name = shape.name;
  p.m = shape.m;
  p.n = shape.n;
  p.k = shape.k;
  p.dtype = dtype;
  p.bias_gelu = bias_gelu;
  return p;
}

ConvProblem conv_problem(const ConvLayer &layer, const char *pass) {
  ConvProblem p;
  p.name = layer.name;
  p.pass = pass;
  p.n = kConvBatch;
  p.h = layer.h;
  p.w = layer.w;
  p.c = layer.c;
  p.k = layer.k;
  p.r = layer.r;
  p.s = layer.s;
  p.pad_h = p.pad_w = layer.pad;
  p.stride_h = p.stride_w = layer.stride;
  return p;
}

} // namespace

std::vector<GemmProblem> race_gemm_problems(bool quick) {
  std::vector<GemmProblem> problems;
  if (quick) {
    // 1024^3 and BERT's QKV in f16 and s8, plain and (f16) with bias+GELU.
    for (const GemmShape &shape : {kGemmShapes[1], kGemmShapes[4]}) {
      problems.push_back(gemm_problem(shape, "f16", false));
      problems.push_back(gemm_problem(shape, "f16", true));
      problems.push_back(gemm_problem(shape, "s8", false));
    }
    return problems;
  }
  for (const GemmShape &shape : kGemmShapes)
    for (const char *dtype : kGemmDtypes)
      for (bool bias_gelu : {false, true})
        problems.push_back(gemm_problem(shape, dtype, bias_gelu));
  return problems;
}

std::vector<ConvProblem> race_conv_problems(bool quick) {
  std::vector<ConvProblem> problems;
  if (quick) {
    // Four layers forward (a 7x7 stem, a 1x1, a 3x3, a strided 3x3), one dgrad, one wgrad.
    for (const char *name : {"conv1", "res2_reduce0", "res3_3x3", "res4_3x3s2"})
      for (const ConvLayer &layer : kResnet50)
        if (std::string(layer.name) == name)
          problems.push_back(conv_problem(layer, "fprop"));
    problems.push_back(conv_problem(kResnet50[10], "dgrad")); // res3_3x3
    problems.push_back(conv_problem(kResnet50[10], "wgrad"));
    return problems;
  }
  for (const ConvLayer &layer : kResnet50)
    for (const char *pass : kConvPasses)
      problems.push_back(conv_problem(layer, pass));
  return problems;
}

} // namespace tcjit::bench
