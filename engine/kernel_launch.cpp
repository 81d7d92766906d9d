#include "engine/kernel_launch.h"

#include "compiler/codegen/plan/conv_lowering.h"
#include "compiler/codegen/plan/kernel_abi.h"
#include "compiler/reference/gemm_geometry.h"
#include "compiler/spec/shape.h"
#include "engine/device_buffer.h"

#include <string>

namespace tcjit::engine {

namespace {

using codegen::GemmParam;

size_t index(GemmParam p) {
  return static_cast<size_t>(p);
}

device::LaunchConfig to_launch_config(const codegen::LaunchDims &d) {
  device::LaunchConfig lc;
  lc.grid = {d.grid_x, d.grid_y, d.grid_z};
  lc.block = {d.block_x, 1, 1};
  lc.dynamic_shared_bytes = d.dynamic_shared_bytes;
  return lc;
}

// The 16 ABI parameters of the main kernel.
device::ParamBuffer gemm_params(const device::KernelInfo &info, const codegen::KernelPlan &plan,
                                const OpSpec &spec, const OperandPointers &ptrs) {
  const GemmGeometry geo = codegen::launch_geometry(
      plan.pad_from != 0 ? codegen::padded_conv(spec, plan.conv->c) : spec);
  device::ParamBuffer p(info);
  p.set(index(GemmParam::a), ptrs.a);
  p.set(index(GemmParam::b), ptrs.b);
  p.set(index(GemmParam::c), ptrs.c);
  p.set(index(GemmParam::d), ptrs.d);
  p.set(index(GemmParam::bias), ptrs.bias);
  p.set(index(GemmParam::m), static_cast<int32_t>(geo.m));
  p.set(index(GemmParam::n), static_cast<int32_t>(geo.n));
  p.set(index(GemmParam::k), static_cast<int32_t>(geo.k));
  p.set(index(GemmParam::lda), geo.a.ld);
  p.set(index(GemmParam::ldb), geo.b.ld);
  p.set(index(GemmParam::ldc), geo.c.ld);
  p.set(index(GemmParam::batch_stride_a), geo.a.batch_stride);
  p.set(index(GemmParam::batch_stride_b), geo.b.batch_stride);
  p.set(index(GemmParam::batch_stride_c), geo.c.batch_stride);
  if (plan.epi == DType::f64) {
    p.set(index(GemmParam::alpha), spec.epilogue.alpha);
    p.set(index(GemmParam::beta), spec.epilogue.beta);
  } else {
    p.set(index(GemmParam::alpha), static_cast<float>(spec.epilogue.alpha));
    p.set(index(GemmParam::beta), static_cast<float>(spec.epilogue.beta));
  }
  return p;
}

} // namespace

LoadedKernel load_kernel(device::Device &dev, const codegen::CompiledKernel &kernel,
                         std::span<const uint8_t> cubin) {
  LoadedKernel g;
  g.plan = &kernel.plan;
  const std::string name = kernel.plan.kernel_name + ".ptx";
  g.module = cubin.empty() ? dev.load_module(kernel.ptx, name)
                           : dev.load_module_prebuilt(kernel.ptx, name, {cubin, kernel.plan.sm});
  g.main = dev.get_function(g.module, kernel.plan.kernel_name);
  if (kernel.plan.config.split_k > 1)
    g.splitk_reduce = dev.get_function(g.module, kernel.plan.kernel_name + "_splitk_reduce");
  if (kernel.plan.pad_from != 0)
    g.pad_channels = dev.get_function(g.module, kernel.plan.kernel_name + "_pad_channels");
  return g;
}

namespace {

// The view geometry the kernel runs: of the spec, or of its channel-padded copy.
GemmGeometry kernel_geometry(const codegen::KernelPlan &plan, const OpSpec &spec) {
  return codegen::launch_geometry(plan.pad_from != 0 ? codegen::padded_conv(spec, plan.conv->c)
                                                     : spec);
}

uint64_t round_up(uint64_t v) {
  return (v + 255) / 256 * 256;
}

// The workspace's parts: split-K slices first, then the padded x and filter.
struct WorkspaceLayout {
  uint64_t splitk = 0, x = 0, filter = 0;
  uint64_t total() const { return round_up(splitk) + round_up(x) + round_up(filter); }
};

struct PaddedRows {
  int64_t x = 0, filter = 0;
};
PaddedRows padded_rows(const OpSpec &spec) {
  const ConvSpec &c = spec.conv;
  const bool three_d = spec.kind == OpKind::conv3d;
  return {c.n.value * (three_d ? c.d : 1) * c.h * c.w, c.k * (three_d ? c.t : 1) * c.r * c.s};
}

WorkspaceLayout workspace_layout(const codegen::KernelPlan &plan, const OpSpec &spec) {
  WorkspaceLayout w;
  if (plan.config.split_k > 1) {
    const GemmGeometry geo = kernel_geometry(plan, spec);
    w.splitk = codegen::splitk_workspace_bytes(geo.m, geo.n, geo.batch, plan.config.split_k,
                                               dtype_bits(plan.acc) / 8);
  }
  if (plan.pad_from != 0) {
    const PaddedRows rows = padded_rows(spec);
    const uint64_t row_bytes = uint64_t(plan.conv->c) * uint64_t(plan.a.esize);
    w.x = uint64_t(rows.x) * row_bytes;
    w.filter = uint64_t(rows.filter) * row_bytes;
  }
  return w;
}

// The launches of one kernel; split-K's slices go to `workspace`. `after_main_launch`: as for
// launch_kernel.
void enqueue_launches(device::Device &dev, const LoadedKernel &loaded, const OpSpec &spec,
                      const OperandPointers &ptrs, device::DevicePtr workspace,
                      const std::function<void()> &after_main_launch) {
  const codegen::KernelPlan &plan = *loaded.plan;
  const GemmGeometry geo = kernel_geometry(plan, spec);
  const int split = plan.config.split_k;
  const WorkspaceLayout layout = workspace_layout(plan, spec);
  OperandPointers main_ptrs = ptrs;
  if (plan.pad_from != 0) {
    // x and the filter first, channel-padded into the workspace (kernel_abi.h)
    const PaddedRows rows = padded_rows(spec);
    const device::KernelInfo &pad_info = dev.kernel_info(loaded.pad_channels);
    main_ptrs.a = workspace + round_up(layout.splitk);
    main_ptrs.b = main_ptrs.a + round_up(layout.x);
    const std::pair<device::DevicePtr, device::DevicePtr> copies[] = {{ptrs.a, main_ptrs.a},
                                                                      {ptrs.b, main_ptrs.b}};
    const int64_t counts[] = {rows.x, rows.filter};
    for (int i = 0; i < 2; ++i) {
      device::ParamBuffer pad(pad_info);
      pad.set(0, copies[i].first);
      pad.set(1, copies[i].second);
      pad.set(2, static_cast<uint64_t>(counts[i]));
      codegen::LaunchDims d;
      d.grid_x =
          static_cast<uint32_t>((counts[i] * plan.conv->c + codegen::kPadChannelsThreads - 1) /
                                codegen::kPadChannelsThreads);
      d.block_x = codegen::kPadChannelsThreads;
      dev.launch(loaded.pad_channels, to_launch_config(d), pad.bytes());
    }
  }
  const device::LaunchConfig main_launch = to_launch_config(
      codegen::gemm_launch_dims(geo.m, geo.n, geo.batch, plan.config.bm, plan.config.bn,
                                plan.threads, plan.smem_bytes, split));
  const device::KernelInfo &info = dev.kernel_info(loaded.main);
  device::ParamBuffer params = gemm_params(info, plan, spec, main_ptrs);
  if (split == 1) {
    dev.launch(loaded.main, main_launch, params.bytes());
    if (after_main_launch)
      after_main_launch();
    return;
  }
  // Split-K: slices into the workspace, then a second kernel sums them in slice order.
  device::ParamBuffer slices = params;
  slices.set(index(GemmParam::d), workspace);
  dev.launch(loaded.main, main_launch, slices.bytes());
  if (after_main_launch)
    after_main_launch();

  const device::KernelInfo &reduce_info = dev.kernel_info(loaded.splitk_reduce);
  device::ParamBuffer reduce(reduce_info);
  const auto src = params.bytes();
  for (int i = 0; i < codegen::kGemmParamCount; ++i) {
    const device::ParamInfo &pi = info.params[static_cast<size_t>(i)];
    reduce.set_bytes(static_cast<size_t>(i), src.data() + pi.offset, pi.size);
  }
  reduce.set(static_cast<size_t>(codegen::kSplitKWorkspaceParam), workspace);
  dev.launch(loaded.splitk_reduce,
             to_launch_config(codegen::splitk_reduce_launch_dims(geo.m, geo.n, geo.batch)),
             reduce.bytes());
}

} // namespace

OperandBuffers operand_buffers(const OpSpec &spec) {
  OperandBuffers o;
  if (spec.kind == OpKind::gemm) {
    const GemmGeometry geo = gemm_geometry(spec);
    o = {geo.a.dtype,
         geo.b.dtype,
         geo.c.dtype,
         geo.batch * geo.a.batch_stride,
         geo.batch * geo.b.batch_stride,
         geo.batch * geo.c.batch_stride,
         spec.epilogue.bias == BiasKind::row ? geo.m : geo.n};
    return o;
  }
  const OperandSizes z = operand_sizes(spec);
  const ConvSpec &c = spec.conv;
  auto of = [&](codegen::ConvTensor t) {
    return t == codegen::ConvTensor::x        ? std::pair{c.x.dtype, z.x}
           : t == codegen::ConvTensor::filter ? std::pair{c.filter.dtype, z.filter}
                                              : std::pair{c.y.dtype, z.y};
  };
  const codegen::ConvRoles roles = codegen::conv_roles(c.pass);
  std::tie(o.a_type, o.a) = of(roles.a);
  std::tie(o.b_type, o.b) = of(roles.b);
  std::tie(o.c_type, o.c) = of(roles.c);
  o.bias = c.pass == ConvPass::dgrad ? c.c : c.k;
  return o;
}

uint64_t kernel_workspace_bytes(const LoadedKernel &loaded, const OpSpec &spec) {
  const WorkspaceLayout w = workspace_layout(*loaded.plan, spec);
  return w.splitk == 0 && w.x == 0 ? 0 : w.total();
}

void enqueue_kernel(device::Device &dev, const LoadedKernel &loaded, const OpSpec &spec,
                    const OperandPointers &ptrs, device::DevicePtr workspace) {
  enqueue_launches(dev, loaded, spec, ptrs, workspace, {});
}

void launch_kernel(device::Device &dev, const LoadedKernel &loaded, const OpSpec &spec,
                   const OperandPointers &ptrs, const std::function<void()> &after_main_launch) {
  const uint64_t ws_bytes = kernel_workspace_bytes(loaded, spec);
  if (ws_bytes == 0) {
    enqueue_launches(dev, loaded, spec, ptrs, 0, after_main_launch);
    dev.synchronize();
    return;
  }
  const DeviceBuffer ws(dev, ws_bytes);
  dev.memset(ws.ptr(), 0xff, ws_bytes); // NaN/-1 poison: every slot must be written by its slice
  enqueue_launches(dev, loaded, spec, ptrs, ws.ptr(), after_main_launch);
  dev.synchronize();
}

} // namespace tcjit::engine
