// CUTLASS anchor for bench/run and tests/cutlass: the SM80 (SM89 for fp8) tensor-op GEMM
// (cutlass::gemm::device::Gemm) with the same CTA tile, warp tile, stages and alignment as the
// tcjit config under test. A row-major, B column-major, C/D row-major, alpha = 1, beta = 0.
// CUTLASS's headers come from the nvidia-cutlass PyPI package installed by bench/setup (and
// scripts/setup); nothing of CUTLASS is committed here.
//
// Two builds of this one file (bench/compare.py and tests/cutlass/CMakeLists.txt drive both):
//   device: nvcc -arch=sm_80 -ptx|-cubin -DANCHOR_DTYPE_F16 -DBM=128 ... (the kernel below)
//   host:   nvcc -DANCHOR_HOST ... (a program that prints the kernel's launch shape and the bytes
//           of its Params for given M, N, K and device addresses, so tcjit's PTX emulator can
//           launch the very PTX nvcc produced)
// Types: F16, BF16, TF32, S8 (s32 out), S4 (cutlass::int4b_t, s32 out, .satfinite as CUTLASS's
// default), B1 (cutlass::uint1b_t, s32 out, AND-popc), E4M3 (cutlass::float_e4m3_t, f32 out;
// Sm89, built with -arch=sm_89). Epilogue: LinearCombination, or LinearCombinationGELU with
// -DANCHOR_EPILOGUE_GELU.
#include <cutlass/gemm/device/gemm.h>
#if defined(ANCHOR_EPILOGUE_GELU)
#include <cutlass/epilogue/thread/linear_combination_gelu.h>
#endif

#if defined(ANCHOR_DTYPE_F16)
using ElementIn = cutlass::half_t;
using ElementOut = cutlass::half_t;
using ElementAcc = float;
using Instruction = cutlass::gemm::GemmShape<16, 8, 16>;
#elif defined(ANCHOR_DTYPE_BF16)
using ElementIn = cutlass::bfloat16_t;
using ElementOut = cutlass::bfloat16_t;
using ElementAcc = float;
using Instruction = cutlass::gemm::GemmShape<16, 8, 16>;
#elif defined(ANCHOR_DTYPE_TF32)
using ElementIn = float; // f32 inputs, TF32 tensor-core math (CUTLASS's default for float)
using ElementOut = float;
using ElementAcc = float;
using Instruction = cutlass::gemm::GemmShape<16, 8, 8>;
#elif defined(ANCHOR_DTYPE_S8)
using ElementIn = int8_t;
using ElementOut = int32_t;
using ElementAcc = int32_t;
using Instruction = cutlass::gemm::GemmShape<16, 8, 32>;
#elif defined(ANCHOR_DTYPE_S4)
using ElementIn = cutlass::int4b_t;
using ElementOut = int32_t;
using ElementAcc = int32_t;
using Instruction = cutlass::gemm::GemmShape<16, 8, 64>;
#elif defined(ANCHOR_DTYPE_B1)
using ElementIn = cutlass::uint1b_t;
using ElementOut = int32_t;
using ElementAcc = int32_t;
using Instruction = cutlass::gemm::GemmShape<16, 8, 256>;
#define ANCHOR_OPERATOR cutlass::arch::OpMultiplyAdd // b1: mma ... .and.popc
#elif defined(ANCHOR_DTYPE_E4M3)
using ElementIn = cutlass::float_e4m3_t;
using ElementOut = float;
using ElementAcc = float;
using Instruction = cutlass::gemm::GemmShape<16, 8, 32>;
#else
#error "define one of ANCHOR_DTYPE_F16, _BF16, _TF32, _S8, _S4, _B1, _E4M3"
#endif

#if defined(ANCHOR_SM89) || defined(ANCHOR_DTYPE_E4M3) // fp8: the SM89 path (nvcc -arch=sm_89)
using ArchTag = cutlass::arch::Sm89;
#else
using ArchTag = cutlass::arch::Sm80;
#endif
#if !defined(ANCHOR_OPERATOR) // CUTLASS's default for the types (s8/s4: saturating)
#define ANCHOR_OPERATOR                                                                            \
  cutlass::gemm::device::DefaultGemmConfiguration<cutlass::arch::OpClassTensorOp, ArchTag,         \
                                                  ElementIn, ElementIn, ElementOut,                \
                                                  ElementAcc>::Operator
#endif

#if !defined(BM) || !defined(BN) || !defined(BK) || !defined(WM) || !defined(WN) ||               \
    !defined(STAGES) || !defined(ALIGN_A) || !defined(ALIGN_B)
#error "define BM BN BK WM WN STAGES ALIGN_A ALIGN_B"
#endif

constexpr int kAlignC = 128 / cutlass::sizeof_bits<ElementOut>::value;
#if defined(ANCHOR_EPILOGUE_GELU) // -DANCHOR_EPILOGUE_GELU: D = gelu(alpha * acc + beta * C)
using Epilogue =
    cutlass::epilogue::thread::LinearCombinationGELU<ElementOut, kAlignC, ElementAcc, ElementAcc>;
#else
using Epilogue =
    cutlass::epilogue::thread::LinearCombination<ElementOut, kAlignC, ElementAcc, ElementAcc>;
#endif

using AnchorGemm = cutlass::gemm::device::Gemm<
    ElementIn, cutlass::layout::RowMajor, ElementIn, cutlass::layout::ColumnMajor, ElementOut,
    cutlass::layout::RowMajor, ElementAcc, cutlass::arch::OpClassTensorOp, ArchTag,
    cutlass::gemm::GemmShape<BM, BN, BK>, cutlass::gemm::GemmShape<WM, WN, BK>, Instruction,
    Epilogue, cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<1>, STAGES, ALIGN_A,
    ALIGN_B, false, ANCHOR_OPERATOR>;
using Kernel = AnchorGemm::GemmKernel;

#if !defined(ANCHOR_HOST)

// What cutlass::Kernel<Kernel> does, under a plain C name the benchmark can launch.
extern "C" __global__ void __launch_bounds__(Kernel::kThreadCount)
    cutlass_anchor_gemm(Kernel::Params params) {
  extern __shared__ int shared_storage[];
  Kernel op;
  op(params, *reinterpret_cast<Kernel::SharedStorage *>(shared_storage));
}

#else

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

// Usage: cutlass_params M N K A B C D   (device addresses in hex or decimal)
// Prints one JSON object: grid, block, dynamic shared bytes and the Params bytes in hex. Exits 3
// when CUTLASS cannot run the problem (can_implement: alignment of M, N, K).
int main(int argc, char **argv) {
  if (argc != 8) {
    std::fprintf(stderr, "usage: %s M N K A B C D\n", argv[0]);
    return 2;
  }
  const int m = std::atoi(argv[1]), n = std::atoi(argv[2]), k = std::atoi(argv[3]);
  auto address = [](const char *s) { return std::strtoull(s, nullptr, 0); };
  auto *a = reinterpret_cast<ElementIn *>(address(argv[4]));
  auto *b = reinterpret_cast<ElementIn *>(address(argv[5]));
  auto *c = reinterpret_cast<ElementOut *>(address(argv[6]));
  auto *d = reinterpret_cast<ElementOut *>(address(argv[7]));

  const cutlass::gemm::GemmCoord problem(m, n, k);
  const AnchorGemm::Arguments args(problem, {a, k}, {b, k}, {c, n}, {d, n},
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
  new (bytes) Kernel::Params(problem, tiled, {a, k}, {b, k}, {c, n}, {d, n},
                             typename Epilogue::Params(ElementAcc(1), ElementAcc(0)));
  std::printf("{\"grid\": [%u, %u, %u], \"block\": [%d, 1, 1], \"shared\": %zu, \"params\": \"",
              grid.x, grid.y, grid.z, Kernel::kThreadCount, sizeof(Kernel::SharedStorage));
  for (unsigned char byte : bytes)
    std::printf("%02x", byte);
  std::printf("\"}\n");
  return 0;
}

#endif
