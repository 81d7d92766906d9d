// The fixture of the tests that need a real GPU (ctest label `gpu`): without a CUDA driver and
// device each test is skipped with the reason (ctest counts it as skipped, not passed); with one
// it runs for real. Helpers: a runtime on the CUDA device, and a launch through
// Operation::launch / launch_conv checked against the CPU reference.
#pragma once

#include "tcjit/tcjit.hpp"

#include "compiler/reference/conv_reference.h"
#include "compiler/reference/gemm_reference.h"
#include "compiler/reference/numeric_convert.h"
#include "compiler/reference/random_fill.h"
#include "compiler/reference/tolerance.h"
#include "engine/kernel_launch.h"
#include "runtime/cuda/cuda_device.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tcjit::gpu_test {

class Gpu : public ::testing::Test {
protected:
  void SetUp() override {
    if (!cuda::cuda_device_available())
      GTEST_SKIP() << "no CUDA device: " << cuda::cuda_unavailable_reason();
  }
  // A runtime on the CUDA device (its own arch), without a database: every kernel compiled now.
  static RuntimeOptions cuda_options(const std::string &backend = "llvm") {
    RuntimeOptions options;
    options.device = "cuda";
    options.use_database = false;
    options.backend = backend;
    return options;
  }
};

// Host and device copies of one operand.
struct Operand {
  std::vector<uint8_t> host;
  DeviceAddress device = 0;
};

inline Operand upload_random(Runtime &rt, DType dtype, int64_t elements, uint64_t seed,
                             bool zero = false) {
  Operand o;
  o.host.assign(static_cast<size_t>((elements * dtype_bits(dtype) + 7) / 8), 0);
  if (elements == 0)
    return o;
  if (!zero)
    fill_random(dtype, o.host.data(), elements, seed);
  o.device = rt.allocate(o.host.size());
  rt.copy_to_device(o.device, o.host.data(), o.host.size());
  return o;
}

// Launches `op` (a concrete GEMM or convolution) once on the runtime's own stream through
// Operation::launch / launch_conv, on random inputs, and compares the output with the CPU
// reference under the tolerance model. Empty when every element is within its tolerance, else the
// worst element.
inline std::string launch_and_check(Runtime &rt, const Operation &op, uint64_t seed) {
  const OpSpec &spec = op.spec();
  const engine::OperandBuffers buf = engine::operand_buffers(spec);
  const bool has_beta = spec.epilogue.beta != 0;
  const bool has_bias = spec.epilogue.bias != BiasKind::none;
  Operand a = upload_random(rt, buf.a_type, buf.a, seed);
  Operand b = upload_random(rt, buf.b_type, buf.b, seed + 1);
  Operand c = upload_random(rt, buf.c_type, buf.c, seed + 2, !has_beta);
  Operand bias = upload_random(rt, buf.c_type, has_bias ? buf.bias : 0, seed + 3);
  if (spec.kind == OpKind::gemm) {
    op.launch({a.device, b.device, c.device, c.device, bias.device});
  } else {
    // The kernel's roles: fprop A=x B=filter C=y; dgrad A=dy B=filter C=dx; wgrad A=dy B=x C=dw.
    ConvArgs args;
    args.bias = bias.device;
    if (spec.conv.pass == ConvPass::fprop)
      args.x = a.device, args.filter = b.device, args.y = c.device;
    else if (spec.conv.pass == ConvPass::dgrad)
      args.y = a.device, args.filter = b.device, args.x = c.device;
    else
      args.y = a.device, args.x = b.device, args.filter = c.device;
    op.launch_conv(args);
  }
  std::vector<uint8_t> out(c.host.size());
  rt.copy_to_host(out.data(), c.device, out.size()); // waits for the runtime's stream

  const MathMode resolved = resolved_math_mode(spec);
  std::vector<uint8_t> c_in = c.host; // the reference may write its output over C
  ReferenceResult reference;
  if (spec.kind == OpKind::gemm) {
    reference = reference_gemm(
        spec, {a.host.data(), b.host.data(), c_in.data(), has_bias ? bias.host.data() : nullptr},
        resolved);
  } else {
    ConvBuffers buffers;
    buffers.bias = has_bias ? bias.host.data() : nullptr;
    if (spec.conv.pass == ConvPass::fprop)
      buffers.x = a.host.data(), buffers.filter = b.host.data(), buffers.y = c_in.data();
    else if (spec.conv.pass == ConvPass::dgrad)
      buffers.y = a.host.data(), buffers.filter = b.host.data(), buffers.x = c_in.data();
    else
      buffers.y = a.host.data(), buffers.x = b.host.data(), buffers.filter = c_in.data();
    reference = reference_conv(spec, buffers, resolved);
  }
  const CompareReport report = compare_with_reference(spec, resolved, out.data(), reference);
  for (const Operand *o : {&a, &b, &c, &bias})
    if (o->device)
      rt.free(o->device);
  return report.ok() ? std::string() : report.summary();
}

} // namespace tcjit::gpu_test
