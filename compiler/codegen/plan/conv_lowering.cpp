#include "compiler/codegen/plan/conv_lowering.h"

#include "compiler/codegen/plan/dgrad_phases.h"
#include "compiler/spec/alignment.h"
#include "compiler/spec/shape.h"

#include <limits>
#include <sstream>
#include <stdexcept>

namespace tcjit::codegen {

namespace {

bool is_channels_last(TensorLayout l) {
  return l == TensorLayout::nhwc || l == TensorLayout::ndhwc || l == TensorLayout::krsc ||
         l == TensorLayout::ktrsc;
}

int alignment_of(const OpSpec &conv, const char *tensor) {
  for (const OperandAlignment &a : analyze_alignment(conv))
    if (a.operand == tensor)
      return a.elements;
  return 1;
}

const char *tensor_name(ConvTensor t) {
  return t == ConvTensor::x ? "x" : t == ConvTensor::filter ? "filter" : "y";
}

const TensorOperand &tensor_of(const ConvSpec &c, ConvTensor t) {
  return t == ConvTensor::x ? c.x : t == ConvTensor::filter ? c.filter : c.y;
}

int32_t checked_i32(int64_t v, const char *what) {
  if (v > std::numeric_limits<int32_t>::max())
    throw std::invalid_argument(std::string("the implicit GEMM's ") + what + " = " +
                                std::to_string(v) +
                                " exceeds 2147483647, the kernel's 32-bit index range; split the "
                                "batch n into smaller launches");
  return static_cast<int32_t>(v);
}

} // namespace

std::string_view to_string(Gather g) {
  switch (g) {
  case Gather::linear: return "linear";
  case Gather::im2col: return "im2col";
  case Gather::strided: return "strided";
  case Gather::tap_rows: return "tap_rows";
  case Gather::strided_phases: return "strided_phases";
  case Gather::tap_rows_phases: return "tap_rows_phases";
  }
  return "?";
}

std::string describe(const ConvConstants &k) {
  std::ostringstream o;
  auto dims = [&](const char *name, const std::array<int64_t, 3> &v) {
    o << " " << name << " ";
    if (k.three_d)
      o << v[0] << ",";
    o << v[1] << "," << v[2];
  };
  o << (k.three_d ? "conv3d " : "conv2d ") << to_string(k.pass);
  if (k.three_d)
    o << " d" << k.d;
  o << " h" << k.h << " w" << k.w << " c" << k.c << " k" << k.k;
  if (k.three_d)
    o << " t" << k.t;
  o << " r" << k.r << " s" << k.s;
  dims("pad", k.pad);
  dims("stride", k.stride);
  dims("dil", k.dilation);
  o << " groups " << k.groups;
  return o.str();
}

ConvRoles conv_roles(ConvPass pass) {
  switch (pass) {
  case ConvPass::fprop: return {ConvTensor::x, ConvTensor::filter, ConvTensor::y};
  case ConvPass::dgrad: return {ConvTensor::y, ConvTensor::filter, ConvTensor::x};
  case ConvPass::wgrad: return {ConvTensor::y, ConvTensor::x, ConvTensor::filter};
  }
  return {ConvTensor::x, ConvTensor::filter, ConvTensor::y};
}

std::string channels_first_problem(const OpSpec &spec) {
  const ConvSpec &c = spec.conv;
  const bool three_d = spec.kind == OpKind::conv3d;
  for (const auto &[name, t] : {std::pair{"x", &c.x}, {"filter", &c.filter}, {"y", &c.y}}) {
    if (is_channels_last(t->layout))
      continue;
    const bool filter = std::string_view(name) == "filter";
    const char *want = filter ? (three_d ? "ktrsc" : "krsc") : (three_d ? "ndhwc" : "nhwc");
    return std::string(name) + " is " + std::string(to_string(t->layout)) +
           ": the implicit-GEMM kernels read channels-last tensors only (" +
           (three_d ? "ndhwc/ktrsc" : "nhwc/krsc") +
           "). Convert it first (e.g. PyTorch: t.to(memory_format=torch.channels_last" +
           (three_d ? "_3d" : "") + ")) and declare " + name + "=" +
           std::string(to_string(t->dtype)) + ":" + want +
           "; tcjit has no channels-first path (a strided gather would be a silent 8x slower one)";
  }
  return "";
}

namespace {

ConvLowering lower_conv_uncached(const OpSpec &spec);

} // namespace

ConvLowering lower_conv(const OpSpec &spec) {
  // The tuner asks for the same spec's lowering a dozen times per config of a space of ~10^5
  // (validation, vector limits, the cost model), alternating between the spec and its
  // channel-padded copy: the last two of each thread are kept.
  thread_local std::array<std::optional<std::pair<OpSpec, ConvLowering>>, 2> recent;
  thread_local size_t next = 0;
  for (const auto &entry : recent)
    if (entry && entry->first == spec)
      return entry->second;
  ConvLowering l = lower_conv_uncached(spec);
  recent[next].emplace(spec, l);
  next = (next + 1) % recent.size();
  return l;
}

namespace {

ConvLowering lower_conv_uncached(const OpSpec &spec) {
  if (spec.kind == OpKind::gemm)
    throw std::invalid_argument("lower_conv: the spec is a gemm, not a convolution");
  const ConvSpec &c = spec.conv;
  if (const std::string problem = channels_first_problem(spec); !problem.empty())
    throw std::invalid_argument(problem);
  ConvLowering l;
  ConvConstants &k = l.conv;
  k.pass = c.pass;
  k.three_d = spec.kind == OpKind::conv3d;
  k.d = c.d;
  k.h = c.h;
  k.w = c.w;
  k.c = c.c;
  k.k = c.k;
  k.t = c.t;
  k.r = c.r;
  k.s = c.s;
  k.groups = c.groups;
  k.cg = c.c / c.groups;
  k.kg = c.k / c.groups;
  k.pad = c.pad;
  k.stride = c.stride;
  k.dilation = c.dilation;
  if (!k.three_d) { // the depth entries are unused for conv2d (op_spec.h)
    k.pad[0] = 0;
    k.stride[0] = 1;
    k.dilation[0] = 1;
    k.d = k.t = 1;
  }
  const ConvOutputDims out = conv_output_dims(c);
  k.o = k.three_d ? out.o : 1;
  k.p = out.p;
  k.q = out.q;

  const ImplicitGemm ig = implicit_gemm(spec);
  const ConvRoles roles = conv_roles(c.pass);
  OpSpec &v = l.view;
  if (is_depthwise_path(spec)) {
    // M = output pixels, N = channels, K = taps; A and B element by element.
    l.depthwise = true;
    l.a = c.pass == ConvPass::fprop ? Gather::im2col : Gather::strided;
    v.kind = OpKind::gemm;
    v.acc = spec.acc;
    v.math = spec.math;
    v.epilogue = spec.epilogue;
    v.gemm.m = ig.m;
    v.gemm.n = Dim::fixed_size(c.pass == ConvPass::fprop ? k.k : k.c);
    v.gemm.k = Dim::fixed_size(k.taps());
    v.gemm.batch = Dim::fixed_size(1);
    v.gemm.a.dtype = tensor_of(c, roles.a).dtype;
    v.gemm.b.dtype = tensor_of(c, roles.b).dtype;
    v.gemm.c.dtype = tensor_of(c, roles.c).dtype;
    v.gemm.a.layout = MatrixLayout::row;
    v.gemm.b.layout = MatrixLayout::col; // filter[channel][tap]
    v.gemm.b.ld = k.taps();
    v.gemm.c.layout = MatrixLayout::row;
    v.gemm.c.ld = v.gemm.n.value;
    l.max_vec_a = l.max_vec_b = l.max_vec_c = 1;
    return l;
  }
  v.kind = OpKind::gemm;
  v.acc = spec.acc;
  v.math = spec.math;
  v.epilogue = spec.epilogue;
  v.gemm.m = ig.m;
  v.gemm.n = ig.n;
  v.gemm.k = ig.k;
  v.gemm.batch = Dim::fixed_size(k.groups);
  v.gemm.a.dtype = tensor_of(c, roles.a).dtype;
  v.gemm.b.dtype = tensor_of(c, roles.b).dtype;
  v.gemm.c.dtype = tensor_of(c, roles.c).dtype;
  const int64_t taps = k.taps();
  switch (c.pass) {
  case ConvPass::fprop:
    l.a = Gather::im2col;
    v.gemm.a.layout = MatrixLayout::row;
    v.gemm.b.layout = MatrixLayout::col; // filter: n = k rows of taps*Cg contiguous elements
    v.gemm.b.ld = taps * k.cg;
    v.gemm.c.ld = k.k;
    break;
  case ConvPass::dgrad:
    l.a = Gather::strided;
    l.b = Gather::tap_rows;
    if (takes_dgrad_phases(k)) { // stride > 1: a dense implicit GEMM per phase
      l.a = Gather::strided_phases;
      l.b = Gather::tap_rows_phases;
    }
    v.gemm.a.layout = MatrixLayout::row;
    v.gemm.b.layout = MatrixLayout::row;
    v.gemm.c.ld = k.c;
    break;
  case ConvPass::wgrad:
    l.b = Gather::im2col;
    v.gemm.a.layout = MatrixLayout::col; // dy^T: m = k, contiguous in NPQK
    v.gemm.a.ld = k.k;
    v.gemm.b.layout = MatrixLayout::row;
    v.gemm.c.ld = taps * k.cg;
    break;
  }
  v.gemm.c.layout = MatrixLayout::row;
  l.max_vec_a = alignment_of(spec, tensor_name(roles.a));
  l.max_vec_b = alignment_of(spec, tensor_name(roles.b));
  l.max_vec_c = alignment_of(spec, tensor_name(roles.c));
  return l;
}

} // namespace

std::string coordinate_range_problem(const OpSpec &spec) {
  const ConvSpec &c = spec.conv;
  const ConvOutputDims out = conv_output_dims(c);
  const bool three_d = spec.kind == OpKind::conv3d;
  struct Dimension {
    const char *name;
    int64_t in, filter, out;
    int index;
  };
  const Dimension dims[] = {
      {"d", c.d, c.t, out.o, 0}, {"h", c.h, c.r, out.p, 1}, {"w", c.w, c.s, out.q, 2}};
  for (const Dimension &d : dims) {
    if (d.index == 0 && !three_d)
      continue;
    const int64_t bound =
        d.in + c.pad[d.index] + d.out * c.stride[d.index] + d.filter * c.dilation[d.index];
    if (bound > std::numeric_limits<int32_t>::max())
      return std::string("the coordinates along ") + d.name + " (input + pad + output * stride + " +
             "filter * dilation = " + std::to_string(bound) +
             ") exceed the kernels' 32-bit range (2147483647): make the size, pad, stride or "
             "dilation smaller";
  }
  return "";
}

std::optional<int64_t> channel_padding_target(const OpSpec &spec) {
  if (spec.kind == OpKind::gemm || spec.conv.pass != ConvPass::fprop || spec.conv.groups != 1 ||
      !channels_first_problem(spec).empty())
    return std::nullopt;
  const int widest = max_vector_elements(spec.conv.x.dtype);
  if (spec.conv.x.dtype != spec.conv.filter.dtype || spec.conv.c % widest == 0)
    return std::nullopt;
  return (spec.conv.c + widest - 1) / widest * widest;
}

OpSpec padded_conv(const OpSpec &spec, int64_t channels) {
  OpSpec padded = spec;
  padded.conv.c = channels;
  return padded;
}

bool is_depthwise_path(const OpSpec &spec) {
  return takes_depthwise_kernel(spec);
}

OpSpec gemm_view(const OpSpec &spec) {
  return spec.kind == OpKind::gemm ? spec : lower_conv(spec).view;
}

ViewVectorLimits view_vector_limits(const OpSpec &spec) {
  ViewVectorLimits v;
  if (spec.kind != OpKind::gemm) {
    const ConvLowering l = lower_conv(spec);
    return {l.max_vec_a, l.max_vec_b, l.max_vec_c};
  }
  for (const OperandAlignment &a : analyze_alignment(spec)) {
    if (a.operand == "a")
      v.a = a.elements;
    else if (a.operand == "b")
      v.b = a.elements;
    else if (a.operand == "c")
      v.c = a.elements;
  }
  return v;
}

GemmGeometry launch_geometry(const OpSpec &spec) {
  if (spec.kind == OpKind::gemm)
    return gemm_geometry(spec);
  if (!spec.conv.n.is_fixed())
    throw std::invalid_argument("launch_geometry: the batch n is symbolic; bind it first");
  const ConvLowering l = lower_conv(spec);
  const ConvConstants &k = l.conv;
  const ImplicitGemm ig = implicit_gemm(spec);
  GemmGeometry g;
  g.batch = k.groups;
  g.m = checked_i32(ig.m.value, "M");
  g.n = checked_i32(ig.n.value, "N");
  g.k = checked_i32(ig.k.value, "K");
  auto matrix = [](DType t, int64_t rows, int64_t cols, bool row_major, int64_t ld,
                   int64_t batch_stride) {
    MatrixGeometry m;
    m.dtype = t;
    m.rows = rows;
    m.cols = cols;
    m.row_major = row_major;
    m.ld = ld;
    m.row_stride = row_major ? ld : 1;
    m.col_stride = row_major ? 1 : ld;
    m.batch_stride = batch_stride;
    return m;
  };
  const GemmSpec &v = l.view.gemm;
  const int64_t taps = k.taps();
  if (l.depthwise) {
    g.batch = 1;
    g.n = v.n.value;
    g.k = taps;
    g.a = matrix(v.a.dtype, g.m, g.k, true, k.c, 0);
    g.b = matrix(v.b.dtype, g.k, g.n, false, taps, 0);
    g.c = matrix(v.c.dtype, g.m, g.n, true, g.n, 0);
    return g;
  }
  switch (k.pass) {
  case ConvPass::fprop:
    g.a = matrix(v.a.dtype, g.m, g.k, true, k.c, k.cg);
    g.b = matrix(v.b.dtype, g.k, g.n, false, taps * k.cg, k.kg * taps * k.cg);
    g.c = matrix(v.c.dtype, g.m, g.n, true, k.k, k.kg);
    break;
  case ConvPass::dgrad:
    if (l.a == Gather::strided_phases) { // dgrad_phases.h: the phase grid, all phases in grid z
      const PhaseTotals t = phase_totals(k);
      g.m = checked_i32(spec.conv.n.value * t.rows_per_image, "M");
      g.k = checked_i32(t.max_taps * k.kg, "K");
      g.batch = k.groups * t.phases;
    }
    g.a = matrix(v.a.dtype, g.m, g.k, true, k.k, k.kg);
    g.b = matrix(v.b.dtype, g.k, g.n, true, k.cg, k.kg * taps * k.cg);
    g.c = matrix(v.c.dtype, g.m, g.n, true, k.c, k.cg);
    break;
  case ConvPass::wgrad:
    g.a = matrix(v.a.dtype, g.m, g.k, false, k.k, k.kg);
    g.b = matrix(v.b.dtype, g.k, g.n, true, k.c, k.cg);
    g.c = matrix(v.c.dtype, g.m, g.n, true, taps * k.cg, k.kg * taps * k.cg);
    break;
  }
  return g;
}

} // namespace tcjit::codegen
