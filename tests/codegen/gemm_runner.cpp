#include "gemm_runner.h"

#include "compiler/codegen/kernel_abi.h"
#include "compiler/dsl/parser.h"
#include "compiler/reference/gemm_geometry.h"
#include "compiler/reference/gemm_reference.h"
#include "compiler/reference/random_fill.h"
#include "runtime/device/device.h"
#include "runtime/emu/emu_device.h"

#include <cstring>
#include <vector>

namespace tcjit::codegen::test {

namespace {

std::vector<std::byte> random_bytes(DType t, int64_t count, uint64_t seed) {
  std::vector<std::byte> v(static_cast<size_t>(count * dtype_bits(t) / 8));
  fill_random(t, v.data(), count, seed);
  return v;
}

device::DevicePtr upload(device::Device &dev, const std::vector<std::byte> &v) {
  device::DevicePtr p = dev.allocate(std::max<size_t>(v.size(), 16));
  if (!v.empty())
    dev.copy_to_device(p, v.data(), v.size());
  return p;
}

} // namespace

EmuRun run_on_emulator(const std::string &spec_text, const std::string &config, uint64_t seed) {
  EmuRun run;
  ParseResult parsed = parse_spec(spec_text);
  if (!parsed.ok()) {
    run.error = "bad spec: " + parsed.errors[0].render();
    return run;
  }
  const OpSpec spec = parsed.entries[0].spec;
  CompileOptions opt;
  if (!config.empty()) {
    TileConfig c;
    std::string err;
    if (!parse_tile_config(config, c, err)) {
      run.error = err;
      return run;
    }
    opt.config = c;
  }
  run.kernel = compile_gemm(spec, opt);
  if (!run.kernel.ok()) {
    run.error = "compile: " + run.kernel.errors[0].field + ": " + run.kernel.errors[0].message;
    return run;
  }
  const KernelPlan &plan = run.kernel.plan;
  const GemmGeometry geo = gemm_geometry(spec);
  const int64_t size_a = geo.batch * geo.a.batch_stride, size_b = geo.batch * geo.b.batch_stride,
                size_c = geo.batch * geo.c.batch_stride;
  std::vector<std::byte> a = random_bytes(geo.a.dtype, size_a, seed);
  std::vector<std::byte> b = random_bytes(geo.b.dtype, size_b, seed + 1);
  std::vector<std::byte> c = random_bytes(geo.c.dtype, size_c, seed + 2);
  const int64_t bias_count = spec.epilogue.bias == BiasKind::row ? geo.m : geo.n;
  std::vector<std::byte> bias = random_bytes(geo.c.dtype, bias_count, seed + 3);

  GemmBuffers buffers;
  std::vector<std::byte> c_ref = c;
  buffers.a = a.data();
  buffers.b = b.data();
  buffers.c = c_ref.data();
  buffers.bias = spec.epilogue.bias == BiasKind::none ? nullptr : bias.data();
  const ReferenceResult ref = reference_gemm(spec, buffers, plan.math);

  try {
    emu::EmuDevice dev;
    device::DevicePtr da = upload(dev, a), db = upload(dev, b), dc = upload(dev, c),
                      dbias = upload(dev, bias);
    device::ModuleHandle mod = dev.load_module(run.kernel.ptx, plan.kernel_name + ".ptx");
    device::FunctionHandle fn = dev.get_function(mod, plan.kernel_name);
    device::ParamBuffer params(dev.kernel_info(fn));
    params.set(static_cast<size_t>(GemmParam::a), da);
    params.set(static_cast<size_t>(GemmParam::b), db);
    params.set(static_cast<size_t>(GemmParam::c), dc);
    params.set(static_cast<size_t>(GemmParam::d), dc);
    params.set(static_cast<size_t>(GemmParam::bias), dbias);
    params.set(static_cast<size_t>(GemmParam::m), static_cast<int32_t>(geo.m));
    params.set(static_cast<size_t>(GemmParam::n), static_cast<int32_t>(geo.n));
    params.set(static_cast<size_t>(GemmParam::k), static_cast<int32_t>(geo.k));
    params.set(static_cast<size_t>(GemmParam::lda), geo.a.ld);
    params.set(static_cast<size_t>(GemmParam::ldb), geo.b.ld);
    params.set(static_cast<size_t>(GemmParam::ldc), geo.c.ld);
    params.set(static_cast<size_t>(GemmParam::batch_stride_a), geo.a.batch_stride);
    params.set(static_cast<size_t>(GemmParam::batch_stride_b), geo.b.batch_stride);
    params.set(static_cast<size_t>(GemmParam::batch_stride_c), geo.c.batch_stride);
    if (plan.epi == DType::f64) {
      params.set(static_cast<size_t>(GemmParam::alpha), spec.epilogue.alpha);
      params.set(static_cast<size_t>(GemmParam::beta), spec.epilogue.beta);
    } else {
      params.set(static_cast<size_t>(GemmParam::alpha), static_cast<float>(spec.epilogue.alpha));
      params.set(static_cast<size_t>(GemmParam::beta), static_cast<float>(spec.epilogue.beta));
    }
    const int split = plan.config.split_k;
    const LaunchDims dims = gemm_launch_dims(geo.m, geo.n, geo.batch, plan.config.bm,
                                             plan.config.bn, plan.threads, plan.smem_bytes, split);
    device::LaunchConfig lc;
    lc.grid = {dims.grid_x, dims.grid_y, dims.grid_z};
    lc.block = {dims.block_x, 1, 1};
    lc.dynamic_shared_bytes = dims.dynamic_shared_bytes;
    if (split == 1) {
      dev.launch(fn, lc, params.bytes());
      run.counters = dev.last_counters();
    } else {
      // pass 1 into the workspace (poisoned with 0xff bytes: every slot must be written), pass 2
      const uint64_t ws_bytes =
          splitk_workspace_bytes(geo.m, geo.n, geo.batch, split, dtype_bits(plan.mma.acc) / 8);
      device::DevicePtr ws = dev.allocate(ws_bytes);
      dev.memset(ws, 0xff, ws_bytes);
      device::ParamBuffer p1(dev.kernel_info(fn));
      p1 = params;
      p1.set(static_cast<size_t>(GemmParam::d), ws);
      dev.launch(fn, lc, p1.bytes());
      run.counters = dev.last_counters();
      device::FunctionHandle reduce = dev.get_function(mod, plan.kernel_name + "_splitk_reduce");
      device::ParamBuffer p2(dev.kernel_info(reduce));
      const auto src = params.bytes();
      for (int i = 0; i < kGemmParamCount; ++i) {
        const device::ParamInfo &pi = dev.kernel_info(fn).params[static_cast<size_t>(i)];
        p2.set_bytes(static_cast<size_t>(i), src.data() + pi.offset, pi.size);
      }
      p2.set(static_cast<size_t>(kSplitKWorkspaceParam), ws);
      const LaunchDims rd = splitk_reduce_launch_dims(geo.m, geo.n, geo.batch);
      device::LaunchConfig rl;
      rl.grid = {rd.grid_x, rd.grid_y, 1};
      rl.block = {rd.block_x, 1, 1};
      dev.launch(reduce, rl, p2.bytes());
    }
    dev.synchronize();
    std::vector<std::byte> out(c.size());
    dev.copy_to_host(out.data(), dc, out.size());
    run.report = compare_with_reference(spec, plan.math, out.data(), ref);
  } catch (const std::exception &e) {
    run.error = std::string("emulator: ") + e.what();
  }
  return run;
}

} // namespace tcjit::codegen::test
