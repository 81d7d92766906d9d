// Kernels written in CUDA C++ and compiled at test time with nvcc -ptx (several archs) and with
// NVRTC, run on the emulator and compared with CPU computations.
#include <gtest/gtest.h>

#include <nvrtc.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <random>
#include <unistd.h>

#include "runtime/emu/float_format.h"
#include "tests/emu/emu_test_util.h"

namespace tcjit::emu::test {
namespace {

std::string nvrtc_ptx(const std::string &source, const std::string &arch) {
  nvrtcProgram prog;
  EXPECT_EQ(nvrtcCreateProgram(&prog, source.c_str(), "k.cu", 0, nullptr, nullptr), NVRTC_SUCCESS);
  std::string opt = "--gpu-architecture=" + arch;
  const char *opts[] = {opt.c_str()};
  nvrtcResult rc = nvrtcCompileProgram(prog, 1, opts);
  if (rc != NVRTC_SUCCESS) {
    size_t n = 0;
    nvrtcGetProgramLogSize(prog, &n);
    std::string log(n, '\0');
    nvrtcGetProgramLog(prog, log.data());
    ADD_FAILURE() << "NVRTC: " << log;
    nvrtcDestroyProgram(&prog);
    return "";
  }
  size_t n = 0;
  nvrtcGetPTXSize(prog, &n);
  std::string ptx(n, '\0');
  nvrtcGetPTX(prog, ptx.data());
  nvrtcDestroyProgram(&prog);
  while (!ptx.empty() && ptx.back() == '\0')
    ptx.pop_back();
  return ptx;
}

const char *kVectorOps = R"(
extern "C" __global__ void vector_ops(int n, const float *x, const float *y, float *out, int *flags) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a = x[i], b = y[i];
  float r;
  if (a > b) {
    r = a * 2.0f - b;
    for (int k = 0; k < (i % 7); ++k) r = r * 0.5f + 1.0f;
  } else if (a < 0.0f) {
    r = sqrtf(-a) + b;
  } else {
    r = fmaf(a, b, 3.0f);
  }
  out[i] = r;
  flags[i] = __float2int_rn(r * 4.0f) ^ (i & 3);
}
)";

void check_vector_ops(const std::string &ptx, const std::string &label) {
  ASSERT_FALSE(ptx.empty());
  EmuDevice dev;
  const int n = 1000;
  std::vector<float> x(n), y(n);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  for (int i = 0; i < n; ++i) {
    x[i] = dist(rng);
    y[i] = dist(rng);
  }
  auto dx = upload(dev, x), dy = upload(dev, y);
  auto dout = dev.allocate(n * 4), dflags = dev.allocate(n * 4);
  launch(dev, ptx, "vector_ops", {(n + 127) / 128, 1, 1}, {128, 1, 1},
         {Arg::of(n), Arg::of(dx), Arg::of(dy), Arg::of(dout), Arg::of(dflags)}, 0, label);
  auto out = download<float>(dev, dout, n);
  auto flags = download<int>(dev, dflags, n);
  for (int i = 0; i < n; ++i) {
    float a = x[i], b = y[i], r;
    if (a > b) {
      r = a * 2.0f - b;
      for (int k = 0; k < (i % 7); ++k)
        r = r * 0.5f + 1.0f;
    } else if (a < 0.0f) {
      r = std::sqrt(-a) + b;
    } else {
      r = std::fma(a, b, 3.0f);
    }
    ASSERT_EQ(out[i], r) << label << " i=" << i;
    ASSERT_EQ(flags[i], static_cast<int>(std::nearbyint(r * 4.0f)) ^ (i & 3)) << label << " " << i;
  }
}

TEST(EmuCuda, VectorOpsWithDivergenceNvccAllArchs) {
  for (const char *arch : {"sm_80", "sm_86", "sm_89", "sm_90"})
    check_vector_ops(nvcc_ptx(kVectorOps, arch), std::string("vector_ops_") + arch + ".ptx");
}

TEST(EmuCuda, VectorOpsNvrtc) {
  check_vector_ops(nvrtc_ptx(kVectorOps, "sm_80"), "nvrtc.ptx");
}

const char *kReduce = R"(
extern "C" __global__ void reduce(const int *in, int n, unsigned long long *total, int *block_max,
                                  float *fsum) {
  __shared__ int warp_sums[32];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? in[i] : 0;
  int m = v;
  for (int off = 16; off > 0; off >>= 1) {
    v += __shfl_down_sync(0xffffffffu, v, off);
    m = max(m, __shfl_xor_sync(0xffffffffu, m, off));
  }
  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    int s = lane < (blockDim.x >> 5) ? warp_sums[lane] : 0;
    for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
    if (lane == 0) atomicAdd(total, (unsigned long long)s);
  }
  if (lane == 0) atomicMax(&block_max[blockIdx.x % 4], m);
  unsigned ballot = __ballot_sync(0xffffffffu, i < n && (in[i] & 1));
  if (lane == 0) atomicAdd(fsum, (float)__popc(ballot));
}
)";

void check_reduce(const std::string &ptx, const std::string &label) {
  ASSERT_FALSE(ptx.empty());
  EmuDevice dev;
  const int n = 5000;
  std::vector<int> in(n);
  std::mt19937 rng(3);
  for (int &v : in)
    v = static_cast<int>(rng() % 2001) - 1000;
  auto din = upload(dev, in);
  auto dtotal = upload(dev, std::vector<unsigned long long>{0});
  auto dmax = upload(dev, std::vector<int>(4, INT32_MIN));
  auto dfsum = upload(dev, std::vector<float>{0.0f});
  const int blocks = (n + 255) / 256;
  launch(dev, ptx, "reduce", {static_cast<uint32_t>(blocks), 1, 1}, {256, 1, 1},
         {Arg::of(din), Arg::of(n), Arg::of(dtotal), Arg::of(dmax), Arg::of(dfsum)}, 0, label);
  long long sum = 0;
  int odd = 0;
  std::vector<int> mx(4, INT32_MIN);
  for (int i = 0; i < n; ++i) {
    sum += in[i];
    odd += in[i] & 1;
    mx[(i / 256) % 4] = std::max(mx[(i / 256) % 4], in[i]);
  }
  EXPECT_EQ(static_cast<long long>(download<unsigned long long>(dev, dtotal, 1)[0]), sum) << label;
  EXPECT_EQ(download<int>(dev, dmax, 4), mx) << label;
  EXPECT_EQ(download<float>(dev, dfsum, 1)[0], static_cast<float>(odd)) << label;
}

TEST(EmuCuda, ReductionWithShufflesAndAtomics) {
  check_reduce(nvcc_ptx(kReduce, "sm_80"), "reduce_nvcc_sm80.ptx");
  check_reduce(nvcc_ptx(kReduce, "sm_90"), "reduce_nvcc_sm90.ptx");
  check_reduce(nvrtc_ptx(kReduce, "sm_86"), "reduce_nvrtc_sm86.ptx");
}

const char *kSgemm = R"(
#define T 16
extern "C" __global__ void sgemm(int M, int N, int K, const float *A, const float *B, float *C) {
  __shared__ float As[T][T + 1];
  __shared__ float Bs[T][T];
  int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += T) {
    int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
    As[threadIdx.y][threadIdx.x] = (row < M && ka < K) ? A[row * K + ka] : 0.0f;
    Bs[threadIdx.y][threadIdx.x] = (kb < K && col < N) ? B[kb * N + col] : 0.0f;
    __syncthreads();
    #pragma unroll 4
    for (int k = 0; k < T; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < M && col < N) C[row * N + col] = acc;
}
)";

TEST(EmuCuda, TiledSgemmWithTails) {
  for (const char *arch : {"sm_80", "sm_89"}) {
    std::string ptx = nvcc_ptx(kSgemm, arch);
    ASSERT_FALSE(ptx.empty());
    EmuDevice dev;
    const int M = 37, N = 29, K = 45;
    std::vector<float> A(M * K), B(K * N);
    for (int i = 0; i < M * K; ++i)
      A[i] = static_cast<float>((i * 7) % 13 - 6) / 4.0f;
    for (int i = 0; i < K * N; ++i)
      B[i] = static_cast<float>((i * 5) % 11 - 5) / 8.0f;
    auto dA = upload(dev, A), dB = upload(dev, B);
    auto dC = dev.allocate(M * N * 4);
    launch(dev, ptx, "sgemm", {(N + 15) / 16, (M + 15) / 16, 1}, {16, 16, 1},
           {Arg::of(M), Arg::of(N), Arg::of(K), Arg::of(dA), Arg::of(dB), Arg::of(dC)});
    auto C = download<float>(dev, dC, M * N);
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        float acc = 0; // exact: all values are small multiples of 1/32
        for (int k = 0; k < K; ++k)
          acc += A[m * K + k] * B[k * N + n];
        ASSERT_EQ(C[m * N + n], acc) << arch << " " << m << "," << n;
      }
  }
}

// One warp per 16x16 tile of C = A (MxK, row-major f16) * B (given as Bt: NxK row-major f16),
// f32 accumulation: cp.async tiles into shared memory, ldmatrix.x4, two mma.m16n8k16 per k-step.
const char *kMmaGemm = R"(
#include <cuda_fp16.h>
extern "C" __global__ void mma_gemm(int M, int N, int K, const __half *A, const __half *Bt, float *C) {
  __shared__ __align__(16) __half As[16 * 16];
  __shared__ __align__(16) __half Bs[16 * 16];
  const int lane = threadIdx.x;
  const int m0 = blockIdx.y * 16, n0 = blockIdx.x * 16;
  float acc[2][4] = {};
  for (int k0 = 0; k0 < K; k0 += 16) {
    // each lane copies one 16-byte chunk (8 halves) of A and of Bt
    int r = lane >> 1, c = (lane & 1) * 8;
    unsigned sa = (unsigned)__cvta_generic_to_shared(&As[r * 16 + c]);
    unsigned sb = (unsigned)__cvta_generic_to_shared(&Bs[r * 16 + c]);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(sa), "l"(A + (m0 + r) * K + k0 + c));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 16;\n" :: "r"(sb), "l"(Bt + (n0 + r) * K + k0 + c));
    asm volatile("cp.async.commit_group;\n" ::);
    asm volatile("cp.async.wait_group 0;\n" ::);
    __syncwarp();
    int j = lane >> 3, rr = lane & 7;
    unsigned a_addr = (unsigned)__cvta_generic_to_shared(&As[(rr + 8 * (j & 1)) * 16 + 8 * (j >> 1)]);
    unsigned b_addr = (unsigned)__cvta_generic_to_shared(&Bs[(rr + 8 * (j >> 1)) * 16 + 8 * (j & 1)]);
    unsigned a0, a1, a2, a3, b0, b1, b2, b3;
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(a0), "=r"(a1), "=r"(a2), "=r"(a3) : "r"(a_addr));
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
                 : "=r"(b0), "=r"(b1), "=r"(b2), "=r"(b3) : "r"(b_addr));
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(acc[0][0]), "+f"(acc[0][1]), "+f"(acc[0][2]), "+f"(acc[0][3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
                 : "+f"(acc[1][0]), "+f"(acc[1][1]), "+f"(acc[1][2]), "+f"(acc[1][3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b2), "r"(b3));
    __syncwarp();
  }
  int g = lane >> 2, q = lane & 3;
  for (int t = 0; t < 2; ++t)
    for (int i = 0; i < 4; ++i) {
      int row = m0 + g + (i >= 2 ? 8 : 0), col = n0 + t * 8 + 2 * q + (i & 1);
      C[row * N + col] = acc[t][i];
    }
}
)";

TEST(EmuCuda, MmaLdmatrixCpAsyncGemm) {
  for (const char *arch : {"sm_80", "sm_90"}) {
    std::string ptx = nvcc_ptx(kMmaGemm, arch);
    ASSERT_FALSE(ptx.empty());
    EmuDevice dev;
    const int M = 32, N = 48, K = 64;
    std::vector<float> A(M * K), Bt(N * K);
    std::vector<uint16_t> Ah(M * K), Bh(N * K);
    for (int i = 0; i < M * K; ++i) {
      A[i] = static_cast<float>((i * 7) % 17 - 8) / 8.0f;
      Ah[i] = f32_to_f16_bits(A[i]);
    }
    for (int i = 0; i < N * K; ++i) {
      Bt[i] = static_cast<float>((i * 3) % 13 - 6) / 4.0f;
      Bh[i] = f32_to_f16_bits(Bt[i]);
    }
    auto dA = upload(dev, Ah), dB = upload(dev, Bh);
    auto dC = dev.allocate(M * N * 4);
    launch(dev, ptx, "mma_gemm", {N / 16, M / 16, 1}, {32, 1, 1},
           {Arg::of(M), Arg::of(N), Arg::of(K), Arg::of(dA), Arg::of(dB), Arg::of(dC)});
    auto C = download<float>(dev, dC, M * N);
    for (int m = 0; m < M; ++m)
      for (int n = 0; n < N; ++n) {
        float acc = 0;
        for (int k = 0; k < K; ++k)
          acc += A[m * K + k] * Bt[n * K + k];
        ASSERT_EQ(C[m * N + n], acc) << arch << " " << m << "," << n;
      }
    EXPECT_EQ(dev.last_counters().mma_instructions, uint64_t{(M / 16) * (N / 16) * (K / 16) * 2});
    EXPECT_EQ(dev.last_counters().mma_flops, uint64_t{2} * M * N * K);
  }
}

const char *kCalls = R"(
__device__ __noinline__ float poly(float x, int k) {
  float r = 1.0f;
  for (int i = 0; i < k; ++i) r = r * x + 1.0f;
  return r;
}
__device__ __noinline__ void store2(float *p, float a, float b) { p[0] = a; p[1] = b; }
extern "C" __global__ void calls(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) store2(y + 2 * i, poly(x[i], i % 5), (float)i);
}
)";

TEST(EmuCuda, NoinlineDeviceFunctionCalls) {
  for (const char *arch : {"sm_80", "sm_90"}) {
    std::string ptx = nvcc_ptx(kCalls, arch);
    ASSERT_NE(ptx.find("call.uni"), std::string::npos);
    EmuDevice dev;
    const int n = 70;
    std::vector<float> x(n);
    for (int i = 0; i < n; ++i)
      x[i] = 0.25f * static_cast<float>(i % 9) - 1.0f;
    auto dx = upload(dev, x);
    auto dy = dev.allocate(2 * n * 4);
    launch(dev, ptx, "calls", {2, 1, 1}, {64, 1, 1}, {Arg::of(dx), Arg::of(dy), Arg::of(n)});
    auto y = download<float>(dev, dy, 2 * n);
    for (int i = 0; i < n; ++i) {
      float r = 1.0f;
      for (int k = 0; k < i % 5; ++k)
        r = std::fma(r, x[i], 1.0f);
      EXPECT_EQ(y[2 * i], r) << arch << " " << i;
      EXPECT_EQ(y[2 * i + 1], static_cast<float>(i));
    }
  }
}

// PTX from LLVM 19's NVPTX backend (the compiler's code path): multi-line mma operands,
// add.rn.f32, $L__ labels.
const char *kLlvmIr = R"(
target datalayout = "e-i64:64-i128:128-v16:16-v32:32-n16:32:64"
target triple = "nvptx64-nvidia-cuda"
declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare { float, float, float, float } @llvm.nvvm.mma.m16n8k16.row.col.f32.f32(<2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, <2 x half>, float, float, float, float)
define void @k(ptr addrspace(1) %out, ptr addrspace(1) %in, i32 %n) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %i64 = zext i32 %tid to i64
  %pa = getelementptr <2 x half>, ptr addrspace(1) %in, i64 %i64
  %a = load <2 x half>, ptr addrspace(1) %pa, align 4
  %r = call { float, float, float, float } @llvm.nvvm.mma.m16n8k16.row.col.f32.f32(<2 x half> %a, <2 x half> %a, <2 x half> %a, <2 x half> %a, <2 x half> %a, <2 x half> %a, float 0.0, float 0.0, float 0.0, float 0.0)
  %d0 = extractvalue { float, float, float, float } %r, 0
  br label %loop
loop:
  %k = phi i32 [ 0, %entry ], [ %k1, %loop ]
  %acc = phi float [ %d0, %entry ], [ %acc1, %loop ]
  %kf = sitofp i32 %k to float
  %acc1 = fadd float %acc, %kf
  %k1 = add i32 %k, 1
  %c = icmp slt i32 %k1, %n
  br i1 %c, label %loop, label %done
done:
  %po = getelementptr float, ptr addrspace(1) %out, i64 %i64
  store float %acc1, ptr addrspace(1) %po, align 4
  ret void
}
!nvvm.annotations = !{!0}
!0 = !{ptr @k, !"kernel", i32 1}
)";

TEST(EmuCuda, Llvm19NvptxOutput) {
  const std::string llc = TCJIT_LLC;
  if (llc.empty() || llc.find("NOTFOUND") != std::string::npos)
    GTEST_SKIP() << "llc-19 not found";
  auto dir =
      std::filesystem::temp_directory_path() / ("tcjit_emu_llc_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "k.ll") << kLlvmIr;
  std::string cmd = llc + " -march=nvptx64 -mcpu=sm_80 -mattr=+ptx80 " + (dir / "k.ll").string() +
                    " -o " + (dir / "k.ptx").string();
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  std::stringstream ss;
  ss << std::ifstream(dir / "k.ptx").rdbuf();
  std::filesystem::remove_all(dir);
  EmuDevice dev;
  std::vector<uint32_t> in(32, 0x3C003C00u); // (1.0, 1.0) halves: D = 16 everywhere
  auto din = upload(dev, in);
  auto dout = dev.allocate(32 * 4);
  const int n = 10;
  launch(dev, ss.str(), "k", {1, 1, 1}, {32, 1, 1}, {Arg::of(dout), Arg::of(din), Arg::of(n)}, 0,
         "llvm19.ptx");
  for (float v : download<float>(dev, dout, 32))
    EXPECT_EQ(v, 16.0f + n * (n - 1) / 2);
}

} // namespace
} // namespace tcjit::emu::test
