// Hand-written PTX kernels shared by the JIT tests.
#pragma once

namespace tcjit::jit::test {

// y[i] += a * x[i] for i < n.
inline constexpr const char *kAxpyPtx = R"(
.version 7.0
.target sm_80
.address_size 64

.visible .entry tcjit_axpy(
	.param .f32 tcjit_axpy_a,
	.param .u64 tcjit_axpy_x,
	.param .u64 tcjit_axpy_y,
	.param .u32 tcjit_axpy_n
)
{
	.reg .pred 	%p<2>;
	.reg .f32 	%f<5>;
	.reg .b32 	%r<6>;
	.reg .b64 	%rd<8>;

	ld.param.f32 	%f1, [tcjit_axpy_a];
	ld.param.u64 	%rd1, [tcjit_axpy_x];
	ld.param.u64 	%rd2, [tcjit_axpy_y];
	ld.param.u32 	%r2, [tcjit_axpy_n];
	mov.u32 	%r3, %ctaid.x;
	mov.u32 	%r4, %ntid.x;
	mov.u32 	%r5, %tid.x;
	mad.lo.s32 	%r1, %r3, %r4, %r5;
	setp.ge.u32 	%p1, %r1, %r2;
	@%p1 bra 	DONE;
	cvta.to.global.u64 	%rd3, %rd1;
	cvta.to.global.u64 	%rd4, %rd2;
	mul.wide.u32 	%rd5, %r1, 4;
	add.s64 	%rd6, %rd3, %rd5;
	add.s64 	%rd7, %rd4, %rd5;
	ld.global.f32 	%f2, [%rd6];
	ld.global.f32 	%f3, [%rd7];
	fma.rn.f32 	%f4, %f1, %f2, %f3;
	st.global.f32 	[%rd7], %f4;
DONE:
	ret;
}
)";

// Uses an undeclared register on line 9: ptxas rejects it.
inline constexpr const char *kBrokenPtx = R"(
.version 7.0
.target sm_80
.address_size 64

.visible .entry tcjit_broken()
{
	.reg .b32 	%r<2>;
	mov.u32 	%r1, %undeclared_register;
	ret;
}
)";

} // namespace tcjit::jit::test
