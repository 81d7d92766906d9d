// Compiled with `nvcc -ptx` at build time: PTX as nvcc writes it, for the parameter parser.
struct alignas(16) Tile {
  float values[6];
};
struct Packed {
  char bytes[3];
};

extern "C" __global__ void mixed_params(float alpha, const float *__restrict__ x, double beta,
                                        char flag, short count, Tile tile, Packed packed,
                                        unsigned long long n, float *out) {
  if (threadIdx.x == 0) {
    out[0] = alpha * x[0] + static_cast<float>(beta) + flag + count + tile.values[5] +
             packed.bytes[2] + static_cast<float>(n);
  }
}

extern "C" __global__ void no_params() {}

__device__ float helper(float v) { return v * 2; }

extern "C" __global__ void calls_helper(float *out) { out[threadIdx.x] = helper(out[threadIdx.x]); }
