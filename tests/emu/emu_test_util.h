// Helpers of the emulator tests: run small PTX kernels, compile CUDA C++ with nvcc / NVRTC.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/device/device.h"
#include "runtime/emu/emu_device.h"

namespace tcjit::emu::test {

// ".version 8.0 / .target sm_80 / .address_size 64" followed by `body`.
std::string ptx_module(const std::string &body, const std::string &target = "sm_80");

// Runs `snippet` once per input row on one thread each (32 threads per block). Each thread sees:
//   %a %b %c (.b64)   = in[row][0..2]          %ra %rb %rc (.b32) = low 32 bits
//   %fa %fb %fc (.f32) = low 32 bits as f32    %da %db %dc (.f64) = the 64 bits as f64
//   %ha %hb %hc (.b16) = low 16 bits           %p %q (.pred) = (in[row][0..1] & 1)
// and writes its result into one of %d (.b64), %rd (.b32), %fd (.f32), %dd (.f64), %hd (.b16),
// %pd (.pred), chosen by `result` ("b64" "b32" "f32" "f64" "b16" "pred"). Returns the results.
// `target`: the module's .target (add/sub/mul.bf16 need sm_90, as with ptxas).
std::vector<uint64_t> run_lanes(const std::string &snippet, const std::string &result,
                                const std::vector<std::array<uint64_t, 3>> &in,
                                const std::string &target = "sm_80");

uint64_t f32_bits(float f);
float bits_f32(uint64_t b);
uint64_t f64_bits(double d);
double bits_f64(uint64_t b);

// A device buffer holding `values`.
template <typename T> device::DevicePtr upload(device::Device &dev, const std::vector<T> &values) {
  device::DevicePtr p = dev.allocate(values.size() * sizeof(T));
  dev.copy_to_device(p, values.data(), values.size() * sizeof(T));
  return p;
}
template <typename T>
std::vector<T> download(device::Device &dev, device::DevicePtr p, size_t count) {
  std::vector<T> v(count);
  dev.copy_to_host(v.data(), p, count * sizeof(T));
  return v;
}

// Launches `kernel` of `ptx` with parameters given as raw 8-byte (pointer/u64) or 4-byte values.
struct Arg {
  std::vector<std::byte> bytes;
  template <typename T> static Arg of(T v) {
    Arg a;
    a.bytes.resize(sizeof(T));
    std::memcpy(a.bytes.data(), &v, sizeof(T));
    return a;
  }
};
void launch(EmuDevice &dev, const std::string &ptx, const std::string &kernel, device::Dim3 grid,
            device::Dim3 block, const std::vector<Arg> &args, uint32_t dynamic_shared = 0,
            const std::string &source_name = "test.ptx");

// The loader's error for `ptx` ("kernel.ptx"): a ModuleLoad DeviceError's text (any other kind
// fails the test), or "" when the module loads.
std::string load_error(const std::string &ptx);

// CUDA C++ -> PTX with `nvcc -ptx -arch=<arch>`; fails the test on compile errors.
std::string nvcc_ptx(const std::string &cuda_source, const std::string &arch,
                     const std::string &extra_flags = "");

} // namespace tcjit::emu::test
