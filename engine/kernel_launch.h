// Launching a generated kernel (a GEMM, or a convolution as an implicit GEMM) on any device, per
// compiler/codegen/plan/kernel_abi.h.
//
// engine/ (layer 3: the tuner measures candidates with it, the runtime facade launches with it): it
// joins what the compiler produced (the kernel's plan and ABI) with a device (CUDA or the
// emulator), which know nothing of each other.
#pragma once

#include "compiler/codegen/pipeline.h"
#include "runtime/device/device.h"
#include "tcjit/op_spec.h"

#include <cstdint>
#include <functional>
#include <span>

namespace tcjit::engine {

// A compiled kernel loaded into one device's module.
struct LoadedKernel {
  device::ModuleHandle module;
  device::FunctionHandle main;
  device::FunctionHandle splitk_reduce; // valid only when the config has split_k > 1
  device::FunctionHandle pad_channels;  // valid only when the plan pads channels (pad_from != 0)
  const codegen::KernelPlan *plan = nullptr;
};

// Loads `kernel` (which must be ok()) into `dev`; `cubin`, when given, is the kernel's PTX linked
// for kernel.plan's arch (ServedKernel::cubin), which a GPU of that arch loads instead of
// compiling the PTX. Throws device::DeviceError on failure.
LoadedKernel load_kernel(device::Device &dev, const codegen::CompiledKernel &kernel,
                         std::span<const uint8_t> cubin = {});

// Device pointers of the operands; bias may be 0 when the spec has none. D may equal C.
struct OperandPointers {
  device::DevicePtr a = 0, b = 0, c = 0, d = 0, bias = 0;
};

// The buffers a launch of a concrete `spec` reads and writes, in the kernel's roles A, B, C/D and
// bias: a GEMM's matrices (all batches), a convolution's tensors (fprop: x, filter, y; dgrad: dy,
// filter, dx; wgrad: dy, x, dw).
struct OperandBuffers {
  DType a_type = DType::f16, b_type = DType::f16, c_type = DType::f16;
  int64_t a = 0, b = 0, c = 0, bias = 0; // elements
};
OperandBuffers operand_buffers(const OpSpec &spec);

// Runs D = act(alpha*A*B + beta*C + bias) for the concrete `spec` the kernel was compiled for,
// including split-K's workspace and reduction pass. `after_main_launch`, when set, runs right
// after the main kernel's launch (before split-K's reduction: e.g. to read its counters).
// Synchronizes before returning.
void launch_kernel(device::Device &dev, const LoadedKernel &loaded, const OpSpec &spec,
                   const OperandPointers &ptrs,
                   const std::function<void()> &after_main_launch = {});

// The bytes of the workspace: split-K's slices, and the channel-padded copies of x and the filter
// (0 when the config has neither). The one computation of the workspace's layout.
uint64_t kernel_workspace_bytes(const LoadedKernel &loaded, const OpSpec &spec);
// The alignment of a workspace's address (the kernels move it in vectors of up to 16 bytes).
constexpr uint64_t kWorkspaceAlignment = 16;
// The launches of launch_kernel, only enqueued (no allocation, memset or synchronize): the
// runtime's asynchronous launches, and the tuner's timed ones (Device::time_ms). `workspace`
// holds kernel_workspace_bytes, aligned to kWorkspaceAlignment (every slot is written by its
// slice before the reduction reads it, and the padded copies are written before the kernel reads
// them, so it needs no initialisation).
void enqueue_kernel(device::Device &dev, const LoadedKernel &loaded, const OpSpec &spec,
                    const OperandPointers &ptrs, device::DevicePtr workspace);

} // namespace tcjit::engine
