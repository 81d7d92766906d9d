// Launches on a caller's CUDA streams, on a real GPU: Operation::launch only enqueues (it returns
// while the stream is still busy), two streams run independently, and each result is right once
// its stream is synchronized. A spinning kernel (%globaltimer) holds the first stream back.
#include "gpu_test.h"

#include "runtime/cuda/cuda_driver.h"
#include "support/shared_library.h"

#include <cuda.h>

namespace tcjit::gpu_test {
namespace {

// Spins one thread until `ns` nanoseconds of the GPU's global timer have passed.
constexpr const char *kSpinPtx = R"(
.version 7.0
.target sm_80
.address_size 64

.visible .entry tcjit_spin(
	.param .u64 tcjit_spin_ns
)
{
	.reg .pred 	%p<2>;
	.reg .b64 	%rd<5>;
	ld.param.u64 	%rd1, [tcjit_spin_ns];
	mov.u64 	%rd2, %globaltimer;
SPIN:
	mov.u64 	%rd3, %globaltimer;
	sub.s64 	%rd4, %rd3, %rd2;
	setp.lt.u64 	%p1, %rd4, %rd1;
	@%p1 bra 	SPIN;
	ret;
}
)";

// Two non-blocking streams of the primary context of GPU 0 (the one the runtime uses).
class GpuStreams : public Gpu {
protected:
  void SetUp() override {
    Gpu::SetUp();
    if (IsSkipped())
      return;
    driver_ = cuda::process_cuda_driver();
    const cuda::CudaDriver &d = *driver_;
    ASSERT_EQ(d.cuDeviceGet(&device_, 0), CUDA_SUCCESS);
    ASSERT_EQ(d.cuDevicePrimaryCtxRetain(&context_, device_), CUDA_SUCCESS);
    retained_ = true;
    ASSERT_EQ(d.cuCtxSetCurrent(context_), CUDA_SUCCESS);
    ASSERT_EQ(d.cuStreamCreate(&first_, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    ASSERT_EQ(d.cuStreamCreate(&second_, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
    const support::OpenedLibrary library = support::open_first_library({d.path});
    query_ = reinterpret_cast<CUresult (*)(CUstream)>(
        support::find_library_symbol(library.handle, "cuStreamQuery"));
    ASSERT_NE(query_, nullptr) << "cuStreamQuery in " << d.path;
  }
  void TearDown() override {
    if (!driver_)
      return;
    const cuda::CudaDriver &d = *driver_;
    d.cuCtxSetCurrent(context_);
    for (CUstream stream : {first_, second_})
      if (stream) {
        d.cuStreamSynchronize(stream);
        d.cuStreamDestroy_v2(stream);
      }
    if (retained_)
      d.cuDevicePrimaryCtxRelease_v2(device_);
  }
  void synchronize(CUstream stream) const {
    ASSERT_EQ(driver_->cuStreamSynchronize(stream), CUDA_SUCCESS);
  }

  std::shared_ptr<const cuda::CudaDriver> driver_;
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  bool retained_ = false;
  CUstream first_ = nullptr, second_ = nullptr;
  CUresult (*query_)(CUstream) = nullptr;
};

std::string check_output(Runtime &rt, const OpSpec &spec, const Operand &a, const Operand &b,
                         const Operand &d) {
  std::vector<uint8_t> out(d.host.size()), c(d.host.size(), 0);
  rt.copy_to_host(out.data(), d.device, out.size());
  const MathMode resolved = resolved_math_mode(spec);
  const ReferenceResult reference =
      reference_gemm(spec, {a.host.data(), b.host.data(), c.data(), nullptr}, resolved);
  const CompareReport report = compare_with_reference(spec, resolved, out.data(), reference);
  return report.ok() ? std::string() : report.summary();
}

TEST_F(GpuStreams, LaunchesOnlyEnqueueAndTwoStreamsRunIndependently) {
  Runtime rt(cuda_options());
  const Operation op = rt.prepare("gemm m=512 n=512 k=512 a=f16:row b=f16:col c=f16:row acc=f32");
  const OpSpec &spec = op.spec();
  const engine::OperandBuffers buf = engine::operand_buffers(spec);
  const Operand a1 = upload_random(rt, buf.a_type, buf.a, 1),
                b1 = upload_random(rt, buf.b_type, buf.b, 2);
  const Operand a2 = upload_random(rt, buf.a_type, buf.a, 3),
                b2 = upload_random(rt, buf.b_type, buf.b, 4);
  const Operand d1 = upload_random(rt, buf.c_type, buf.c, 0, true);
  const Operand d2 = upload_random(rt, buf.c_type, buf.c, 0, true);
  // Warm-up on each stream: the kernel loaded, any workspace of the stream's pool allocated.
  op.launch({a1.device, b1.device, d1.device, d1.device}, first_);
  op.launch({a2.device, b2.device, d2.device, d2.device}, second_);
  synchronize(first_);
  synchronize(second_);
  const std::vector<uint8_t> zeros(d1.host.size(), 0);
  rt.copy_to_device(d1.device, zeros.data(), zeros.size());
  rt.copy_to_device(d2.device, zeros.data(), zeros.size());

  // The first stream held for 3 s of GPU time by a spinning kernel.
  cuda::CudaDevice gate;
  const device::ModuleHandle module = gate.load_module(kSpinPtx, "spin.ptx");
  const device::FunctionHandle spin = gate.get_function(module, "tcjit_spin");
  device::ParamBuffer params(gate.kernel_info(spin));
  params.set(0, uint64_t{3'000'000'000});
  gate.set_stream(first_);
  gate.launch(spin, {{1, 1, 1}, {1, 1, 1}, 0}, params.bytes());
  gate.set_stream(nullptr);

  op.launch({a1.device, b1.device, d1.device, d1.device}, first_);
  EXPECT_EQ(query_(first_), CUDA_ERROR_NOT_READY)
      << "Operation::launch waited for its stream instead of only enqueueing";
  op.launch({a2.device, b2.device, d2.device, d2.device}, second_);
  synchronize(second_);
  EXPECT_EQ(query_(first_), CUDA_ERROR_NOT_READY)
      << "the second stream waited for the first (they share no work)";
  EXPECT_EQ(check_output(rt, spec, a2, b2, d2), "") << "the second stream's GEMM";

  synchronize(first_);
  EXPECT_EQ(query_(first_), CUDA_SUCCESS);
  EXPECT_EQ(check_output(rt, spec, a1, b1, d1), "") << "the first stream's GEMM, after the spin";
  gate.unload_module(module);
  for (const Operand *o : {&a1, &b1, &a2, &b2, &d1, &d2})
    rt.free(o->device);
}

// A GEMM with a long K (split-K where the runtime picks it) and a convolution of 3 channels
// (channel padding where it picks it) take their workspace from each stream's pool: on two streams,
// each launch's result is right.
TEST_F(GpuStreams, WorkspaceLaunchesOnTwoStreamsAreRight) {
  Runtime rt(cuda_options());
  for (const char *text : {"gemm m=64 n=64 k=8192 a=f16:row b=f16:col c=f16:row acc=f32",
                           "conv2d n=2 h=14 w=14 c=3 k=32 r=3 s=3 pad=1 x=f16"}) {
    const Operation op = rt.prepare(text);
    SCOPED_TRACE(std::string(text) + " [" + op.config() + "]");
    for (CUstream stream : {first_, second_}) {
      const OpSpec &spec = op.spec();
      const engine::OperandBuffers buf = engine::operand_buffers(spec);
      Operand a = upload_random(rt, buf.a_type, buf.a, 11);
      Operand b = upload_random(rt, buf.b_type, buf.b, 12);
      Operand d = upload_random(rt, buf.c_type, buf.c, 0, true);
      if (spec.kind == OpKind::gemm)
        op.launch({a.device, b.device, d.device, d.device}, stream);
      else
        op.launch_conv({a.device, b.device, d.device}, stream);
      synchronize(stream);
      std::vector<uint8_t> out(d.host.size()), c(d.host.size(), 0);
      rt.copy_to_host(out.data(), d.device, out.size());
      const MathMode resolved = resolved_math_mode(spec);
      const ReferenceResult reference =
          spec.kind == OpKind::gemm
              ? reference_gemm(spec, {a.host.data(), b.host.data(), c.data(), nullptr}, resolved)
              : reference_conv(spec, {a.host.data(), b.host.data(), c.data(), nullptr}, resolved);
      const CompareReport report = compare_with_reference(spec, resolved, out.data(), reference);
      EXPECT_TRUE(report.ok()) << report.summary();
      for (const Operand *o : {&a, &b, &d})
        rt.free(o->device);
    }
  }
}

} // namespace
} // namespace tcjit::gpu_test
