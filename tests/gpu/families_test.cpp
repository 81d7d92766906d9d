// One problem of every kernel family through tcjit::Runtime on the CUDA device, compiled for the
// device's own arch: Runtime::verify (the kernel the runtime serves, run by the engine and checked
// against the CPU reference under the tolerance model), then a launch through Operation::launch /
// launch_conv (the asynchronous path applications take) checked the same way. Sizes with tails
// (not multiples of the tiles) where the family allows.
#include "gpu_test.h"

#include "tcjit/tools.hpp"

namespace tcjit::gpu_test {
namespace {

struct Family {
  const char *name;
  const char *spec;
  const char *config = ""; // over the runtime's choice ("" keeps it)
  const char *backend = "llvm";
};

const Family kFamilies[] = {
    {"f16", "gemm m=200 n=136 k=72 a=f16:row b=f16:col c=f16:row acc=f32"},
    {"f16_col_row", "gemm m=130 n=70 k=64 a=f16:col b=f16:row c=f32:col acc=f32"},
    {"bf16", "gemm m=128 n=96 k=80 a=bf16:row b=bf16:col c=bf16:row acc=f32"},
    {"tf32", "gemm m=96 n=72 k=40 a=f32:row b=f32:col c=f32:row acc=f32 math=tf32"},
    {"f32_simt", "gemm m=96 n=72 k=40 a=f32:row b=f32:col c=f32:row acc=f32 math=f32"},
    {"f64", "gemm m=64 n=64 k=63 a=f64:row b=f64:col c=f64:row acc=f64"},
    {"s8", "gemm m=128 n=128 k=128 a=s8:row b=s8:col c=s32:row acc=s32"},
    {"s8_s8out", "gemm m=64 n=64 k=64 a=s8:row b=s8:col c=s8:row acc=s32 alpha=0.1"},
    {"batch", "gemm m=64 n=48 k=40 batch=3 a=f16:row b=f16:col c=f16:row acc=f32"},
    {"split_k", "gemm m=64 n=64 k=4096 a=f16:row b=f16:col c=f16:row acc=f32 beta=1",
     "64x64x32 w32x32 s3 k4"},
    {"bias_gelu", "gemm m=100 n=60 k=30 a=bf16:col b=bf16:row c=f32:col acc=f32 act=gelu "
                  "bias=col beta=2"},
    {"bias_relu", "gemm m=96 n=64 k=64 a=f16:row b=f16:col c=f16:row acc=f32 act=relu bias=row"},
    {"tanh", "gemm m=72 n=40 k=48 a=f16:row b=f16:col c=f16:row acc=f32 act=tanh alpha=0.5"},
    {"sigmoid", "gemm m=72 n=40 k=48 a=f16:row b=f16:col c=f32:row acc=f32 act=sigmoid beta=1"},
    {"elu", "gemm m=72 n=40 k=48 a=bf16:row b=bf16:col c=bf16:row acc=f32 act=elu bias=col"},
    {"gelu_tanh", "gemm m=72 n=40 k=48 a=f16:row b=f16:col c=f16:row acc=f32 act=gelu_tanh"},
    {"softplus", "gemm m=72 n=40 k=48 a=f16:row b=f16:col c=f16:row acc=f32 act=softplus"},
    {"swish", "gemm m=72 n=40 k=48 a=bf16:row b=bf16:col c=bf16:row acc=f32 act=swish bias=row"},
    {"u8", "gemm m=64 n=64 k=64 a=u8:row b=u8:col c=s32:row acc=s32"},
    {"conv_fprop", "conv2d n=2 h=9 w=9 c=16 k=32 r=3 s=3 pad=1 x=f16 bias=col act=relu"},
    {"conv_dgrad", "conv2d n=2 h=9 w=9 c=16 k=32 r=3 s=3 pad=1 pass=dgrad x=f16"},
    {"conv_wgrad", "conv2d n=2 h=9 w=9 c=16 k=32 r=3 s=3 pad=1 pass=wgrad x=f16"},
    {"conv_strided", "conv2d n=2 h=14 w=14 c=8 k=16 r=3 s=3 pad=1 stride=2 x=bf16"},
    {"conv_grouped", "conv2d n=2 h=8 w=8 c=32 k=64 r=3 s=3 pad=1 groups=4 x=f16"},
    {"conv_depthwise", "conv2d n=2 h=8 w=8 c=32 k=32 r=3 s=3 pad=1 groups=32 x=f16"},
    {"conv3d", "conv3d n=1 d=4 h=6 w=6 c=8 k=16 t=3 r=3 s=3 pad=1 x=f16"},
    {"nvrtc_f16", "gemm m=200 n=136 k=72 a=f16:row b=f16:col c=f16:row acc=f32", "", "nvrtc"},
    {"nvrtc_conv", "conv2d n=2 h=9 w=9 c=16 k=32 r=3 s=3 pad=1 x=f16", "", "nvrtc"},
};

void PrintTo(const Family &f, std::ostream *os) {
  *os << f.name << ": " << f.spec << (*f.config ? std::string(" [") + f.config + "]" : "") << " ("
      << f.backend << ")";
}

class GpuFamily : public Gpu, public ::testing::WithParamInterface<Family> {};

TEST_P(GpuFamily, VerifiesAndLaunchesAgainstTheReference) {
  const Family &family = GetParam();
  Runtime rt(cuda_options(family.backend));
  const Operation op = rt.prepare(family.spec);
  VerifyRequest request;
  request.config = family.config;
  const VerifyReport report = rt.verify(op.spec(), request);
  EXPECT_TRUE(report.ok) << family.spec << "\n" << report.failure << "\n" << report.text;
  EXPECT_EQ(report.mismatches, 0);
  EXPECT_GT(report.elements, 0);
  EXPECT_EQ(report.device, rt.device_name());
  // The operation's own kernel through the launch path of applications.
  EXPECT_EQ(launch_and_check(rt, op, 7), "") << family.spec << " [" << op.config() << "]";
}

INSTANTIATE_TEST_SUITE_P(Families, GpuFamily, ::testing::ValuesIn(kFamilies),
                         [](const auto &info) { return std::string(info.param.name); });

} // namespace
} // namespace tcjit::gpu_test
