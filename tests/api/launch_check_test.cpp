// The checks before a launch (include/tcjit/tcjit.hpp, GemmArgs/ConvArgs; tcjit.h): sizes against
// the prepared spec, null pointers for the operands the spec uses, and each pointer's alignment
// against the kernel's vector widths — in the words of the API the launch came from.
#include "emu_runtime_test_base.h"
#include "expect_error.h"
#include "tcjit/tcjit.h"
#include "tcjit/tcjit.hpp"

#include "compiler/reference/gemm_geometry.h"
#include "compiler/reference/gemm_reference.h"
#include "compiler/reference/random_fill.h"
#include "compiler/reference/tolerance.h"
#include "compiler/spec/printer.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <filesystem>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

// f16 operands of 64 elements per row: the default kernel reads A and B in 8-element (16-byte)
// vectors.
constexpr const char *f16_gemm = "gemm m=64 n=64 k=64 a=f16:row b=f16:col c=f16:row acc=f32";

class LaunchCheckTest : public tcjit::testing::EmuRuntimeTest {};

// Device buffers of a GEMM's operands with each base pointer `offset` bytes past the start of its
// allocation (256-byte aligned), filled with random values; D = C.
struct OffsetBuffers {
  tcjit::DeviceAddress a = 0, b = 0, c = 0;          // allocations
  tcjit::DeviceAddress a_at = 0, b_at = 0, c_at = 0; // the pointers launched
};

std::vector<std::byte> random_bytes(tcjit::DType t, int64_t count, uint64_t seed) {
  std::vector<std::byte> v(static_cast<size_t>((count * tcjit::dtype_bits(t) + 7) / 8));
  tcjit::fill_random(t, v.data(), count, seed);
  return v;
}

// Launches `op` (a concrete f16 GEMM without bias, beta 0) with A, B and C/D offset by the bytes
// given, and checks D against the CPU reference.
void expect_offset_launch_matches(tcjit::Runtime &rt, const tcjit::Operation &op, int a_offset,
                                  int b_offset, int c_offset) {
  const tcjit::OpSpec &spec = op.spec();
  const tcjit::GemmGeometry geo = tcjit::gemm_geometry(spec);
  const auto a = random_bytes(geo.a.dtype, geo.batch * geo.a.batch_stride, 21);
  const auto b = random_bytes(geo.b.dtype, geo.batch * geo.b.batch_stride, 22);
  const auto c = random_bytes(geo.c.dtype, geo.batch * geo.c.batch_stride, 23);
  std::vector<std::byte> expected_c = c;
  const tcjit::MathMode math =
      tcjit::resolve_math(spec.math, tcjit::tf32_disabled_by_environment());
  const tcjit::ReferenceResult ref =
      tcjit::reference_gemm(spec, {a.data(), b.data(), expected_c.data(), nullptr}, math);
  auto upload = [&](const std::vector<std::byte> &host, int offset, tcjit::DeviceAddress &base) {
    base = rt.allocate(host.size() + 64);
    rt.copy_to_device(base + offset, host.data(), host.size());
    return base + offset;
  };
  tcjit::DeviceAddress da = 0, db = 0, dc = 0;
  const tcjit::DeviceAddress pa = upload(a, a_offset, da), pb = upload(b, b_offset, db),
                             pc = upload(c, c_offset, dc);
  op.launch({pa, pb, pc, pc, 0});
  std::vector<std::byte> out(c.size());
  rt.copy_to_host(out.data(), pc, out.size());
  for (tcjit::DeviceAddress p : {da, db, dc})
    rt.free(p);
  const tcjit::CompareReport report = tcjit::compare_with_reference(spec, math, out.data(), ref);
  EXPECT_TRUE(report.ok()) << tcjit::print_spec(spec) << ": " << report.summary();
  EXPECT_EQ(report.count, geo.m * geo.n * geo.batch);
}

// Compiles and stores f16_gemm's kernel, so that a MissPolicy::fail runtime finds it.
void store_kernel(const tcjit::RuntimeOptions &options) {
  tcjit::Runtime rt(options);
  (void)rt.prepare(f16_gemm);
}

TEST_F(LaunchCheckTest, MisalignedPointerRefusedUnderFailWithTheOperandAndTheFix) {
  store_kernel(options());
  tcjit::Runtime rt(options(tcjit::MissPolicy::fail));
  const tcjit::Operation op = rt.prepare(f16_gemm);
  ASSERT_NE(op.config().find("va8"), std::string::npos) << op.config();
  const tcjit::DeviceAddress buf = rt.allocate(64 * 64 * 2 + 16);
  const tcjit::DeviceAddress other = rt.allocate(64 * 64 * 2);
  try {
    op.launch({buf + 2, other, 0, other, 0});
    FAIL() << "a pointer 2 bytes off was launched";
  } catch (const tcjit::Error &e) {
    EXPECT_EQ(e.code(), tcjit::ErrorCode::invalid_argument);
    EXPECT_EQ(e.where(), "launch");
    const std::string what = e.problem();
    EXPECT_NE(what.find("GemmArgs::a"), std::string::npos) << what;
    EXPECT_NE(what.find("aligned to 2 bytes"), std::string::npos) << what;
    EXPECT_NE(what.find("16-byte alignment"), std::string::npos) << what;
    EXPECT_NE(e.how_to_fix().find("aligned to 16 bytes"), std::string::npos) << e.how_to_fix();
    EXPECT_NE(e.how_to_fix().find("a MissPolicy other than fail"), std::string::npos)
        << e.how_to_fix();
  }
  // D (written in the kernel's C vectors) likewise.
  tcjit::testing::expect_error(
      [&] {
        op.launch({other, other, 0, buf + 2, 0});
      },
      tcjit::ErrorCode::invalid_argument, "GemmArgs::d");
  // A pointer not even aligned to its element size.
  tcjit::testing::expect_error(
      [&] {
        op.launch({other, buf + 1, 0, other, 0});
      },
      tcjit::ErrorCode::invalid_argument, "GemmArgs::b");
  rt.free(buf);
  rt.free(other);
}

TEST_F(LaunchCheckTest, NullPointersOfUsedOperandsRefused) {
  tcjit::Runtime rt(options());
  const tcjit::Operation op = rt.prepare(f16_gemm);
  const tcjit::DeviceAddress buf = rt.allocate(64 * 64 * 2);
  tcjit::testing::expect_error(
      [&] {
        op.launch({0, buf, 0, buf, 0});
      },
      tcjit::ErrorCode::invalid_argument, "GemmArgs::a is 0");
  tcjit::testing::expect_error(
      [&] {
        op.launch({buf, buf, 0, 0, 0});
      },
      tcjit::ErrorCode::invalid_argument, "GemmArgs::d is 0");
  const tcjit::Operation with_c =
      rt.prepare(std::string(f16_gemm) + " beta=1 bias=col"); // reads C and the bias
  tcjit::testing::expect_error(
      [&] {
        with_c.launch({buf, buf, buf, buf, 0});
      },
      tcjit::ErrorCode::invalid_argument, "GemmArgs::bias is 0");
  rt.free(buf);
}

TEST_F(LaunchCheckTest, SizesOutsideThePreparedSpecRefused) {
  tcjit::Runtime rt(options());
  const tcjit::Operation ranged =
      rt.prepare("gemm m=1..256 n=64 k=64 a=f16:row b=f16:col c=f16:row acc=f32");
  const tcjit::DeviceAddress buf = rt.allocate(300 * 64 * 2);
  tcjit::GemmArgs args{buf, buf, 0, buf, 0};
  args.m = 300;
  tcjit::testing::expect_error([&] { ranged.launch(args); }, tcjit::ErrorCode::invalid_argument,
                               "GemmArgs::m = 300 is outside the prepared range m=1..256");
  const tcjit::Operation fixed = rt.prepare(f16_gemm);
  args.m = 32;
  tcjit::testing::expect_error([&] { fixed.launch(args); }, tcjit::ErrorCode::invalid_argument,
                               "GemmArgs::m = 32, but the operation was prepared for m=64");
  args.m = 0;
  args.k = -1;
  tcjit::testing::expect_error([&] { fixed.launch(args); }, tcjit::ErrorCode::invalid_argument,
                               "GemmArgs::k = -1 is negative");
  rt.free(buf);
}

TEST_F(LaunchCheckTest, ConvolutionPointersCheckedInConvArgsWords) {
  tcjit::Runtime rt(options());
  const tcjit::Operation op = rt.prepare(
      "conv2d n=1 h=8 w=8 c=16 k=16 r=3 s=3 pad=1 x=f16:nhwc filter=f16:krsc y=f16:nhwc");
  const tcjit::DeviceAddress buf = rt.allocate(16 * 16 * 9 * 2 + 16);
  tcjit::testing::expect_error(
      [&] {
        op.launch_conv({0, buf, buf, 0});
      },
      tcjit::ErrorCode::invalid_argument, "ConvArgs::x is 0");
  tcjit::testing::expect_error(
      [&] {
        op.launch_conv({buf + 2, buf, buf, 0});
      },
      tcjit::ErrorCode::invalid_argument, "ConvArgs::x (f16) is aligned");
  rt.free(buf);
}

// The C API says the same in its own words: the C function and its parameter names.
TEST_F(LaunchCheckTest, CApiChecksInItsOwnWords) {
  store_kernel(options());
  const std::string path = db_path_.string();
  tcjit_runtime_options o{};
  o.db_path = path.c_str();
  o.device = "emu";
  o.on_miss = TCJIT_MISS_FAIL;
  tcjit_runtime *rt = nullptr;
  ASSERT_EQ(tcjit_runtime_open(&o, &rt), TCJIT_OK) << tcjit_last_error_message();
  tcjit_operation *op = nullptr;
  ASSERT_EQ(tcjit_prepare(rt, f16_gemm, &op), TCJIT_OK) << tcjit_last_error_message();
  tcjit_device_ptr buf = 0;
  ASSERT_EQ(tcjit_malloc(rt, 300 * 64 * 2 + 16, &buf), TCJIT_OK);

  auto expect_refused = [](tcjit_status status, const std::string &needle) {
    EXPECT_EQ(status, TCJIT_ERROR_INVALID_ARGUMENT);
    const std::string message = tcjit_last_error_message();
    EXPECT_NE(message.find(needle), std::string::npos) << message;
    EXPECT_EQ(message.find("GemmArgs"), std::string::npos) << message;
    EXPECT_EQ(message.find("Runtime::"), std::string::npos) << message;
  };
  expect_refused(tcjit_launch_gemm(op, buf + 2, buf, 0, buf, 0, nullptr),
                 "tcjit_launch_gemm: parameter a (f16) is aligned to 2 bytes");
  EXPECT_NE(std::string(tcjit_last_error_message()).find("tcjit_malloc"), std::string::npos);
  EXPECT_NE(std::string(tcjit_last_error_message()).find("on_miss other than TCJIT_MISS_FAIL"),
            std::string::npos);
  expect_refused(tcjit_launch_gemm(op, 0, buf, 0, buf, 0, nullptr),
                 "tcjit_launch_gemm: parameter a is 0");
  expect_refused(tcjit_launch_gemm_sized(op, 32, 0, 0, 0, buf, buf, 0, buf, 0, nullptr),
                 "tcjit_launch_gemm_sized: parameter m = 32");

  // A size outside a prepared range (a runtime of its own, which compiles on a miss).
  o.on_miss = TCJIT_MISS_HEURISTIC;
  tcjit_runtime *compiling = nullptr;
  ASSERT_EQ(tcjit_runtime_open(&o, &compiling), TCJIT_OK) << tcjit_last_error_message();
  tcjit_operation *ranged = nullptr;
  ASSERT_EQ(
      tcjit_prepare(compiling, "gemm m=1..256 n=64 k=64 a=f16:row b=f16:col c=f16:row", &ranged),
      TCJIT_OK)
      << tcjit_last_error_message();
  tcjit_device_ptr big = 0;
  ASSERT_EQ(tcjit_malloc(compiling, 300 * 64 * 2, &big), TCJIT_OK);
  expect_refused(tcjit_launch_gemm_sized(ranged, 300, 0, 0, 0, big, big, 0, big, 0, nullptr),
                 "parameter m = 300 is outside the prepared range m=1..256");
  // Under TCJIT_MISS_HEURISTIC a pointer 2 bytes off is served (the emulator's sanitizer would
  // fail a misaligned vector read).
  EXPECT_EQ(tcjit_launch_gemm_sized(ranged, 64, 0, 0, 0, big + 2, big + 2, 0, big + 2, 0, nullptr),
            TCJIT_OK)
      << tcjit_last_error_message();
  tcjit_free(compiling, big);
  tcjit_operation_release(ranged);
  tcjit_runtime_close(compiling);
  tcjit_operation_release(op);
  tcjit_free(rt, buf);
  tcjit_runtime_close(rt);
}

// Under the other policies a pointer 2 bytes off a 16-byte boundary gets a kernel for its
// alignment (narrower vectors), and the result is right; so do C/D and B at other offsets, and a
// second launch at the same alignment (the kernel kept by the runtime).
TEST_F(LaunchCheckTest, LessAlignedPointersServedByAKernelForTheirAlignment) {
  tcjit::Runtime rt(options());
  const tcjit::Operation op = rt.prepare(f16_gemm);
  ASSERT_NE(op.config().find("va8 vb8"), std::string::npos) << op.config();
  {
    SCOPED_TRACE("a 2 bytes off");
    expect_offset_launch_matches(rt, op, 2, 0, 0);
  }
  {
    SCOPED_TRACE("a, b and c/d off by 2, 4 and 8 bytes");
    expect_offset_launch_matches(rt, op, 2, 4, 8);
  }
  {
    SCOPED_TRACE("again");
    expect_offset_launch_matches(rt, op, 2, 0, 0);
  }
  // Batched, column-major operands with C read (beta=1), each pointer off by a different amount.
  const tcjit::Operation batched = rt.prepare(
      "gemm m=48 n=40 k=64 batch=2 a=f16:col b=f16:row c=f16:col acc=f32 beta=1 act=relu");
  {
    SCOPED_TRACE("batched column-major, off by 2, 6 and 4 bytes");
    expect_offset_launch_matches(rt, batched, 2, 6, 4);
  }
  // The operation's own kernel still serves aligned pointers, and pointers offset by whole
  // vectors.
  expect_offset_launch_matches(rt, op, 0, 0, 0);
  expect_offset_launch_matches(rt, op, 16, 32, 48);
  EXPECT_NE(op.config().find("va8 vb8"), std::string::npos) << op.config();
}

} // namespace
