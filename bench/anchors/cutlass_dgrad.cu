// CUTLASS strided-dgrad anchor for bench/dgrad_compare.py: the SM80 tensor-op implicit-GEMM conv2d
// dgrad of cutlass::conv::kernel::DefaultConv2dDgrad with StrideSupport::kStrided (CUTLASS's
// strided-dgrad decomposition, kernel ImplicitGemmConvolutionStridedDgrad, launched through
// StridedDgradIdentityThreadblockSwizzle), with the CTA tile, warp tile, stages and alignment of
// the tcjit config under test. f16 NHWC dy, f16 KRSC filter, f16 NHWC dx, f32 accumulate (mma
// 16x8x16), LinearCombination epilogue in f32. CUTLASS's headers come from the nvidia-cutlass
// PyPI package installed by bench/setup; nothing of CUTLASS is committed here.
//
// Macros: BM BN BK (threadblock tile), WM WN (warp tile), STAGES, ALIGN_A ALIGN_B (elements per
// global access of dy / the filter), ITERATOR (a cutlass::conv::IteratorAlgorithm enumerator,
// default kOptimized). Device build only: nvcc -cubin -arch=sm_80 ... (C name
// cutlass_anchor_conv2d_dgrad), for its SASS.
#include <cutlass/conv/conv2d_problem_size.h>
#include <cutlass/conv/kernel/default_conv2d_dgrad.h>
#include <cutlass/conv/threadblock/threadblock_swizzle.h>
#include <cutlass/epilogue/thread/linear_combination.h>

#if !defined(BM) || !defined(BN) || !defined(BK) || !defined(WM) || !defined(WN) ||                \
    !defined(STAGES) || !defined(ALIGN_A) || !defined(ALIGN_B)
#error "define BM BN BK WM WN STAGES ALIGN_A ALIGN_B"
#endif
#if !defined(ITERATOR)
#define ITERATOR kOptimized
#endif

using ElementIn = cutlass::half_t;
using ElementOut = cutlass::half_t;
using ElementAcc = float;
using Instruction = cutlass::gemm::GemmShape<16, 8, 16>;

constexpr int kAlignC = 128 / cutlass::sizeof_bits<ElementOut>::value;
using Epilogue =
    cutlass::epilogue::thread::LinearCombination<ElementOut, kAlignC, ElementAcc, ElementAcc>;
using Swizzle = cutlass::conv::threadblock::StridedDgradIdentityThreadblockSwizzle<1>;

using Kernel = typename cutlass::conv::kernel::DefaultConv2dDgrad<
    ElementIn, cutlass::layout::TensorNHWC, ElementIn, cutlass::layout::TensorNHWC, ElementOut,
    cutlass::layout::TensorNHWC, ElementAcc, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<BM, BN, BK>, cutlass::gemm::GemmShape<WM, WN, BK>, Instruction,
    Epilogue, Swizzle, STAGES, cutlass::arch::OpMultiplyAdd,
    cutlass::conv::IteratorAlgorithm::ITERATOR, cutlass::conv::StrideSupport::kStrided, ALIGN_A,
    ALIGN_B>::Kernel;

// What cutlass::Kernel<Kernel> does, under a plain C name the benchmark can find in the cubin.
extern "C" __global__ void __launch_bounds__(Kernel::kThreadCount)
    cutlass_anchor_conv2d_dgrad(Kernel::Params params) {
  extern __shared__ int shared_storage[];
  Kernel op;
  op(params, *reinterpret_cast<Kernel::SharedStorage *>(shared_storage));
}
