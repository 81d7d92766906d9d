#include "tuner/verify_gemm.h"

#include "compiler/reference/gemm_geometry.h"
#include "compiler/reference/gemm_reference.h"
#include "compiler/reference/random_fill.h"
#include "runtime/emu/emu_device.h"
#include "tuner/device_buffer.h"
#include "tuner/gemm_launch.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <vector>

namespace tcjit::tuner {

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

std::vector<std::byte> random_bytes(DType t, int64_t count, uint64_t seed) {
  std::vector<std::byte> v(static_cast<size_t>((count * dtype_bits(t) + 7) / 8));
  fill_random(t, v.data(), count, seed);
  return v;
}

} // namespace

GemmCheck run_and_check_gemm(device::Device &dev, const codegen::CompiledKernel &kernel,
                             const OpSpec &spec, uint64_t seed, std::span<const uint8_t> cubin) {
  GemmCheck check;
  const GemmGeometry geo = gemm_geometry(spec);
  const std::vector<std::byte> a = random_bytes(geo.a.dtype, geo.batch * geo.a.batch_stride, seed);
  const std::vector<std::byte> b =
      random_bytes(geo.b.dtype, geo.batch * geo.b.batch_stride, seed + 1);
  const std::vector<std::byte> c =
      random_bytes(geo.c.dtype, geo.batch * geo.c.batch_stride, seed + 2);
  const int64_t bias_count = spec.epilogue.bias == BiasKind::row ? geo.m : geo.n;
  const std::vector<std::byte> bias = random_bytes(geo.c.dtype, bias_count, seed + 3);
  const bool has_bias = spec.epilogue.bias != BiasKind::none;

  const auto t_ref = Clock::now();
  std::vector<std::byte> c_ref = c;
  const ReferenceResult ref = reference_gemm(
      spec, {a.data(), b.data(), c_ref.data(), has_bias ? bias.data() : nullptr}, kernel.plan.math);
  check.reference_ms = ms_since(t_ref);

  const auto t_dev = Clock::now();
  DeviceBuffer da(dev, a), db(dev, b), dc(dev, c), dbias(dev, bias);
  const LoadedGemm gemm = load_gemm(dev, kernel, cubin);
  const auto *emu_dev = dynamic_cast<const emu::EmuDevice *>(&dev);
  launch_gemm(dev, gemm, spec, {da.ptr(), db.ptr(), dc.ptr(), dc.ptr(), has_bias ? dbias.ptr() : 0},
              [&] {
                if (emu_dev)
                  check.counters = emu_dev->last_counters(); // the main kernel's
              });
  std::vector<std::byte> out(c.size());
  dev.copy_to_host(out.data(), dc.ptr(), out.size());
  dev.unload_module(gemm.module);
  check.device_ms = ms_since(t_dev);

  check.report = compare_with_reference(spec, kernel.plan.math, out.data(), ref);
  return check;
}

} // namespace tcjit::tuner
