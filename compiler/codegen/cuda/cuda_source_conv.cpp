#include "compiler/codegen/cuda/cuda_source_conv.h"

#include "compiler/codegen/cuda/expr_source.h"
#include "compiler/codegen/plan/incremental_gather.h"
#include "compiler/codegen/plan/kernel_abi.h"

#include <stdexcept>

namespace tcjit::codegen::cuda_detail {

namespace {

const ConvConstants &constants(const KernelPlan &p) {
  if (!p.conv)
    throw std::logic_error("cuda_source: a convolution emitter without conv constants");
  return *p.conv;
}

// The unsigned integer type of an element of `esize` bytes (copies move bit patterns).
const char *bits_type(int esize) {
  return esize == 1 ? "u8" : esize == 2 ? "u16" : esize == 4 ? "u32" : "u64";
}

} // namespace

void emit_conv_constants(std::ostringstream &s, const KernelPlan &p) {
  const ConvConstants &k = constants(p);
  s << "// The convolution's constants (conv_lowering.h, ConvConstants): everything but the batch "
       "n,\n"
    << "// which is a run-time value (it scales M, or K for wgrad: the extents the gathers test).\n"
    << "// " << describe(k) << "\n"
    << "namespace cv {\n"
    << "constexpr u32 D = " << k.d << ", H = " << k.h << ", W = " << k.w << ", C = " << k.c
    << "; // x: n x D x H x W x C\n"
    << "constexpr u32 K = " << k.k << ", T = " << k.t << ", R = " << k.r << ", S = " << k.s
    << "; // filter: K x T x R x S x Cg\n"
    << "constexpr u32 O = " << k.o << ", P = " << k.p << ", Q = " << k.q
    << "; // y: n x O x P x Q x K\n"
    << "constexpr u32 pad_d = " << k.pad[0] << ", pad_h = " << k.pad[1] << ", pad_w = " << k.pad[2]
    << ";\n"
    << "constexpr u32 stride_d = " << k.stride[0] << ", stride_h = " << k.stride[1]
    << ", stride_w = " << k.stride[2] << ";\n"
    << "constexpr u32 dil_d = " << k.dilation[0] << ", dil_h = " << k.dilation[1]
    << ", dil_w = " << k.dilation[2] << ";\n"
    << "constexpr u32 groups = " << k.groups << ", Cg = " << k.cg << ", Kg = " << k.kg
    << ", taps = T * R * S;\n"
    << "} // namespace cv\n";
}

namespace {

void emit_depthwise_helpers(std::ostringstream &s) {
  s << R"(
// The direct depthwise kernel's own coordinate arithmetic, the formulas of
// compiler/codegen/plan/formulas.h (depthwise_point, depthwise_tap) as C++ functions: printed from
// the formulas, its taps took NVRTC 6-15% more SASS instructions per FFMA (measured), so the
// depthwise kernel keeps these. A pixel:
struct Pixel {
  u32 n, z, y, x;
};
// (n, z, y, x) of a pixel index of an n x depth x height x width grid, n last: it is the run-time
// dimension and may be anything.
__device__ __forceinline__ Pixel split_pixel(u32 index, u32 depth, u32 height, u32 width) {
  Pixel p;
  p.x = index % width;
  index /= width;
  p.y = index % height;
  index /= height;
  p.z = index % depth;
  p.n = index / depth;
  return p;
}
// ((((n * depth + z) * height + y) * width + x) * channels + channel), 64-bit.
__device__ __forceinline__ s64 tensor_offset(Pixel at, u32 depth, u32 height, u32 width,
                                             u32 channels, u32 channel) {
  s64 v = at.n;
  v = v * depth + at.z;
  v = v * height + at.y;
  v = v * width + at.x;
  return v * channels + channel;
}
// The input coordinate that output coordinate o reads through tap t: o * stride + t * dilation
// - pad; in the padding it wraps below zero to a huge value, which the caller's unsigned
// `< extent` rejects.
__device__ __forceinline__ u32 im2col_coordinate(u32 o, u32 t, u32 stride, u32 dilation,
                                                 u32 pad) {
  return o * stride + t * dilation - pad;
}
// The output coordinate that reads input coordinate i through tap t: (i + pad - t * dilation)
// / stride, when that divides exactly and is in [0, extent); else `ok` becomes false.
__device__ __forceinline__ u32 strided_coordinate(u32 i, u32 t, u32 pad, u32 dilation,
                                                  u32 stride, u32 extent, bool &ok) {
  const u32 v = i + pad - t * dilation; // below zero: wraps, out of range whatever the stride
  ok = ok && v < extent * stride;
  if (stride == 1)
    return v;
  ok = ok && v % stride == 0;
  return v / stride;
}
)";
}

} // namespace

namespace {

// The position (c, s, r, t) as formula inputs named so, and their C++ (the state's fields).
IncrementalPosition position_inputs(ExprGraph &graph) {
  auto i32 = [&](const char *name) { return input(graph, ExprType::i32, name); };
  return {i32("c"), i32("s"), i32("r"), i32("t")};
}
const ExprSourceInputs kPositionFields = {{"c", "g.c"}, {"s", "g.s"}, {"r", "g.r"}, {"t", "g.t"}};

} // namespace

void emit_incremental_gather_begin(std::ostringstream &s, const KernelPlan &p,
                                   const OperandPlan &op) {
  const std::string x(1, op.name);
  const int vecs_per_row = op.cols / op.vec, rows = op.copies_per_thread;
  ExprGraph row_graph;
  const IncrementalRow row = incremental_row(p, op, input(row_graph, ExprType::i32, "outer"),
                                             input(row_graph, ExprType::i32, "outer_extent"));
  const ExprSource row_src = expr_source(
      {row.mask, row.offset}, {{"outer", "outer"}, {"outer_extent", "u32(outer_extent)"}}, "    ");
  ExprGraph position_graph;
  const IncrementalPosition at =
      incremental_position(p, op, input(position_graph, ExprType::i32, "contig"));
  const ExprSource at_src = expr_source({at.c, at.s, at.r, at.t}, {{"contig", "contig"}}, "  ");
  s << "// operand " << x
    << "'s incremental im2col addressing (plan/incremental_gather.h): per copy row its mask of\n"
    << "// filter positions inside the input and its pointer at tap 0; the K position (c, s, r, "
       "t)\n"
    << "// of the thread's tile column at the next K-tile to copy.\n"
    << "struct " << x << "_gather_t {\n"
    << "  u32 mask[" << rows << "];\n"
    << "  const u8 *row[" << rows << "];\n"
    << "  u32 c, s, r, t;\n"
    << "};\n"
    << "__device__ __forceinline__ void " << x << "_gather_begin(" << x
    << "_gather_t &g, const u8 *base, int outer_extent, int mn0, int kt_begin, int tid) {\n"
    << "  const u32 row0 = u32(mn0) + u32(tid) / " << vecs_per_row << "u;\n"
    << "#pragma unroll\n"
    << "  for (int it = 0; it < " << rows << "; ++it) {\n"
    << "    const u32 outer = row0 + u32(it * " << p.threads / vecs_per_row << ");\n"
    << row_src.statements << "    g.mask[it] = " << row_src.values[0] << ";\n"
    << "    g.row[it] = base + s64(" << row_src.values[1] << ");\n"
    << "  }\n"
    << "  const u32 contig = u32(kt_begin) * " << op.cols << "u + u32(tid) % " << vecs_per_row
    << "u * " << op.vec << "u;\n"
    << at_src.statements << "  g.c = " << at_src.values[0] << ";\n"
    << "  g.s = " << at_src.values[1] << ";\n"
    << "  g.r = " << at_src.values[2] << ";\n"
    << "  g.t = " << at_src.values[3] << ";\n"
    << "}\n";
}

std::string incremental_gather_step(const KernelPlan &p, const OperandPlan &op) {
  ExprGraph graph;
  const IncrementalPosition at = position_inputs(graph);
  const IncrementalStep step = incremental_step(p, op, at);
  const IncrementalPosition next = advance_position(p, op, at);
  const ExprSource src =
      expr_source({step.bits, step.offset, next.c, next.s, next.r, next.t}, kPositionFields, "  ");
  return "  // this K-tile's bits and offset (incremental_gather.h), then the next K-tile's "
         "position\n" +
         src.statements + "  const u32 step_bits = " + src.values[0] + ";\n" +
         "  const u64 step_offset = " + src.values[1] + ";\n" +
         "  const u32 next_c = " + src.values[2] + ", next_s = " + src.values[3] +
         ", next_r = " + src.values[4] + ", next_t = " + src.values[5] + ";\n" +
         "  g.c = next_c;\n  g.s = next_s;\n  g.r = next_r;\n  g.t = next_t;\n";
}

std::string incremental_gather_source(const KernelPlan &, const OperandPlan &) {
  ExprGraph graph;
  const IncrementalRow row{input(graph, ExprType::i32, "mask"), Expr{}};
  const IncrementalStep step{input(graph, ExprType::i32, "bits"), Expr{}};
  const ExprSource src = expr_source({incremental_in(row, step)},
                                     {{"mask", "g.mask[it]"}, {"bits", "step_bits"}}, "    ");
  return src.statements + "    const bool in = " + src.values[0] + ";\n" +
         "    const u8 *src = in ? g.row[it] + step_offset : base;\n";
}

void emit_pad_channels(std::ostringstream &s, const KernelPlan &p) {
  const int64_t to = constants(p).c, from = p.pad_from;
  const std::string T = bits_type(p.a.esize);
  s << "// Channel padding (kernel_abi.h): dst[row][c] = c < " << from << " ? src[row][c] : 0\n"
    << "// for c < " << to << ", one thread per element of dst; x (rows = n*d*h*w) and the filter\n"
    << "// (rows = k*t*r*s) are copied so, then the main kernel reads the copies.\n"
    << "extern \"C\" __global__ void " << p.kernel_name
    << "_pad_channels(const u8 *src, u8 *dst, u64 rows) {\n"
    << "  const u64 idx = (u64)blockIdx.x * " << kPadChannelsThreads << " + threadIdx.x;\n"
    << "  if (idx >= rows * " << to << ") return;\n"
    << "  const u64 row = idx / " << to << ", ch = idx % " << to << ";\n"
    << "  " << T << " v = 0;\n"
    << "  if (ch < " << from << ") v = ((const " << T << " *)src)[row * " << from << " + ch];\n"
    << "  ((" << T << " *)dst)[idx] = v;\n"
    << "}\n";
}

void emit_depthwise_kernel(std::ostringstream &s, const KernelPlan &p) {
  const ConvConstants &k = constants(p);
  const bool fprop = k.pass == ConvPass::fprop;
  const std::string A = acc_type(p), O = storage_type(p.out);
  const std::string in_t = storage_type(p.a.dtype), w_t = storage_type(p.b.dtype);
  const int per_thread = p.config.bm * p.config.bn / p.threads;
  const int out_esize = dtype_bits(p.out) / 8;
  // An input element widened to the accumulator type, tf32-rounded under math=tf32.
  auto to_acc = [&](const std::string &v, DType t) {
    std::string x = t == DType::f16    ? "f16_to_f32(" + v + ")"
                    : t == DType::bf16 ? "bf16_to_f32(" + v + ")"
                                       : v;
    if (p.acc != DType::s32 && p.math == MathMode::tf32 && t == DType::f32)
      x = "round_tf32(" + x + ")";
    return "(" + A + ")" + x;
  };
  // The source tensor (x for fprop, dy for dgrad): the pixel grid of `row` and the one read.
  const char *row_grid = fprop ? "cv::O, cv::P, cv::Q" : "cv::D, cv::H, cv::W";
  const char *src_grid = fprop ? "cv::D, cv::H, cv::W" : "cv::O, cv::P, cv::Q";
  emit_depthwise_helpers(s);
  s << "__device__ __forceinline__ float round_tf32(float x) { // cvt.rna.tf32.f32\n"
    << "  u32 r;\n"
    << "  asm(\"cvt.rna.tf32.f32 %0, %1;\" : \"=r\"(r) : \"f\"(x));\n"
    << "  return __uint_as_float(r);\n"
    << "}\n\n"
    << "// The direct depthwise kernel (conv_lowering.h): thread t of the CTA\n"
    << "// computes outputs t, t + " << p.threads << ", ... of its " << p.config.bm << " x "
    << p.config.bn << " tile (pixel-major, channel fastest), each the sum over\n"
    << "// the taps in (t, r, s) order of " << (fprop ? "x" : "dy")
    << " * filter in the accumulator type, then the GEMM epilogue.\n"
    << signature(p, p.kernel_name, "", p.threads) << " {\n"
    << "  (void)K; (void)lda; (void)ldb; (void)batch_stride_a; (void)batch_stride_b; "
       "(void)batch_stride_c;\n"
    << "  const int tid = threadIdx.x;\n"
    << "  const int m0 = blockIdx.x * " << p.config.bm << ", n0 = blockIdx.y * " << p.config.bn
    << ";\n"
    << "#pragma unroll 1\n" // a loop, not unrolled: the taps already are
    << "  for (int i = 0; i < " << per_thread << "; ++i) {\n"
    << "    const int idx = tid + i * " << p.threads << ";\n"
    << "    const int row = m0 + idx / " << p.config.bn << ", col = n0 + idx % " << p.config.bn
    << ";\n"
    << "    if (row >= M || col >= N) continue;\n"
    << "    // row: the " << (fprop ? "output" : "input") << " pixel; col: the channel\n"
    << "    const Pixel at = split_pixel(u32(row), " << row_grid << ");\n"
    << "    " << A << " acc = 0;\n"
    << "#pragma unroll\n    for (u32 t = 0; t < cv::T; ++t)\n"
    << "#pragma unroll\n      for (u32 r = 0; r < cv::R; ++r)\n"
    << "#pragma unroll\n        for (u32 s = 0; s < cv::S; ++s) {\n"
    << "          bool ok = true;\n"
    << "          Pixel src;\n"
    << "          src.n = at.n;\n";
  if (fprop)
    s << "          src.z = im2col_coordinate(at.z, t, cv::stride_d, cv::dil_d, cv::pad_d);\n"
      << "          src.y = im2col_coordinate(at.y, r, cv::stride_h, cv::dil_h, cv::pad_h);\n"
      << "          src.x = im2col_coordinate(at.x, s, cv::stride_w, cv::dil_w, cv::pad_w);\n"
      << "          ok = src.z < cv::D && src.y < cv::H && src.x < cv::W;\n";
  else
    s << "          src.z = strided_coordinate(at.z, t, cv::pad_d, cv::dil_d, cv::stride_d, cv::O, "
         "ok);\n"
      << "          src.y = strided_coordinate(at.y, r, cv::pad_h, cv::dil_h, cv::stride_h, cv::P, "
         "ok);\n"
      << "          src.x = strided_coordinate(at.x, s, cv::pad_w, cv::dil_w, cv::stride_w, cv::Q, "
         "ok);\n";
  s << "          const s64 off = tensor_offset(src, " << src_grid << ", "
    << (fprop ? "cv::K" : "cv::C") << ", u32(col));\n"
    << "          const " << in_t << " v = ((const " << in_t << " *)A)[ok ? off : 0];\n"
    << "          const " << w_t << " w = ((const " << w_t
    << " *)B)[(s64)col * cv::taps + (t * cv::R + r) * cv::S + s];\n"
    << "          const " << A << " x = " << to_acc("(ok ? v : (" + in_t + ")0)", p.a.dtype)
    << ", y = " << to_acc("w", p.b.dtype) << ";\n";
  if (p.acc == DType::s32)
    s << "          acc += x * y;\n";
  else
    s << "          acc = " << (p.acc == DType::f64 ? "fma" : "fmaf") << "(x, y, acc);\n";
  s << "        }\n"
    << "    const s64 off = ((s64)row * ldc + col) * " << out_esize << ";\n"
    << "    *(" << O << " *)(D + off) = epilogue_value(acc, C, bias, row, col, off, alpha, beta);\n"
    << "  }\n"
    << "}\n";
}

} // namespace tcjit::codegen::cuda_detail
