// Emulator speed: warp-instructions per second on a tiled SGEMM (shared memory, barriers,
// converged inner loop), on a divergent kernel (per-lane loop trip counts) and on an mma loop per
// tensor-core type (f16, bf16, tf32, s8, f64), with one host thread (per-core speed) and with all
// cores; and on tcjit's own generated GEMMs (`BM_EmuGemm/<gemm>/<threads>`: the kernel `tcjit run`
// verifies for that spec, compiled once before timing, then load + launch as `tcjit run`'s device
// time counts them, on a fresh device, without the uploads) with `BM_EmuLoad/<gemm>/<again>` the
// PTX load alone (again=1: the same PTX loaded again, its decoded program reused). `tcjit run`
// prints the same counters and device time (docs/emulator.md, "Performance").
#include <benchmark/benchmark.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "compiler/codegen/pipeline.h"
#include "compiler/dsl/parser.h"
#include "engine/kernel_launch.h"
#include "runtime/device/device.h"
#include "runtime/emu/emu_device.h"

namespace {

// nvcc 13 -ptx -arch=sm_80 of a 16x16-tiled SGEMM (C = A * B, row-major, bounds-checked)
const char *kSgemmPtx = R"PTX(
.version 9.0
.target sm_80
.address_size 64

	// .globl	sgemm

.visible .entry sgemm(
	.param .u32 sgemm_param_0,
	.param .u32 sgemm_param_1,
	.param .u32 sgemm_param_2,
	.param .u64 sgemm_param_3,
	.param .u64 sgemm_param_4,
	.param .u64 sgemm_param_5
)
{
	.reg .pred 	%p<13>;
	.reg .f32 	%f<29>;
	.reg .b32 	%r<45>;
	.reg .b64 	%rd<13>;
	// demoted variable
	.shared .align 4 .b8 _ZZ5sgemmE2As[1088];
	// demoted variable
	.shared .align 4 .b8 _ZZ5sgemmE2Bs[1024];

	ld.param.u32 	%r22, [sgemm_param_0];
	ld.param.u32 	%r23, [sgemm_param_1];
	ld.param.u32 	%r24, [sgemm_param_2];
	ld.param.u64 	%rd3, [sgemm_param_3];
	ld.param.u64 	%rd4, [sgemm_param_4];
	ld.param.u64 	%rd5, [sgemm_param_5];
	mov.u32 	%r25, %ctaid.y;
	shl.b32 	%r26, %r25, 4;
	mov.u32 	%r1, %tid.y;
	add.s32 	%r2, %r26, %r1;
	mov.u32 	%r27, %ctaid.x;
	shl.b32 	%r28, %r27, 4;
	mov.u32 	%r3, %tid.x;
	add.s32 	%r4, %r28, %r3;
	setp.lt.s32 	%p1, %r24, 1;
	mov.f32 	%f27, 0f00000000;
	@%p1 bra 	$L__BB0_9;

	mul.lo.s32 	%r5, %r2, %r24;
	mov.u32 	%r30, _ZZ5sgemmE2As;
	mad.lo.s32 	%r31, %r1, 68, %r30;
	shl.b32 	%r32, %r3, 2;
	add.s32 	%r6, %r31, %r32;
	shl.b32 	%r33, %r1, 6;
	mov.u32 	%r34, _ZZ5sgemmE2Bs;
	add.s32 	%r35, %r34, %r33;
	add.s32 	%r7, %r35, %r32;
	add.s32 	%r36, %r34, %r32;
	add.s32 	%r8, %r36, 128;
	add.s32 	%r9, %r31, 8;
	cvta.to.global.u64 	%rd1, %rd3;
	cvta.to.global.u64 	%rd2, %rd4;
	mov.f32 	%f10, 0f00000000;
	mov.u32 	%r41, 0;
	mov.f32 	%f27, %f10;

$L__BB0_2:
	add.s32 	%r11, %r41, %r1;
	add.s32 	%r12, %r41, %r3;
	setp.ge.s32 	%p2, %r12, %r24;
	setp.ge.s32 	%p3, %r2, %r22;
	or.pred  	%p4, %p3, %p2;
	mov.f32 	%f25, %f10;
	@%p4 bra 	$L__BB0_4;

	add.s32 	%r37, %r12, %r5;
	mul.wide.s32 	%rd6, %r37, 4;
	add.s64 	%rd7, %rd1, %rd6;
	ld.global.f32 	%f25, [%rd7];

$L__BB0_4:
	st.shared.f32 	[%r6], %f25;
	setp.ge.s32 	%p5, %r11, %r24;
	setp.ge.s32 	%p6, %r4, %r23;
	mov.f32 	%f26, 0f00000000;
	or.pred  	%p7, %p6, %p5;
	@%p7 bra 	$L__BB0_6;

	mad.lo.s32 	%r38, %r11, %r23, %r4;
	mul.wide.s32 	%rd8, %r38, 4;
	add.s64 	%rd9, %rd2, %rd8;
	ld.global.f32 	%f26, [%rd9];

$L__BB0_6:
	st.shared.f32 	[%r7], %f26;
	bar.sync 	0;
	mov.u32 	%r44, 128;
	mov.u32 	%r42, %r9;
	mov.u32 	%r43, %r8;

$L__BB0_7:
	.pragma "nounroll";
	ld.shared.f32 	%f13, [%r43+-128];
	ld.shared.f32 	%f14, [%r42+-8];
	fma.rn.f32 	%f15, %f14, %f13, %f27;
	ld.shared.f32 	%f16, [%r43+-64];
	ld.shared.f32 	%f17, [%r42+-4];
	fma.rn.f32 	%f18, %f17, %f16, %f15;
	ld.shared.f32 	%f19, [%r43];
	ld.shared.f32 	%f20, [%r42];
	fma.rn.f32 	%f21, %f20, %f19, %f18;
	ld.shared.f32 	%f22, [%r43+64];
	ld.shared.f32 	%f23, [%r42+4];
	fma.rn.f32 	%f27, %f23, %f22, %f21;
	add.s32 	%r43, %r43, 256;
	add.s32 	%r42, %r42, 16;
	add.s32 	%r44, %r44, 256;
	setp.ne.s32 	%p8, %r44, 1152;
	@%p8 bra 	$L__BB0_7;

	bar.sync 	0;
	add.s32 	%r41, %r41, 16;
	setp.lt.s32 	%p9, %r41, %r24;
	@%p9 bra 	$L__BB0_2;

$L__BB0_9:
	setp.ge.s32 	%p10, %r4, %r23;
	setp.ge.s32 	%p11, %r2, %r22;
	or.pred  	%p12, %p11, %p10;
	@%p12 bra 	$L__BB0_11;

	mad.lo.s32 	%r40, %r2, %r23, %r4;
	cvta.to.global.u64 	%rd10, %rd5;
	mul.wide.s32 	%rd11, %r40, 4;
	add.s64 	%rd12, %rd10, %rd11;
	st.global.f32 	[%rd12], %f27;

$L__BB0_11:
	ret;

}
)PTX";

const char *kCollatzPtx = R"PTX(
.version 8.0
.target sm_80
.address_size 64
.visible .entry collatz(.param .u64 out)
{
  .reg .b32 %r<8>;
  .reg .b64 %rd<4>;
  .reg .pred %p<4>;
  mov.u32 %r5, %ctaid.x;
  mov.u32 %r6, %ntid.x;
  mov.u32 %r1, %tid.x;
  mad.lo.u32 %r1, %r5, %r6, %r1;
  add.u32 %r2, %r1, 1;
  mov.u32 %r3, 0;
LOOP:
  setp.eq.u32 %p1, %r2, 1;
  @%p1 bra DONE;
  and.b32 %r4, %r2, 1;
  setp.eq.u32 %p2, %r4, 0;
  @%p2 bra EVEN;
  mad.lo.u32 %r2, %r2, 3, 1;
  bra.uni NEXT;
EVEN:
  shr.u32 %r2, %r2, 1;
NEXT:
  add.u32 %r3, %r3, 1;
  bra LOOP;
DONE:
  ld.param.u64 %rd1, [out];
  mul.wide.u32 %rd2, %r1, 4;
  add.u64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r3;
  ret;
}
)PTX";

// An mma loop: each warp keeps its A/B fragments (lane-dependent values near 1) and accumulates 4
// mma per iteration into C, then stores C. 7 warp instructions per iteration, 4 of them mma.
struct MmaVariant {
  const char *name, *shape, *reg; // reg: register type of the fragments
  int a, b, c;                    // fragment registers
  const char *a_bits, *b_bits;    // value ORed with the lane id into each A / B register
};
const MmaVariant kMmaVariants[] = {
    {"f16", "m16n8k16.row.col.f32.f16.f16.f32", "b32", 4, 2, 4, "0x3c003c00", "0x3c003c00"},
    {"bf16", "m16n8k16.row.col.f32.bf16.bf16.f32", "b32", 4, 2, 4, "0x3f803f80", "0x3f803f80"},
    {"tf32", "m16n8k8.row.col.f32.tf32.tf32.f32", "b32", 4, 2, 4, "0x3f800000", "0x3f800000"},
    {"s8", "m16n8k32.row.col.s32.s8.s8.s32", "b32", 4, 2, 4, "0x01010100", "0x01010100"},
    {"f64", "m8n8k4.row.col.f64.f64.f64.f64", "b64", 1, 1, 2, "0x3ff0000000000000",
     "0x3ff0000000000000"},
};

std::string mma_loop_ptx(const MmaVariant &v) {
  auto list = [](const char *p, int n) {
    std::string s;
    for (int i = 0; i < n; ++i)
      s += (i ? ", %" : "%") + std::string(p) + std::to_string(i);
    return s;
  };
  const std::string r = v.reg;
  std::string ptx = ".version 8.0\n.target sm_80\n.address_size 64\n"
                    ".visible .entry mma_loop(.param .u64 out, .param .u32 iters)\n{\n"
                    "  .reg ." +
                    r + " %a<" + std::to_string(v.a) + ">, %b<" + std::to_string(v.b) + ">, %c<" +
                    std::to_string(v.c) + ">;\n  .reg ." + r +
                    " %w;\n  .reg .b32 %r<4>;\n  .reg .b64 %rd<4>;\n  .reg .pred %p;\n"
                    "  mov.u32 %r1, %laneid;\n  mov.u32 %r2, 0;\n  ld.param.u32 %r3, [iters];\n";
  ptx += r == "b64" ? "  cvt.u64.u32 %w, %r1;\n" : "  mov.b32 %w, %r1;\n";
  for (int i = 0; i < v.a; ++i)
    ptx += "  or.b" + r.substr(1) + " %a" + std::to_string(i) + ", %w, " + v.a_bits + ";\n";
  for (int i = 0; i < v.b; ++i)
    ptx += "  or.b" + r.substr(1) + " %b" + std::to_string(i) + ", %w, " + v.b_bits + ";\n";
  for (int i = 0; i < v.c; ++i)
    ptx += "  mov.b" + r.substr(1) + " %c" + std::to_string(i) + ", 0;\n";
  const std::string mma = "  mma.sync.aligned." + std::string(v.shape) + " {" + list("c", v.c) +
                          "}, {" + list("a", v.a) + "}, {" + list("b", v.b) + "}, {" +
                          list("c", v.c) + "};\n";
  ptx += "LOOP:\n" + mma + mma + mma + mma +
         "  add.u32 %r2, %r2, 1;\n  setp.lt.u32 %p, %r2, %r3;\n  @%p bra LOOP;\n"
         "  ld.param.u64 %rd1, [out];\n  mul.wide.u32 %rd2, %r1, 8;\n"
         "  add.u64 %rd3, %rd1, %rd2;\n  st.global." +
         r + " [%rd3], %c0;\n  ret;\n}\n";
  return ptx;
}

void BM_EmuMma(benchmark::State &state) {
  const MmaVariant &v = kMmaVariants[state.range(0)];
  state.SetLabel(v.name);
  tcjit::emu::EmuDeviceOptions opt;
  opt.worker_threads = static_cast<unsigned>(state.range(1));
  tcjit::emu::EmuDevice dev(opt);
  auto out = dev.allocate(32 * 8);
  auto m = dev.load_module(mma_loop_ptx(v), "mma_loop.ptx");
  auto f = dev.get_function(m, "mma_loop");
  tcjit::device::ParamBuffer p(dev.kernel_info(f));
  p.set(0, out);
  p.set(1, 64u); // iterations per warp
  uint64_t instructions = 0, mma = 0;
  for (auto _ : state) {
    dev.launch(f, {{64, 1, 1}, {128, 1, 1}, 0}, p.bytes());
    instructions += dev.last_counters().warp_instructions;
    mma += dev.last_counters().mma_instructions;
  }
  state.counters["warp_instr_per_s"] =
      benchmark::Counter(static_cast<double>(instructions), benchmark::Counter::kIsRate);
  state.counters["mma_per_s"] =
      benchmark::Counter(static_cast<double>(mma), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EmuMma)
    ->ArgsProduct({{0, 1, 2, 3, 4}, {1, 0}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_EmuSgemm(benchmark::State &state) {
  tcjit::emu::EmuDeviceOptions opt;
  opt.worker_threads = static_cast<unsigned>(state.range(0));
  tcjit::emu::EmuDevice dev(opt);
  const int M = 128, N = 128, K = 128;
  std::vector<float> a(M * K, 1.0f), b(K * N, 0.5f);
  auto da = dev.allocate(a.size() * 4), db = dev.allocate(b.size() * 4),
       dc = dev.allocate(M * N * 4);
  dev.copy_to_device(da, a.data(), a.size() * 4);
  dev.copy_to_device(db, b.data(), b.size() * 4);
  auto m = dev.load_module(kSgemmPtx, "sgemm.ptx");
  auto f = dev.get_function(m, "sgemm");
  tcjit::device::ParamBuffer p(dev.kernel_info(f));
  p.set(0, M);
  p.set(1, N);
  p.set(2, K);
  p.set(3, da);
  p.set(4, db);
  p.set(5, dc);
  uint64_t instructions = 0;
  for (auto _ : state) {
    dev.launch(f, {{N / 16, M / 16, 1}, {16, 16, 1}, 0}, p.bytes());
    instructions += dev.last_counters().warp_instructions;
  }
  state.counters["warp_instr_per_s"] =
      benchmark::Counter(static_cast<double>(instructions), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EmuSgemm)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_EmuDivergent(benchmark::State &state) {
  tcjit::emu::EmuDeviceOptions opt;
  opt.worker_threads = static_cast<unsigned>(state.range(0));
  tcjit::emu::EmuDevice dev(opt);
  const int threads = 64 * 256;
  auto out = dev.allocate(threads * 4);
  auto m = dev.load_module(kCollatzPtx, "collatz.ptx");
  auto f = dev.get_function(m, "collatz");
  tcjit::device::ParamBuffer p(dev.kernel_info(f));
  p.set(0, out);
  uint64_t instructions = 0;
  for (auto _ : state) {
    dev.launch(f, {{threads / 256, 1, 1}, {256, 1, 1}, 0}, p.bytes());
    instructions += dev.last_counters().warp_instructions;
  }
  state.counters["warp_instr_per_s"] =
      benchmark::Counter(static_cast<double>(instructions), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EmuDivergent)->Arg(1)->Arg(0)->Unit(benchmark::kMillisecond)->UseRealTime();

// Generated GEMMs, with the tile configs `tcjit run` picks for them (512x512x256 f16/bf16: the
// tuner's; the others: the default).
struct GemmCase {
  const char *name, *spec, *config;
};
const GemmCase kGemms[] = {
    {"f16_512x512x256", "gemm m=512 n=512 k=256 a=f16:row b=f16:col c=f16:row acc=f32",
     "64x64x32 w32x32 s3"},
    {"bf16_512x512x256", "gemm m=512 n=512 k=256 a=bf16:row b=bf16:col c=bf16:row acc=f32",
     "64x64x32 w32x32 s3"},
    {"s8_512x512x512", "gemm m=512 n=512 k=512 a=s8:row b=s8:col c=s32:row acc=s32",
     "64x64x64 w32x32 s3"},
    {"f32simt_256", "gemm m=256 n=256 k=256 a=f32:row b=f32:col c=f32:row acc=f32 math=f32",
     "16x16x8 w16x16 s3"},
};

struct CompiledGemm {
  tcjit::OpSpec spec;
  tcjit::codegen::CompiledKernel kernel;
};
const CompiledGemm &compiled_gemm(int index) {
  static std::vector<std::unique_ptr<CompiledGemm>> cache(std::size(kGemms));
  if (!cache[index]) {
    auto g = std::make_unique<CompiledGemm>();
    g->spec = tcjit::parse_spec(kGemms[index].spec).entries.front().spec;
    tcjit::codegen::CompileOptions opt;
    opt.config = tcjit::codegen::default_tile_config(g->spec, "sm_80", false);
    std::string error;
    if (!tcjit::codegen::parse_tile_config(kGemms[index].config, *opt.config, error))
      throw std::runtime_error(error);
    g->kernel = tcjit::codegen::compile_gemm(g->spec, opt);
    cache[index] = std::move(g);
  }
  return *cache[index];
}

void BM_EmuGemm(benchmark::State &state) {
  const CompiledGemm &g = compiled_gemm(static_cast<int>(state.range(0)));
  state.SetLabel(kGemms[state.range(0)].name);
  if (!g.kernel.ok()) {
    state.SkipWithError("compile failed");
    return;
  }
  tcjit::emu::EmuDeviceOptions opt;
  opt.worker_threads = static_cast<unsigned>(state.range(1));
  const tcjit::engine::OperandBuffers sizes = tcjit::engine::operand_buffers(g.spec);
  auto bytes = [](tcjit::DType t, int64_t n) {
    return static_cast<size_t>(n) * tcjit::dtype_bits(t) / 8 + 16;
  };
  uint64_t instructions = 0, mma = 0;
  for (auto _ : state) {
    tcjit::emu::EmuDevice dev(opt); // a fresh device: the PTX is decoded as in a new process
    tcjit::engine::OperandPointers ptrs;
    ptrs.a = dev.allocate(bytes(sizes.a_type, sizes.a));
    ptrs.b = dev.allocate(bytes(sizes.b_type, sizes.b));
    ptrs.c = ptrs.d = dev.allocate(bytes(sizes.c_type, sizes.c));
    const tcjit::engine::LoadedKernel loaded = tcjit::engine::load_kernel(dev, g.kernel);
    tcjit::engine::launch_kernel(dev, loaded, g.spec, ptrs, [&] {
      instructions += dev.last_counters().warp_instructions;
      mma += dev.last_counters().mma_instructions;
    });
    dev.unload_module(loaded.module);
  }
  state.counters["warp_instr_per_s"] =
      benchmark::Counter(static_cast<double>(instructions), benchmark::Counter::kIsRate);
  state.counters["mma_per_s"] =
      benchmark::Counter(static_cast<double>(mma), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_EmuGemm)
    ->ArgsProduct({{0, 1, 2, 3}, {1, 0}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The PTX load (parse, check, decode) of a fresh device (/0), and again on the same device (/1:
// the decoded program reused, as a tuner's repeated loads of one candidate are).
void BM_EmuLoad(benchmark::State &state) {
  const CompiledGemm &g = compiled_gemm(static_cast<int>(state.range(0)));
  state.SetLabel(kGemms[state.range(0)].name);
  const bool again = state.range(1) != 0;
  tcjit::emu::EmuDevice same;
  for (auto _ : state) {
    tcjit::emu::EmuDevice fresh;
    tcjit::emu::EmuDevice &dev = again ? same : fresh;
    dev.unload_module(dev.load_module(g.kernel.ptx, "gemm.ptx"));
  }
}
BENCHMARK(BM_EmuLoad)
    ->ArgsProduct({{0, 1, 2, 3}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

} // namespace
BENCHMARK_MAIN();
