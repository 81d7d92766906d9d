// CUTLASS 2:4-sparse anchor for tests/cutlass (and bench/run): the SM80 sparse tensor-op GEMM
// (cutlass::gemm::device::SparseGemm, mma.sp) with a given CTA tile, warp tile and stages.
// A row-major, 2:4-sparse along K and passed compressed (M x K/2) with its metadata E; B
// column-major; C/D row-major; alpha = 1, beta = 0. CUTLASS's headers come from the
// nvidia-cutlass PyPI package (scripts/setup, bench/setup); nothing of CUTLASS is committed here.
//
// Two builds of this one file, as bench/anchors/cutlass_gemm.cu:
//   device: nvcc -arch=sm_80 -ptx -DANCHOR_DTYPE_F16 (or _S4) -DBM=64 ... (the kernel below)
//   host:   nvcc -DANCHOR_HOST ... (prints the launch shape, the Params bytes for given M, N, K
//           and device addresses of A (compressed), B, C, D and E, and the metadata's geometry)
//
// The metadata E, as CUTLASS's kernel reads it (the layout CUTLASS's host utility reorder_meta
// produces): logically a row-major M x K/(2*elements_per_element_e) matrix of
// element_bytes-wide words, each holding the 2-bit positions (within their group of four) of
// elements_per_element_e consecutive kept elements of a row of A, lowest bits first; stored in
// CUTLASS's ColumnMajorInterleaved<2> layout after reorder_meta's row interleave. The test
// (tests/cutlass/cutlass_gemm_test.cpp) builds it from the kernel's reported geometry.
#include <cutlass/gemm/device/gemm_sparse.h>

#if defined(ANCHOR_DTYPE_F16)
using ElementIn = cutlass::half_t;
using ElementOut = cutlass::half_t;
using ElementAcc = float;
using Instruction = cutlass::gemm::GemmShape<16, 8, 32>;
#elif defined(ANCHOR_DTYPE_S4)
// cutlass::int4b_t (two per byte, the lower K index in the low nibble), s32 out; CUTLASS's
// integer default is OpMultiplyAddSaturate (mma.sp ... .s4.s4.s32.satfinite, m16n8k128)
using ElementIn = cutlass::int4b_t;
using ElementOut = int32_t;
using ElementAcc = int32_t;
using Instruction = cutlass::gemm::GemmShape<16, 8, 128>;
#else
#error "define ANCHOR_DTYPE_F16 or ANCHOR_DTYPE_S4"
#endif

#if !defined(BM) || !defined(BN) || !defined(BK) || !defined(WM) || !defined(WN) ||               \
    !defined(STAGES)
#error "define BM BN BK WM WN STAGES"
#endif

constexpr int kAlignC = 128 / cutlass::sizeof_bits<ElementOut>::value;
using Epilogue =
    cutlass::epilogue::thread::LinearCombination<ElementOut, kAlignC, ElementAcc, ElementAcc>;

using AnchorGemm = cutlass::gemm::device::SparseGemm<
    ElementIn, cutlass::layout::RowMajor, ElementIn, cutlass::layout::ColumnMajor, ElementOut,
    cutlass::layout::RowMajor, ElementAcc, cutlass::arch::OpClassTensorOp, cutlass::arch::Sm80,
    cutlass::gemm::GemmShape<BM, BN, BK>, cutlass::gemm::GemmShape<WM, WN, BK>, Instruction,
    Epilogue, cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<1>, STAGES>;
using Kernel = AnchorGemm::GemmKernel;

#if !defined(ANCHOR_HOST)

// What cutlass::Kernel<Kernel> does, under a plain C name the test can launch.
extern "C" __global__ void __launch_bounds__(Kernel::kThreadCount)
    cutlass_anchor_sparse_gemm(Kernel::Params params) {
  extern __shared__ int shared_storage[];
  Kernel op;
  op(params, *reinterpret_cast<Kernel::SharedStorage *>(shared_storage));
}

#else

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

// Usage: cutlass_sparse_params M N K A B C D E   (device addresses in hex or decimal)
// Prints one JSON object: grid, block, dynamic shared bytes, the Params bytes in hex and the
// metadata's geometry. Exits 3 when CUTLASS cannot run the problem (can_implement).
int main(int argc, char **argv) {
  if (argc != 9) {
    std::fprintf(stderr, "usage: %s M N K A B C D E\n", argv[0]);
    return 2;
  }
  const int m = std::atoi(argv[1]), n = std::atoi(argv[2]), k = std::atoi(argv[3]);
  auto address = [](const char *s) { return std::strtoull(s, nullptr, 0); };
  auto *a = reinterpret_cast<ElementIn *>(address(argv[4]));
  auto *b = reinterpret_cast<ElementIn *>(address(argv[5]));
  auto *c = reinterpret_cast<ElementOut *>(address(argv[6]));
  auto *d = reinterpret_cast<ElementOut *>(address(argv[7]));
  auto *e = reinterpret_cast<AnchorGemm::ElementE *>(address(argv[8]));

  constexpr int kSparse = AnchorGemm::kSparse;
  constexpr int kPerE = AnchorGemm::kElementsPerElementE;
  const cutlass::gemm::GemmCoord problem(m, n, k);
  const cutlass::TensorRef<ElementIn, cutlass::layout::RowMajor> ref_a(a, k / kSparse);
  const cutlass::TensorRef<ElementIn, cutlass::layout::ColumnMajor> ref_b(b, k);
  const cutlass::TensorRef<ElementOut, cutlass::layout::RowMajor> ref_c(c, n), ref_d(d, n);
  const cutlass::TensorRef<AnchorGemm::ElementE, AnchorGemm::LayoutE> ref_e(
      e, AnchorGemm::LayoutE::packed({m, k / kSparse / kPerE}));
  const AnchorGemm::Arguments args(problem, ref_a, ref_b, ref_c, ref_d, ref_e,
                                   {ElementAcc(1), ElementAcc(0)});
  if (AnchorGemm::can_implement(args) != cutlass::Status::kSuccess) {
    std::fprintf(stderr, "CUTLASS cannot run M=%d N=%d K=%d with this kernel\n", m, n, k);
    return 3;
  }

  cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<1> swizzle;
  const cutlass::gemm::GemmCoord tiled = swizzle.get_tiled_shape(
      problem, {AnchorGemm::ThreadblockShape::kM, AnchorGemm::ThreadblockShape::kN,
                AnchorGemm::ThreadblockShape::kK},
      1);
  const dim3 grid = swizzle.get_grid_shape(tiled);
  // Built in zeroed storage: padding and fields the constructor leaves alone print as zeros, so
  // the same arguments always print the same bytes.
  alignas(Kernel::Params) unsigned char bytes[sizeof(Kernel::Params)] = {};
  new (bytes) Kernel::Params(problem, tiled, ref_a, ref_b, ref_c, ref_d, ref_e,
                             typename Epilogue::Params(ElementAcc(1), ElementAcc(0)));
  std::printf("{\"grid\": [%u, %u, %u], \"block\": [%d, 1, 1], \"shared\": %zu, \"params\": \"",
              grid.x, grid.y, grid.z, Kernel::kThreadCount, sizeof(Kernel::SharedStorage));
  for (unsigned char byte : bytes)
    std::printf("%02x", byte);
  std::printf("\", \"meta\": {\"element_bytes\": %zu, \"elements_per_element_e\": %d, "
              "\"sparse\": %d, \"interleave\": %d}}\n",
              sizeof(AnchorGemm::ElementE), kPerE, kSparse, AnchorGemm::LayoutE::kInterleave);
  return 0;
}

#endif
