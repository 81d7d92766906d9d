#include "engine/verify_kernel.h"

#include "compiler/codegen/plan/conv_lowering.h"
#include "compiler/reference/conv_geometry.h"
#include "compiler/reference/conv_reference.h"
#include "compiler/reference/custom_activation.h"
#include "compiler/reference/gemm_geometry.h"
#include "compiler/reference/gemm_reference.h"
#include "compiler/reference/random_fill.h"
#include "compiler/reference/sparse_2_4.h"
#include "compiler/spec/printer.h"
#include "engine/custom_activation.h"
#include "engine/device_buffer.h"
#include "engine/kernel_launch.h"
#include "runtime/emu/emu_device.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <vector>

namespace tcjit::engine {

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

// The spec the CPU reference computes: act=custom is left to apply_custom_reference; a 2:4-sparse
// A is given to it as the pruned dense matrix (sparse_a_inputs).
OpSpec reference_spec(const OpSpec &spec) {
  OpSpec r = spec;
  if (r.sparsity != Sparsity::dense) {
    r.sparsity = Sparsity::dense;
    r.gemm.a.ld.reset();
  }
  if (r.epilogue.act == Activation::custom) {
    r.epilogue.act = Activation::none;
    r.epilogue.custom = {};
  }
  return r;
}

// act=custom: the user's function applied to the reference's pre-activation values on `dev`.
void apply_custom_reference(device::Device &dev, const codegen::CompiledKernel &kernel,
                            const OpSpec &spec, ReferenceResult &ref) {
  if (spec.epilogue.act != Activation::custom)
    return;
  apply_custom_activation(
      ref, tolerance_model(spec, kernel.plan.math), [&](std::span<const double> xs) {
        return evaluate_custom_activation(dev, spec.epilogue.custom, kernel.plan.epi, xs);
      });
}

// The reference `compute` returns, or the cached one of the same spec, seed and math mode.
const ReferenceResult &cached_reference(ReferenceCache *cache,
                                        const codegen::CompiledKernel &kernel, const OpSpec &spec,
                                        uint64_t seed, KernelCheck &check, ReferenceResult &own,
                                        const std::function<ReferenceResult()> &compute) {
  const auto t_ref = Clock::now();
  const bool cacheable = cache && spec.epilogue.act != Activation::custom;
  const std::string key = cacheable
                              ? print_spec(spec) + " seed=" + std::to_string(seed) +
                                    " math=" + std::to_string(static_cast<int>(kernel.plan.math))
                              : std::string();
  if (cacheable && cache->result && cache->key == key) {
    check.reference_reused = true;
    check.reference_ms = ms_since(t_ref);
    return *cache->result;
  }
  own = compute();
  check.reference_ms = ms_since(t_ref);
  if (!cacheable)
    return own;
  cache->key = key;
  cache->result = std::make_shared<const ReferenceResult>(std::move(own));
  return *cache->result;
}

} // namespace

namespace {

// A convolution through its implicit GEMM: random x, filter and y (the written tensor also is C),
// reference_conv, the kernel on the device with the tensors in their view roles.
KernelCheck run_and_check_conv(device::Device &dev, const codegen::CompiledKernel &kernel,
                               const OpSpec &spec, uint64_t seed, std::span<const uint8_t> cubin,
                               ReferenceCache *cache) {
  KernelCheck check;
  const ConvGeometry geo = conv_geometry(spec);
  std::vector<std::byte> x = random_bytes(geo.x_dtype, x_element_count(geo), seed);
  std::vector<std::byte> w = random_bytes(geo.filter_dtype, filter_element_count(geo), seed + 1);
  std::vector<std::byte> y = random_bytes(geo.y_dtype, y_element_count(geo), seed + 2);
  const codegen::ConvRoles roles = codegen::conv_roles(geo.pass);
  const DType out_dtype = roles.c == codegen::ConvTensor::x        ? geo.x_dtype
                          : roles.c == codegen::ConvTensor::filter ? geo.filter_dtype
                                                                   : geo.y_dtype;
  const int64_t out_channels = geo.pass == ConvPass::dgrad ? geo.c : geo.k;
  const std::vector<std::byte> bias = random_bytes(out_dtype, out_channels, seed + 3);
  const bool has_bias = spec.epilogue.bias != BiasKind::none;

  ReferenceResult own;
  const ReferenceResult &ref = cached_reference(cache, kernel, spec, seed, check, own, [&] {
    // The reference writes the output tensor of its buffers: give it copies.
    std::vector<std::byte> rx = x, rw = w, ry = y;
    ReferenceResult r = reference_conv(
        reference_spec(spec), {rx.data(), rw.data(), ry.data(), has_bias ? bias.data() : nullptr},
        kernel.plan.math);
    apply_custom_reference(dev, kernel, spec, r);
    return r;
  });

  const auto t_dev = Clock::now();
  DeviceBuffer dx(dev, x), dw(dev, w), dy(dev, y), dbias(dev, bias);
  auto ptr = [&](codegen::ConvTensor t) {
    return t == codegen::ConvTensor::x        ? dx.ptr()
           : t == codegen::ConvTensor::filter ? dw.ptr()
                                              : dy.ptr();
  };
  const LoadedKernel loaded = load_kernel(dev, kernel, cubin);
  const auto *emu_dev = dynamic_cast<const emu::EmuDevice *>(&dev);
  launch_kernel(
      dev, loaded, spec,
      {ptr(roles.a), ptr(roles.b), ptr(roles.c), ptr(roles.c), has_bias ? dbias.ptr() : 0}, [&] {
        if (emu_dev)
          check.counters = emu_dev->last_counters();
      });
  const std::vector<std::byte> &host_out = roles.c == codegen::ConvTensor::x        ? x
                                           : roles.c == codegen::ConvTensor::filter ? w
                                                                                    : y;
  // written whole by the download (not zeroed first: fresh pages are dear, and this is timed)
  const auto out = std::make_unique_for_overwrite<std::byte[]>(host_out.size());
  dev.copy_to_host(out.get(), ptr(roles.c), host_out.size());
  dev.unload_module(loaded.module);
  check.device_ms = ms_since(t_dev);
  check.report = compare_with_reference(spec, kernel.plan.math, out.get(), ref);
  return check;
}

} // namespace

// A 2:4-sparse A's inputs: random dense matrices, pruned (the 2 largest magnitudes of every 4
// along K) for the reference (dense, row stride k), and compressed into the kernel's layout
// (sparse_2_4.h), batch by batch.
struct SparseInputs {
  std::vector<std::byte> pruned, compressed;
};
SparseInputs sparse_a_inputs(const GemmGeometry &geo, uint64_t seed) {
  const DType t = geo.a.dtype;
  const int bits = dtype_bits(t); // s4/u4: 4, two values per byte (m * k and the strides even)
  const int64_t dense_bytes = geo.m * geo.k * bits / 8, block = geo.a.batch_stride * bits / 8;
  SparseInputs in;
  in.pruned = random_bytes(t, geo.batch * geo.m * geo.k, seed);
  in.compressed.resize(static_cast<size_t>(geo.batch * block));
  const Sparse24Layout layout = compressed_a_layout(t, geo.m, geo.k, geo.a.ld);
  for (int64_t b = 0; b < geo.batch; ++b) {
    std::byte *matrix = in.pruned.data() + b * dense_bytes;
    sparse_prune(t, matrix, geo.m, geo.k, geo.k);
    sparse_compress(t, matrix, geo.m, geo.k, geo.k, layout, in.compressed.data() + b * block);
  }
  return in;
}

KernelCheck run_and_check_kernel(device::Device &dev, const codegen::CompiledKernel &kernel,
                                 const OpSpec &spec, uint64_t seed, std::span<const uint8_t> cubin,
                                 ReferenceCache *cache) {
  if (spec.kind != OpKind::gemm)
    return run_and_check_conv(dev, kernel, spec, seed, cubin, cache);
  KernelCheck check;
  const GemmGeometry geo = gemm_geometry(spec);
  const bool sparse = spec.sparsity != Sparsity::dense;
  const SparseInputs sparse_a = sparse ? sparse_a_inputs(geo, seed) : SparseInputs{};
  const std::vector<std::byte> a =
      sparse ? sparse_a.compressed
             : random_bytes(geo.a.dtype, geo.batch * geo.a.batch_stride, seed);
  const std::vector<std::byte> b =
      random_bytes(geo.b.dtype, geo.batch * geo.b.batch_stride, seed + 1);
  const std::vector<std::byte> c =
      random_bytes(geo.c.dtype, geo.batch * geo.c.batch_stride, seed + 2);
  const int64_t bias_count = spec.epilogue.bias == BiasKind::row ? geo.m : geo.n;
  const std::vector<std::byte> bias = random_bytes(geo.c.dtype, bias_count, seed + 3);
  const bool has_bias = spec.epilogue.bias != BiasKind::none;

  ReferenceResult own;
  const ReferenceResult &ref = cached_reference(cache, kernel, spec, seed, check, own, [&] {
    std::vector<std::byte> c_ref = c;
    ReferenceResult r = reference_gemm(reference_spec(spec),
                                       {sparse ? sparse_a.pruned.data() : a.data(), b.data(),
                                        c_ref.data(), has_bias ? bias.data() : nullptr},
                                       kernel.plan.math);
    apply_custom_reference(dev, kernel, spec, r);
    return r;
  });

  const auto t_dev = Clock::now();
  DeviceBuffer da(dev, a), db(dev, b), dc(dev, c), dbias(dev, bias);
  const LoadedKernel loaded = load_kernel(dev, kernel, cubin);
  const auto *emu_dev = dynamic_cast<const emu::EmuDevice *>(&dev);
  launch_kernel(dev, loaded, spec,
                {da.ptr(), db.ptr(), dc.ptr(), dc.ptr(), has_bias ? dbias.ptr() : 0}, [&] {
                  if (emu_dev)
                    check.counters = emu_dev->last_counters(); // the main kernel's
                });
  const auto out = std::make_unique_for_overwrite<std::byte[]>(c.size()); // as in the conv path
  dev.copy_to_host(out.get(), dc.ptr(), c.size());
  dev.unload_module(loaded.module);
  check.device_ms = ms_since(t_dev);

  check.report = compare_with_reference(spec, kernel.plan.math, out.get(), ref);
  return check;
}

} // namespace tcjit::engine
