// CUTLASS convolution anchor for bench/conv_compare.py and bench/dgrad_compare.py: the SM80
// tensor-op implicit-GEMM conv2d with the same CTA tile, warp tile, stages and alignment as the
// tcjit config under test. f16 NHWC activations, f16 KRSC filter, f16 NHWC output, f32 accumulate
// (mma 16x8x16), LinearCombination epilogue in f32 (alpha = 1, beta = 0).
//   - fprop (default): cutlass::conv::kernel::DefaultConv2dFprop, run by
//     cutlass::conv::device::ImplicitGemmConvolution, identity swizzle; C name
//     cutlass_anchor_conv2d_fprop.
//   - strided dgrad (-DANCHOR_DGRAD): DefaultConv2dDgrad with StrideSupport::kStrided (CUTLASS's
//     strided-dgrad decomposition, kernel ImplicitGemmConvolutionStridedDgrad, launched through
//     StridedDgradIdentityThreadblockSwizzle); C name cutlass_anchor_conv2d_dgrad; device build
//     only, for its SASS.
// CUTLASS's headers come from the nvidia-cutlass PyPI package installed by bench/setup; nothing
// of CUTLASS is committed here.
//
// Unlike tcjit's kernel (every size but n is a constant of the kernel), CUTLASS's conv kernel
// takes the whole problem (n, h, w, c, k, r, s, padding, stride, dilation) at run time: one build
// serves every layer with the same tile, iterator and alignment.
//
// Macros (bench/conv_compare.py and bench/dgrad_compare.py pass them):
//   BM BN BK       threadblock tile (implicit GEMM M = n*p*q, N = k, K = r*s*c for fprop)
//   WM WN          warp tile (its K is BK)
//   STAGES         pipeline stages (2 selects CUTLASS's ImplicitGemmPipelined, >= 3 multistage)
//   ALIGN_A ALIGN_B  elements per global access of the activations (dgrad: dy) / filter
//   ITERATOR       a cutlass::conv::IteratorAlgorithm enumerator: kAnalytic, kOptimized,
//                  kFixedChannels, kFewChannels (default kOptimized)
//   STRIDE_SUPPORT fprop: a cutlass::conv::StrideSupport enumerator, kUnity (default, as CUTLASS's
//                  own kernel generator emits fprop) or kStrided; dgrad is always kStrided
//   ANCHOR_DGRAD   the strided dgrad instead of fprop
//
// Builds of this one file:
//   device: nvcc -cubin -arch=sm_80 -DBM=128 ... (the kernel below)
//   host:   nvcc -DANCHOR_HOST ... (fprop only: a program that, for one problem, prints the
//           kernel's launch shape, its shared memory, CUTLASS's can_implement verdict and the
//           bytes of its Params)
#include <cutlass/conv/conv2d_problem_size.h>
#include <cutlass/epilogue/thread/linear_combination.h>
#if defined(ANCHOR_DGRAD)
#include <cutlass/conv/kernel/default_conv2d_dgrad.h>
#include <cutlass/conv/threadblock/threadblock_swizzle.h>
#else
#include <cutlass/conv/device/implicit_gemm_convolution.h>
#include <cutlass/conv/kernel/default_conv2d_fprop.h>
#include <cutlass/gemm/threadblock/threadblock_swizzle.h>
#endif

#if !defined(BM) || !defined(BN) || !defined(BK) || !defined(WM) || !defined(WN) ||               \
    !defined(STAGES) || !defined(ALIGN_A) || !defined(ALIGN_B)
#error "define BM BN BK WM WN STAGES ALIGN_A ALIGN_B"
#endif
#if !defined(ITERATOR)
#define ITERATOR kOptimized
#endif
#if defined(ANCHOR_DGRAD) && defined(ANCHOR_HOST)
#error "the strided dgrad anchor has a device build only"
#endif
#if defined(ANCHOR_DGRAD) && defined(STRIDE_SUPPORT)
#error "the strided dgrad anchor is always StrideSupport::kStrided"
#endif
#if !defined(STRIDE_SUPPORT)
#define STRIDE_SUPPORT kUnity
#endif

using ElementIn = cutlass::half_t;
using ElementOut = cutlass::half_t;
using ElementAcc = float;
using Instruction = cutlass::gemm::GemmShape<16, 8, 16>;

constexpr int kAlignC = 128 / cutlass::sizeof_bits<ElementOut>::value;
using Epilogue =
    cutlass::epilogue::thread::LinearCombination<ElementOut, kAlignC, ElementAcc, ElementAcc>;

#if defined(ANCHOR_DGRAD)
using Swizzle = cutlass::conv::threadblock::StridedDgradIdentityThreadblockSwizzle<1>;
#define ANCHOR_DEFAULT_CONV cutlass::conv::kernel::DefaultConv2dDgrad
#define ANCHOR_KERNEL_NAME cutlass_anchor_conv2d_dgrad
#define ANCHOR_STRIDE_SUPPORT kStrided
#else
using Swizzle = cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<1>;
#define ANCHOR_DEFAULT_CONV cutlass::conv::kernel::DefaultConv2dFprop
#define ANCHOR_KERNEL_NAME cutlass_anchor_conv2d_fprop
#define ANCHOR_STRIDE_SUPPORT STRIDE_SUPPORT
#endif

using Kernel = typename ANCHOR_DEFAULT_CONV<
    ElementIn, cutlass::layout::TensorNHWC, ElementIn, cutlass::layout::TensorNHWC, ElementOut,
    cutlass::layout::TensorNHWC, ElementAcc, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<BM, BN, BK>, cutlass::gemm::GemmShape<WM, WN, BK>, Instruction,
    Epilogue, Swizzle, STAGES, cutlass::arch::OpMultiplyAdd,
    cutlass::conv::IteratorAlgorithm::ITERATOR,
    cutlass::conv::StrideSupport::ANCHOR_STRIDE_SUPPORT, ALIGN_A, ALIGN_B>::Kernel;

#if !defined(ANCHOR_HOST)

// What cutlass::Kernel<Kernel> does, under a plain C name the benchmark can find in the cubin.
extern "C" __global__ void __launch_bounds__(Kernel::kThreadCount)
    ANCHOR_KERNEL_NAME(Kernel::Params params) {
  extern __shared__ int shared_storage[];
  Kernel op;
  op(params, *reinterpret_cast<Kernel::SharedStorage *>(shared_storage));
}

#else

#include <cstdio>
#include <cstdlib>
#include <cstring>

using AnchorConv = cutlass::conv::device::ImplicitGemmConvolution<Kernel>;

// Usage: cutlass_conv_params N H W C K R S PAD STRIDE [X FILTER Y]   (addresses: hex or decimal)
// Prints one JSON object: grid, block, dynamic shared bytes, CUTLASS's can_implement status and
// the Params bytes in hex.
int main(int argc, char **argv) {
  if (argc != 10 && argc != 13) {
    std::fprintf(stderr, "usage: %s N H W C K R S PAD STRIDE [X FILTER Y]\n", argv[0]);
    return 2;
  }
  int v[9];
  for (int i = 0; i < 9; ++i)
    v[i] = std::atoi(argv[1 + i]);
  const int n = v[0], h = v[1], w = v[2], c = v[3], k = v[4], r = v[5], s = v[6], pad = v[7],
            stride = v[8];
  auto address = [&](int i) { return argc == 13 ? std::strtoull(argv[i], nullptr, 0) : 0ull; };
  auto *x = reinterpret_cast<ElementIn *>(address(10));
  auto *f = reinterpret_cast<ElementIn *>(address(11));
  auto *y = reinterpret_cast<ElementOut *>(address(12));

  const int p = (h + 2 * pad - r) / stride + 1, q = (w + 2 * pad - s) / stride + 1;
  const cutlass::conv::Conv2dProblemSize problem(
      {n, h, w, c}, {k, r, s, c}, {pad, pad, pad, pad}, {stride, stride}, {1, 1}, {n, p, q, k},
      cutlass::conv::Mode::kCrossCorrelation, 1, 1);
  using Layout = cutlass::layout::TensorNHWC;
  typename AnchorConv::Arguments args(
      problem, {x, Layout::packed({n, h, w, c})}, {f, Layout::packed({k, r, s, c})},
      {y, Layout::packed({n, p, q, k})}, {y, Layout::packed({n, p, q, k})},
      typename Epilogue::Params(ElementAcc(1), ElementAcc(0)));
  const cutlass::Status status = AnchorConv::can_implement(args);
  Kernel::Params params(args, nullptr);
  const dim3 grid = Swizzle().get_grid_shape(params.grid_tiled_shape);

  unsigned char bytes[sizeof(params)];
  std::memcpy(bytes, &params, sizeof(params));
  std::printf("{\"grid\": [%u, %u, %u], \"block\": [%d, 1, 1], \"shared\": %zu, "
              "\"gemm_k_iterations\": %d, \"can_implement\": \"%s\", \"params\": \"",
              grid.x, grid.y, grid.z, Kernel::kThreadCount, sizeof(Kernel::SharedStorage),
              params.gemm_k_iterations, cutlass::cutlassGetStatusString(status));
  for (unsigned char byte : bytes)
    std::printf("%02x", byte);
  std::printf("\"}\n");
  return 0;
}

#endif
