// CUTLASS anchor for bench/run: the SM80 tensor-op GEMM (cutlass::gemm::device::Gemm) with the
// same CTA tile, warp tile, stages and alignment as the tcjit config under test. A row-major,
// B column-major, C/D row-major, alpha = 1, beta = 0. CUTLASS's headers come from the
// nvidia-cutlass PyPI package installed by bench/setup; nothing of CUTLASS is committed here.
//
// Two builds of this one file (bench/compare.py drives both):
//   device: nvcc -arch=sm_80 -ptx|-cubin -DANCHOR_DTYPE_F16 -DBM=128 ... (the kernel below;
//           -arch=sm_89 for ANCHOR_DTYPE_E4M3, which tests/bench/cutlass_fp8_emu_test.py runs)
//   host:   nvcc -DANCHOR_HOST ... (a program that prints the kernel's launch shape and the bytes
//           of its Params for given M, N, K and device addresses, so tcjit's PTX emulator can
//           launch the very PTX nvcc produced)
#include <cutlass/gemm/device/gemm.h>

// fp8 e4m3 x e4m3 -> f32 on the SM89 tensor-op path (nvcc -arch=sm_89)
#if defined(ANCHOR_DTYPE_E4M3)
using ElementIn = cutlass::float_e4m3_t;
using ElementOut = float;
using ElementAcc = float;
using Instruction = cutlass::gemm::GemmShape<16, 8, 32>;
#define ANCHOR_ARCH cutlass::arch::Sm89
#elif defined(ANCHOR_DTYPE_F16)
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
#else
#error "define one of ANCHOR_DTYPE_F16, _BF16, _TF32, _S8, _E4M3 (ANCHOR_DTYPE_<type>)"
#endif
#ifndef ANCHOR_ARCH
#define ANCHOR_ARCH cutlass::arch::Sm80
#endif

#if !defined(BM) || !defined(BN) || !defined(BK) || !defined(WM) || !defined(WN) ||               \
    !defined(STAGES) || !defined(ALIGN_A) || !defined(ALIGN_B)
#error "define BM BN BK WM WN STAGES ALIGN_A ALIGN_B"
#endif

constexpr int kAlignC = 128 / cutlass::sizeof_bits<ElementOut>::value;
using Epilogue =
    cutlass::epilogue::thread::LinearCombination<ElementOut, kAlignC, ElementAcc, ElementAcc>;

using AnchorGemm = cutlass::gemm::device::Gemm<
    ElementIn, cutlass::layout::RowMajor, ElementIn, cutlass::layout::ColumnMajor, ElementOut,
    cutlass::layout::RowMajor, ElementAcc, cutlass::arch::OpClassTensorOp, ANCHOR_ARCH,
    cutlass::gemm::GemmShape<BM, BN, BK>, cutlass::gemm::GemmShape<WM, WN, BK>, Instruction,
    Epilogue, cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<1>, STAGES, ALIGN_A,
    ALIGN_B>;
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

// Usage: cutlass_params M N K A B C D   (device addresses in hex or decimal)
// Prints one JSON object: grid, block, dynamic shared bytes and the Params bytes in hex.
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
  cutlass::gemm::threadblock::GemmIdentityThreadblockSwizzle<1> swizzle;
  const cutlass::gemm::GemmCoord tiled = swizzle.get_tiled_shape(
      problem, {AnchorGemm::ThreadblockShape::kM, AnchorGemm::ThreadblockShape::kN,
                AnchorGemm::ThreadblockShape::kK},
      1);
  const dim3 grid = swizzle.get_grid_shape(tiled);
  Kernel::Params params(problem, tiled, {a, k}, {b, k}, {c, n}, {d, n},
                        typename Epilogue::Params(ElementAcc(1), ElementAcc(0)));

  unsigned char bytes[sizeof(params)];
  std::memcpy(bytes, &params, sizeof(params));
  std::printf("{\"grid\": [%u, %u, %u], \"block\": [%d, 1, 1], \"shared\": %zu, \"params\": \"",
              grid.x, grid.y, grid.z, Kernel::kThreadCount, sizeof(Kernel::SharedStorage));
  for (unsigned char byte : bytes)
    std::printf("%02x", byte);
  std::printf("\"}\n");
  return 0;
}

#endif
