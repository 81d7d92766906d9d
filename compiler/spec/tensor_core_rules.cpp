#include "compiler/spec/tensor_core_rules.h"

#include "compiler/spec/alignment.h"
#include "compiler/spec/shape.h"
#include "compiler/spec/validate.h"
#include "compiler/target/arch.h"
#include "compiler/target/mma_table.h"

#include <cstdio>
#include <stdexcept>
#include <string>

namespace tcjit {

namespace {

bool uses_f32_math(const OpSpec &s, bool tf32_override_off) {
  const DType in = input_dtype(s);
  return in == DType::f32 && resolve_math(s.math, tf32_override_off) == MathMode::f32;
}

bool is_channels_first(TensorLayout l) {
  return l == TensorLayout::nchw || l == TensorLayout::ncdhw || l == TensorLayout::kcrs ||
         l == TensorLayout::kctrs;
}

bool is_fast_group_size(int64_t v) {
  for (int64_t ok : {1, 4, 8, 16, 32, 64, 128, 256})
    if (v == ok)
      return true;
  return false;
}

std::string s(int64_t v) {
  return std::to_string(v);
}

// " (A100-SXM4-80GB: 19.5 TFLOPS fp32 vs 156 TFLOPS tf32)" for a known arch, else "".
std::string f32_vs_tf32(std::string_view arch) {
  const std::optional<ArchInfo> info = find_arch(arch);
  if (!info)
    return "";
  char text[128];
  std::snprintf(text, sizeof text, " (%s: %.3g TFLOPS fp32 vs %.3g TFLOPS tf32)",
                std::string(info->gpu).c_str(), peak_ops(*info, MathUnit::f32_simt) / 1e12,
                peak_ops(*info, MathUnit::tf32) / 1e12);
  return text;
}

void check_alignment(const OpSpec &spec, std::vector<RuleFinding> &out) {
  if (takes_depthwise_kernel(spec))
    return; // the depthwise kernel reads single channels by design (choose_mma's note)
  for (const OperandAlignment &a : analyze_alignment(spec)) {
    if (a.elements >= a.max_elements)
      continue;
    const bool layout_issue = a.limited_by.rfind("layout ", 0) == 0;
    if (layout_issue)
      continue; // reported by the layout rule
    const std::string dims =
        spec.kind == OpKind::gemm ? "the contiguous dimension and ld" : "the channel count";
    out.push_back({"vector-16B",
                   "operand " + a.operand + ": " + a.limited_by + ", so 16-byte vectors (" +
                       s(a.max_elements) + " x " + std::string(to_string(a.dtype)) +
                       ") are impossible; loads fall back to " + s(a.bytes()) + "-byte vectors",
                   "pad " + dims + " of " + a.operand + " to a multiple of " + s(a.max_elements) +
                       " (zeros do not change the result)"});
  }
}

void check_min_32(const OpSpec &spec, std::vector<RuleFinding> &out) {
  if (spec.kind == OpKind::gemm) {
    const Dim &k = spec.gemm.k;
    if (k.is_fixed() && k.value < 32)
      out.push_back({"min-32",
                     "k=" + s(k.value) + " < 32: each tensor-core tile along K is mostly padding",
                     "batch several small products into one with k >= 32, or accept the low "
                     "efficiency"});
    return;
  }
  const ConvSpec &c = spec.conv;
  if (c.groups != 1)
    return; // grouped convolutions are judged by the grouped rule
  if (c.c < 32)
    out.push_back({"min-32", "c=" + s(c.c) + " input channels < 32: tensor cores are underused",
                   "pad c to 32 (or fold a spatial dimension into channels)"});
  if (c.k < 32)
    out.push_back({"min-32", "k=" + s(c.k) + " output channels < 32: tensor cores are underused",
                   "pad k to 32"});
}

void check_layout(const OpSpec &spec, std::vector<RuleFinding> &out) {
  if (spec.kind == OpKind::gemm)
    return;
  const ConvSpec &c = spec.conv;
  auto report = [&](const char *name, TensorLayout l, std::string_view fast) {
    if (!is_channels_first(l))
      return;
    out.push_back({"layout-nhwc",
                   std::string(name) + " is " + std::string(to_string(l)) +
                       " (channels-first): the implicit-GEMM gather cannot use vectors, and "
                       "cuDNN would transpose it first",
                   "store " + std::string(name) + " as " + std::string(fast) +
                       " (channels-last), the tensor cores' native layout"});
  };
  const bool three_d = spec.kind == OpKind::conv3d;
  report("x", c.x.layout, three_d ? "ndhwc" : "nhwc");
  report("filter", c.filter.layout, three_d ? "ktrsc" : "krsc");
  report("y", c.y.layout, three_d ? "ndhwc" : "nhwc");
}

void check_groups(const OpSpec &spec, std::vector<RuleFinding> &out) {
  if (spec.kind == OpKind::gemm || spec.conv.groups <= 1)
    return;
  const ConvSpec &c = spec.conv;
  const int64_t cg = c.c / c.groups, kg = c.k / c.groups;
  if (cg != kg)
    out.push_back({"grouped-equal",
                   "groups=" + s(c.groups) + " gives " + s(cg) + " input and " + s(kg) +
                       " output channels per group: unequal per-group channels fall off the fast "
                       "grouped kernels",
                   "make c/groups == k/groups"});
  if (!is_fast_group_size(cg))
    out.push_back({"grouped-size",
                   "c/groups=" + s(cg) +
                       " channels per group is not in {1,4,8,16,32,64,128,256}, the sizes grouped "
                       "kernels are fast for",
                   "choose groups so that c/groups is one of 1,4,8,16,32,64,128,256"});
}

} // namespace

codegen::MathRequest math_request(const OpSpec &spec, bool tf32_override_off) {
  codegen::MathRequest r;
  r.a = input_dtype(spec);
  if (spec.kind == OpKind::gemm)
    r.b = spec.gemm.b.dtype;
  else
    r.b = spec.conv.pass == ConvPass::wgrad ? spec.conv.y.dtype : spec.conv.filter.dtype;
  r.acc = spec.acc;
  r.resolved = resolve_math(spec.math, tf32_override_off);
  r.sparsity = spec.sparsity;
  r.bop = spec.bop;
  return r;
}

MmaChoice choose_mma(const OpSpec &spec, std::string_view arch, bool tf32_override_off) {
  MmaChoice m;
  const std::optional<ArchInfo> info = find_arch(arch);
  if (!info)
    throw std::invalid_argument("choose_mma: unknown arch '" + std::string(arch) +
                                "' (tcjit targets " + known_arch_list() + ")");
  const DType in = input_dtype(spec);
  const codegen::MathRequest request = math_request(spec, tf32_override_off);
  if (std::string problem = codegen::math_problem(request, *info); !problem.empty()) {
    m.compiles = false;
    m.note = std::move(problem);
    return m;
  }
  if (takes_depthwise_kernel(spec)) {
    m.unit = MathUnit::f32_simt;
    m.note = "depthwise (groups = c = k): the direct depthwise kernel, one multiply-add per tap "
             "and output in " +
             std::string(in == DType::f64      ? "f64"
                         : is_integer_type(in) ? "s32"
                                               : "f32") +
             "; as an implicit GEMM each group would have N = 1 and use 1 of each mma's 8 "
             "columns";
    return m;
  }
  if (codegen::is_simt_math(request)) {
    m.unit = MathUnit::f32_simt;
    m.note = "math=f32: SIMT FFMA, exact fp32, no tensor cores";
    return m;
  }
  const std::optional<codegen::MmaForm> form = codegen::find_mma_form(request);
  if (!form) // math_problem() has a reason for every spec without a form
    throw std::logic_error("choose_mma: no mma form and no reason for " +
                           std::string(to_string(in)) + " x " + std::string(to_string(spec.acc)));
  m.tensor_cores = true;
  m.unit = form->unit;
  m.instruction = std::string(form->ptx);
  m.shape = "m" + s(form->m) + "n" + s(form->n) + "k" + s(form->k);
  if (form->kind == codegen::MmaKind::tf32_f32)
    m.note = "inputs rounded to tf32 (cvt.rna.tf32.f32): 10-bit mantissa, fp32 accumulate";
  if (form->kind == codegen::MmaKind::f16_f16)
    m.note = "acc=f16 trades accuracy for registers: f16x2 accumulators take half the registers "
             "of acc=f32, but every k-step of 16 products rounds the sum to f16 (11-bit "
             "significand), so the error grows with K (docs/numerics.md); they are widened to f32 "
             "once, after the main loop. Use acc=f32 for accuracy";
  if (form->a != form->b)
    m.note = std::string(to_string(form->a)) + " x " + std::string(to_string(form->b)) +
             ": each operand read by its own type (signed or unsigned), exact s32 accumulate";
  m.sparse = form->sparse;
  if (form->sparse)
    m.note =
        std::string(form->elem_bits == 4
                        ? "2:4-sparse A by pairs (4:8, the mma.sp rule for 4-bit values): pass "
                          "A pruned (the 2 pairs of largest |v0| + |v1| of every 4 pairs of "
                          "values along K) and "
                        : "2:4-sparse A: pass A pruned (the 2 largest magnitudes of every 4 "
                          "along K) and ") +
        "compressed, its k/2 kept values per row then the metadata (tcjit::"
        "prune_2_4_and_compress, docs/dsl.md); peak " +
        s(static_cast<int>(sparse_speedup)) + "x the dense mma's";
  return m;
}

std::vector<RuleFinding> check_tensor_core_rules(const OpSpec &spec, std::string_view arch,
                                                 bool tf32_override_off) {
  std::vector<RuleFinding> out;
  if (uses_f32_math(spec, tf32_override_off)) {
    const bool by_env = spec.math == MathMode::automatic && tf32_override_off;
    out.push_back({"tf32-disabled",
                   std::string(by_env ? "NVIDIA_TF32_OVERRIDE=0 disables TF32" : "math=f32") +
                       ": f32 inputs run on SIMT FFMA without tensor cores, expect ~8-16x slower" +
                       f32_vs_tf32(arch),
                   "use math=tf32 (or auto without NVIDIA_TF32_OVERRIDE=0) if ~1e-3 relative "
                   "error is acceptable, or f16/bf16 inputs"});
  }
  check_alignment(spec, out);
  check_min_32(spec, out);
  check_layout(spec, out);
  check_groups(spec, out);
  const auto info = find_arch(arch);
  if (info && input_dtype(spec) == DType::f64 && !info->full_rate_f64_mma)
    out.push_back({"f64-rate",
                   std::string(arch) + " (" + std::string(info->example) +
                       ") runs f64 DMMA at a small fraction of A100/H100 rate",
                   "use an sm_80 or sm_90 part for f64, or a lower precision"});
  return out;
}

} // namespace tcjit
