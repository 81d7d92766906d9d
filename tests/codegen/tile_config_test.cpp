// TileConfig rules: every illegal config is rejected with the field and the rule; defaults are
// valid for every supported dtype; the text form round-trips.
#include "compiler/codegen/plan/kernel_plan.h"
#include "compiler/codegen/plan/tile_config.h"
#include "compiler/dsl/parser.h"
#include "compiler/target/mma_table.h"

#include <gtest/gtest.h>

#include <tuple>

namespace tcjit::codegen {
namespace {

OpSpec spec_of(const std::string &text) {
  ParseResult r = parse_spec(text);
  EXPECT_TRUE(r.ok()) << text;
  return r.entries.at(0).spec;
}

const OpSpec kF16 = spec_of("gemm m=512 n=512 k=512 a=f16:row b=f16:col c=f16:row acc=f32");

// The single error a config produces (fails when there are none or several).
ConfigError only_error(const TileConfig &c, const OpSpec &spec = kF16,
                       std::string_view arch = "sm_80") {
  auto e = validate_tile_config(spec, c, arch, false);
  EXPECT_EQ(e.size(), 1u) << to_string(c);
  return e.empty() ? ConfigError{} : e[0];
}

TEST(TileConfig, DefaultIsValidForEveryDtype) {
  for (const char *s : {"gemm m=512 n=512 k=512 a=f16:row b=f16:col c=f16:row acc=f32",
                        "gemm m=512 n=512 k=512 a=bf16:col b=bf16:row c=f32:row acc=f32",
                        "gemm m=512 n=512 k=512 a=f32 b=f32 c=f32 acc=f32 math=tf32",
                        "gemm m=512 n=512 k=512 a=s8 b=s8:col c=s32 acc=s32",
                        "gemm m=512 n=512 k=512 a=f64 b=f64 c=f64 acc=f64",
                        "gemm m=16 n=8 k=512 a=f16 b=f16 c=f16 acc=f32",
                        "gemm m=512 n=512 k=512 a=f32 b=f32 c=f32 acc=f32 math=f32",
                        "gemm m=? n=4096 k=4096 a=f16 b=f16:col c=f16 acc=f32"}) {
    const OpSpec spec = spec_of(s);
    for (std::string_view arch : {"sm_80", "sm_86", "sm_89", "sm_90"}) {
      const TileConfig c = default_tile_config(spec, arch, false);
      EXPECT_TRUE(validate_tile_config(spec, c, arch, false).empty()) << s << " " << to_string(c);
      EXPECT_GT(c.vec_a, 0);
      EXPECT_GT(c.vec_b, 0);
    }
  }
}

TEST(TileConfig, DefaultsByShape) {
  EXPECT_EQ(default_tile_config(kF16, "sm_80", false),
            (TileConfig{128, 128, 32, 64, 64, 3, 1, 1, 8, 8}));
  const TileConfig small = default_tile_config(
      spec_of("gemm m=32 n=32 k=512 a=f16 b=f16:col c=f16 acc=f32"), "sm_80", false);
  EXPECT_EQ(small.bm, 64);
  EXPECT_EQ(small.bn, 64);
  // alignment 1 (k odd) -> vector width 1
  const TileConfig odd = default_tile_config(
      spec_of("gemm m=64 n=64 k=63 a=f16 b=f16:col c=f16 acc=f32"), "sm_80", false);
  EXPECT_EQ(odd.vec_a, 1);
  EXPECT_EQ(odd.vec_b, 1);
  // narrow vectors of 16-bit types start from a 32-row warp tile (64x64 spills there)
  EXPECT_EQ(odd.wm, 32);
  EXPECT_EQ(odd.wn, 32); // a 64-wide CTA tile already
  const TileConfig k31 = default_tile_config(
      spec_of("gemm m=128 n=128 k=31 a=f16 b=f16:col c=f16 acc=f32"), "sm_80", false);
  EXPECT_EQ(k31, (TileConfig{128, 128, 32, 32, 64, 3, 1, 1, 1, 1}));
}

TEST(TileConfig, FallbacksStartWithTheDefaultAndNeedFewerRegisters) {
  for (const char *s : {"gemm m=512 n=512 k=512 a=f16:row b=f16:col c=f16:row acc=f32",
                        "gemm m=512 n=512 k=512 a=f32 b=f32 c=f32 acc=f32 math=tf32",
                        "gemm m=512 n=512 k=512 a=s8 b=s8:col c=s32 acc=s32",
                        "gemm m=127 n=129 k=31 a=f16 b=f16:col c=f16 acc=f32 act=swish",
                        "gemm m=512 n=512 k=512 a=f64 b=f64 c=f64 acc=f64"}) {
    const OpSpec spec = spec_of(s);
    const std::vector<TileConfig> all = default_tile_configs(spec, "sm_80", false);
    ASSERT_GE(all.size(), 2u) << s;
    EXPECT_EQ(all.front(), default_tile_config(spec, "sm_80", false)) << s;
    for (size_t i = 0; i < all.size(); ++i) {
      EXPECT_TRUE(validate_tile_config(spec, all[i], "sm_80", false).empty())
          << s << " " << to_string(all[i]);
      for (size_t j = 0; j < i; ++j)
        EXPECT_NE(all[i], all[j]) << s << ": " << to_string(all[i]) << " twice";
      if (i > 0) { // accumulators per thread never grow along the list
        EXPECT_LE(all[i].wm * all[i].wn, all[i - 1].wm * all[i - 1].wn) << s;
      }
    }
  }
  const std::vector<TileConfig> f16 = default_tile_configs(kF16, "sm_80", false);
  EXPECT_EQ(f16[1], (TileConfig{128, 128, 32, 32, 64, 3, 1, 1, 8, 8}));
}

TEST(TileConfig, PowersOfTwoInRange) {
  TileConfig c;
  c.bm = 96;
  EXPECT_EQ(only_error(c).field, "bm");
  c = TileConfig{};
  c.bn = 512;
  EXPECT_EQ(only_error(c).field, "bn");
  c = TileConfig{};
  c.bk = 8; // below the mma k of 16
  const ConfigError e = only_error(c);
  EXPECT_EQ(e.field, "bk");
  EXPECT_NE(e.message.find("[16, 128]"), std::string::npos) << e.message;
}

TEST(TileConfig, WarpTileFitsCta) {
  TileConfig c;
  c.wm = 256;
  c.bm = 128;
  EXPECT_EQ(validate_tile_config(kF16, c, "sm_80", false).at(0).field, "wm");
  c = TileConfig{256, 128, 32, 16, 16, 3};
  // 16 x 8 = 128 warps
  EXPECT_NE(only_error(c).message.find("warps per CTA"), std::string::npos);
}

TEST(TileConfig, AccumulatorRegisterLimit) {
  TileConfig c{256, 128, 32, 128, 128, 3};
  const ConfigError e = only_error(c);
  EXPECT_NE(e.message.find("accumulator registers"), std::string::npos) << e.message;
}

TEST(TileConfig, Stages) {
  TileConfig c;
  c.stages = 1;
  EXPECT_EQ(only_error(c).field, "stages");
  c.stages = 7;
  EXPECT_EQ(only_error(c).field, "stages");
  c.stages = 6; // 6 * 16 KiB = 96 KiB: fine on sm_80 (163 KiB), sm_86 (99 KiB)
  EXPECT_TRUE(validate_tile_config(kF16, c, "sm_86", false).empty());
}

TEST(TileConfig, SharedMemoryLimitPerArch) {
  TileConfig c{256, 256, 64, 64, 64, 4}; // 4 * (256+256)*64*2 = 256 KiB
  const ConfigError e = only_error(c);
  EXPECT_EQ(e.field, "stages");
  EXPECT_NE(e.message.find("262144"), std::string::npos) << e.message;
  TileConfig fits{128, 128, 64, 64, 64, 4}; // 128 KiB: sm_80 yes, sm_86 no
  EXPECT_TRUE(validate_tile_config(kF16, fits, "sm_80", false).empty());
  EXPECT_EQ(validate_tile_config(kF16, fits, "sm_86", false).size(), 1u);
  EXPECT_EQ(shared_bytes(kF16, fits), 131072);
}

TEST(TileConfig, VectorWidthsFollowAlignment) {
  TileConfig c;
  c.vec_a = 16; // 32 bytes
  EXPECT_EQ(only_error(c).field, "vec_a");
  c.vec_a = 3;
  EXPECT_EQ(only_error(c).field, "vec_a");
  const OpSpec odd = spec_of("gemm m=64 n=64 k=66 a=f16 b=f16:col c=f16 acc=f32");
  c = TileConfig{};
  c.vec_b = 4; // k=66 allows 2
  const ConfigError e = only_error(c, odd);
  EXPECT_EQ(e.field, "vec_b");
  EXPECT_NE(e.message.find("alignment"), std::string::npos);
}

TEST(TileConfig, SplitKAndRasterRanges) {
  TileConfig c;
  c.split_k = 17;
  EXPECT_EQ(only_error(c).field, "split_k");
  c.split_k = 16;
  EXPECT_TRUE(validate_tile_config(kF16, c, "sm_80", false).empty());
  c = TileConfig{};
  c.raster_group = 65;
  EXPECT_EQ(only_error(c).field, "raster_group");
  c.raster_group = 0;
  EXPECT_EQ(only_error(c).field, "raster_group");
  c.raster_group = 8;
  EXPECT_TRUE(validate_tile_config(kF16, c, "sm_80", false).empty());
}

TEST(TileConfig, SpecLimits) {
  // math=f32 (and math=auto under NVIDIA_TF32_OVERRIDE=0) is the SIMT FFMA kernel
  const OpSpec f32auto = spec_of("gemm m=8 n=8 k=8 a=f32 b=f32 c=f32 acc=f32");
  EXPECT_TRUE(check_codegen_support(f32auto, "sm_80", false).empty());
  EXPECT_TRUE(check_codegen_support(f32auto, "sm_80", true).empty());
  EXPECT_EQ(math_form(f32auto, true).kind, MmaKind::simt_f32);
  EXPECT_EQ(math_form(f32auto, false).kind, MmaKind::tf32_f32);
  // Convolutions: channels-last tensors are generated; channels-first ones are refused with the
  // conversion to make.
  EXPECT_TRUE(check_codegen_support(spec_of("conv2d n=1 h=8 w=8 c=8 k=8 r=3 s=3 pad=1 x=f16:nhwc"),
                                    "sm_80", false)
                  .empty());
  const auto nchw = check_codegen_support(
      spec_of("conv2d n=1 h=8 w=8 c=8 k=8 r=3 s=3 pad=1 x=f16:nchw"), "sm_80", false);
  ASSERT_FALSE(nchw.empty());
  EXPECT_NE(nchw[0].message.find("x is nchw"), std::string::npos) << nchw[0].message;
  EXPECT_NE(nchw[0].message.find("channels_last"), std::string::npos) << nchw[0].message;
  EXPECT_NE(nchw[0].message.find("x=f16:nhwc"), std::string::npos) << nchw[0].message;
  // Coordinates the kernels' 32-bit arithmetic cannot hold are refused, not wrapped.
  const auto huge = check_codegen_support(
      spec_of("conv2d n=1 h=1500000000 w=1 c=8 k=8 r=1 s=1 stride=2 x=f16"), "sm_80", false);
  ASSERT_FALSE(huge.empty());
  EXPECT_NE(huge[0].message.find("the coordinates along h (input + pad + output * stride + "
                                 "filter * dilation = 3000000001) exceed the kernels' 32-bit"),
            std::string::npos)
      << huge[0].message;
  EXPECT_TRUE(check_codegen_support(spec_of("conv2d n=1 h=1000000000 w=1 c=8 k=8 r=1 s=1 x=f16"),
                                    "sm_80", false)
                  .empty());
  EXPECT_EQ(check_codegen_support(kF16, "sm_75", false).at(0).field, "arch");
}

TEST(TileConfig, TextRoundTrip) {
  TileConfig c{64, 256, 64, 32, 64, 5, 1, 1, 4, 8};
  TileConfig back;
  std::string err;
  ASSERT_TRUE(parse_tile_config(to_string(c), back, err)) << err;
  EXPECT_EQ(back, c);
  TileConfig partial;
  ASSERT_TRUE(parse_tile_config("64x64x32 s4", partial, err));
  EXPECT_EQ(partial.bm, 64);
  EXPECT_EQ(partial.stages, 4);
  EXPECT_EQ(partial.wm, 64);
  EXPECT_FALSE(parse_tile_config("64x64", partial, err));
  EXPECT_NE(err.find("64x64"), std::string::npos);
  EXPECT_FALSE(parse_tile_config("z3", partial, err));
}

TEST(MmaTable, FormsAndFragmentMaps) {
  // every form is generated; f16 accumulation has two f16x2 accumulator registers, widened to
  // the four f32 of f16->f32 after the main loop
  for (const MmaForm &f : mma_forms())
    EXPECT_EQ(f.not_generated, "") << f.ptx;
  auto f16acc = find_mma_form(DType::f16, DType::f16, MathMode::tf32);
  ASSERT_TRUE(f16acc);
  EXPECT_EQ(f16acc->c_regs, 2);
  EXPECT_EQ(accumulators_after_main_loop(*f16acc).regs, 4);
  EXPECT_EQ(accumulators_after_main_loop(*f16acc).acc, DType::f32);
  // mixed 8-bit pairs: A and B of their own types, the 8-bit fragment map
  auto su = find_mma_form(MathRequest{DType::s8, DType::u8, DType::s32, MathMode::tf32});
  ASSERT_TRUE(su);
  EXPECT_EQ(su->ptx, "mma.sync.aligned.m16n8k32.row.col.s32.s8.u8.s32");
  EXPECT_EQ(su->intrinsic, "llvm.nvvm.mma.m16n8k32.row.col.s8.u8");
  EXPECT_EQ(a_offset(*su, 9).col, 17);
  auto us = find_mma_form(MathRequest{DType::u8, DType::s8, DType::s32, MathMode::tf32});
  ASSERT_TRUE(us);
  EXPECT_EQ(us->ptx, "mma.sync.aligned.m16n8k32.row.col.s32.u8.s8.s32");
  EXPECT_FALSE(find_mma_form(MathRequest{DType::s8, DType::f16, DType::s32, MathMode::tf32}));
  // the four fp8 pairs (sm_89, PTX 8.4), on the s8 fragment map
  const auto fp8 = find_mma_form(MathRequest{DType::e5m2, DType::e4m3, DType::f32});
  ASSERT_TRUE(fp8);
  EXPECT_EQ(fp8->ptx, "mma.sync.aligned.m16n8k32.row.col.f32.e5m2.e4m3.f32");
  EXPECT_EQ(a_offset(*fp8, 9).col, 17); // the s8 map
  EXPECT_EQ(fp8->min_sm, 89);
  EXPECT_EQ(fp8->min_ptx, 84);
  auto u8 = find_mma_form(DType::u8, DType::s32, MathMode::tf32);
  ASSERT_TRUE(u8);
  EXPECT_EQ(u8->ptx, "mma.sync.aligned.m16n8k32.row.col.s32.u8.u8.s32");
  EXPECT_EQ(a_offset(*u8, 9).col, 17); // the s8 map
  auto f16 = find_mma_form(DType::f16, DType::f32, MathMode::tf32);
  ASSERT_TRUE(f16);
  EXPECT_EQ(f16->ptx, "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32");
  // a4 of m16n8k16: row g, col 2q + 8 (ptx-fragments.md)
  EXPECT_EQ(a_offset(*f16, 4).row, 0);
  EXPECT_EQ(a_offset(*f16, 4).col, 8);
  EXPECT_EQ(a_offset(*f16, 2).row, 8);
  EXPECT_EQ(b_k_offset(*f16, 3), 9);
  auto tf32 = find_mma_form(DType::f32, DType::f32, MathMode::tf32);
  ASSERT_TRUE(tf32);
  EXPECT_EQ(tf32->k, 8);
  EXPECT_EQ(a_offset(*tf32, 1).row, 8); // a1: row g+8, col q (not the f16 order)
  EXPECT_EQ(a_offset(*tf32, 2).col, 4);
  EXPECT_FALSE(find_mma_form(DType::f32, DType::f32, MathMode::f32));
  auto s8 = find_mma_form(DType::s8, DType::s32, MathMode::tf32);
  ASSERT_TRUE(s8);
  EXPECT_EQ(a_offset(*s8, 9).col, 17);
  EXPECT_EQ(a_offset(*s8, 4).row, 8);
  auto f64 = find_mma_form(DType::f64, DType::f64, MathMode::tf32);
  ASSERT_TRUE(f64);
  EXPECT_EQ(c_offset(*f64, 1).col, 1);
}

// The packed forms' fragments (PTX ISA m16n8k64 s4, m16n8k256 b1), read in bytes along K, are the
// m16n8k32 s8 map: byte j of a register holds elements j * per_byte.. of one row and K run, at
// byte column (element column) / per_byte. This is what lets the kernel load them as s8 bytes.
TEST(MmaTable, PackedFragmentsAreTheS8MapInBytes) {
  const auto s8 = find_mma_form(DType::s8, DType::s32, MathMode::tf32);
  ASSERT_TRUE(s8);
  for (const auto &[a, b, bop, per_byte] : {std::tuple{DType::s4, DType::s4, BitOp::and_popc, 2},
                                            std::tuple{DType::u4, DType::s4, BitOp::and_popc, 2},
                                            std::tuple{DType::b1, DType::b1, BitOp::and_popc, 8},
                                            std::tuple{DType::b1, DType::b1, BitOp::xor_popc, 8}}) {
    MathRequest r{a, b, DType::s32, MathMode::tf32, Sparsity::dense, bop};
    const auto f = find_mma_form(r);
    ASSERT_TRUE(f) << to_string(a);
    EXPECT_EQ(f->bop, bop);
    EXPECT_EQ(f->k, s8->k * per_byte);
    EXPECT_EQ(elements_per_reg(*f), 4 * per_byte);
    for (int j = 0; j < s8->a_regs * 4; ++j)
      for (int e = 0; e < per_byte; ++e) {
        const FragOffset packed = a_offset(*f, j * per_byte + e), bytes = a_offset(*s8, j);
        EXPECT_EQ(packed.row, bytes.row) << j;
        EXPECT_EQ(packed.col, bytes.col * per_byte + e) << j;
      }
    for (int j = 0; j < s8->b_regs * 4; ++j)
      for (int e = 0; e < per_byte; ++e)
        EXPECT_EQ(b_k_offset(*f, j * per_byte + e), b_k_offset(*s8, j) * per_byte + e) << j;
    EXPECT_EQ(a_q_multiplier(*f), a_q_multiplier(*s8) * per_byte);
  }
  // the plan's byte view: s4 K-tiles of 128 values are 64-byte rows, the mma 32 bytes deep
  const OpSpec s4 = spec_of("gemm m=64 n=64 k=256 a=s4 b=s4:col c=s32 acc=s32");
  TileConfig c{64, 64, 128, 32, 32, 3, 1, 1, 0, 0};
  c = resolve_vectors(s4, c);
  ASSERT_TRUE(validate_tile_config(s4, c, "sm_80", false).empty());
  const KernelPlan p = plan_kernel(s4, c, "sm_80", false);
  EXPECT_EQ(p.k_pack, 2);
  EXPECT_EQ(p.mma.k, 32);
  EXPECT_EQ(p.k_steps, 2);
  EXPECT_EQ(p.a.cols, 64);
  EXPECT_EQ(p.a.row_bytes, 64);
  EXPECT_EQ(p.a.vec, 16); // 32 values
  EXPECT_EQ(vector_elements(p, p.a), 32);
  EXPECT_EQ(p.a.load, FragmentLoad::ldmatrix);
  EXPECT_EQ(shared_bytes(s4, c), 3 * (64 + 64) * 128 / 2);
  EXPECT_EQ(p.smem_bytes, shared_bytes(s4, c));
}

// The 2:4-sparse forms (mma.sp m16n8k32): A is the compressed 16 x 16 tile in the m16n8k16 map,
// B k = 2q + (i & 1) + 8 (i >> 1) (PTX ISA, sparse m16n8k32 f16 fragments), their fragments load
// as the dense twin's; a dense request never finds them, nor a sparse request a dense form.
TEST(MmaTable, SparseFormsAndTheirDenseTwins) {
  for (const DType t : {DType::f16, DType::bf16}) {
    const auto sp = find_mma_form(
        MathRequest{t, t, DType::f32, MathMode::tf32, Sparsity::two_four, BitOp::and_popc});
    ASSERT_TRUE(sp);
    EXPECT_TRUE(sp->sparse);
    EXPECT_EQ(sp->k, 32);
    EXPECT_EQ(sp->min_ptx, 71);
    EXPECT_EQ(sp->b_regs, 4);
    EXPECT_EQ(a_offset(*sp, 5).col, 9); // compressed column 2q + 1 + 8
    EXPECT_EQ(a_offset(*sp, 2).row, 8);
    EXPECT_EQ(b_k_offset(*sp, 4), 16);
    EXPECT_EQ(b_k_offset(*sp, 7), 25);
    const MmaForm &twin = dense_twin(*sp);
    EXPECT_FALSE(twin.sparse);
    EXPECT_EQ(twin.k, 16);
    EXPECT_EQ(twin.a, t);
    EXPECT_FALSE(find_mma_form(t, DType::f32, MathMode::tf32)->sparse);
  }
  const auto s8 = find_mma_form(MathRequest{DType::s8, DType::s8, DType::s32, MathMode::tf32,
                                            Sparsity::two_four, BitOp::and_popc});
  ASSERT_TRUE(s8); // m16n8k64: A the m16n8k32 8-bit map, B k = 4q + (i & 3) + 16 (i >> 2)
  EXPECT_EQ(s8->k, 64);
  EXPECT_EQ(a_offset(*s8, 9).col, 17);
  EXPECT_EQ(b_k_offset(*s8, 9), 33);
  EXPECT_EQ(dense_twin(*s8).k, 32);
  // tf32 (f32 inputs multiplied as tf32): mma.sp m16n8k16, 1:2 in hardware; f32 math and f64
  // have no sparse form
  const auto tf32 = find_mma_form(MathRequest{DType::f32, DType::f32, DType::f32, MathMode::tf32,
                                              Sparsity::two_four, BitOp::and_popc});
  ASSERT_TRUE(tf32);
  EXPECT_TRUE(tf32->sparse);
  EXPECT_EQ(tf32->k, 16);
  EXPECT_FALSE(find_mma_form(MathRequest{DType::f32, DType::f32, DType::f32, MathMode::f32,
                                         Sparsity::two_four, BitOp::and_popc}));
  EXPECT_FALSE(find_mma_form(MathRequest{DType::f64, DType::f64, DType::f64, MathMode::tf32,
                                         Sparsity::two_four, BitOp::and_popc}));
  EXPECT_EQ(kernel_ptx_version(
                *find_mma_form(MathRequest{DType::f16, DType::f16, DType::f32, MathMode::tf32,
                                           Sparsity::two_four, BitOp::and_popc}),
                *find_arch("sm_80")),
            71);
}

// The sparse s4/u4 forms (mma.sp m16n8k128, PTX ISA "Matrix fragments for sparse mma.m16n8k128
// with .u4/.s4"): read in bytes along K they are the sparse s8 form (m16n8k64): A's compressed
// map, B's map and the register counts, the 2 kept units of every 4 being bytes (pairs of values;
// the emulator's metadata geometry, 4 threads of a group and selector 0, is the same for both).
// The plan loads them as sparse s8 bytes: the byte view of the form and of its dense twin.
TEST(MmaTable, SparsePackedFragmentsAreTheSparseS8MapInBytes) {
  const auto s8 = find_mma_form(MathRequest{DType::s8, DType::s8, DType::s32, MathMode::tf32,
                                            Sparsity::two_four, BitOp::and_popc});
  ASSERT_TRUE(s8);
  for (const auto &[a, b] : {std::pair{DType::s4, DType::s4}, std::pair{DType::u4, DType::u4},
                             std::pair{DType::s4, DType::u4}, std::pair{DType::u4, DType::s4}}) {
    const auto f = find_mma_form(
        MathRequest{a, b, DType::s32, MathMode::tf32, Sparsity::two_four, BitOp::and_popc});
    ASSERT_TRUE(f) << to_string(a) << " x " << to_string(b);
    EXPECT_TRUE(f->sparse);
    EXPECT_EQ(f->k, 2 * s8->k);
    EXPECT_EQ(f->a, a);
    EXPECT_EQ(f->b, b);
    EXPECT_EQ(f->min_sm, 80);
    EXPECT_EQ(f->a_regs, s8->a_regs);
    EXPECT_EQ(f->b_regs, s8->b_regs);
    EXPECT_EQ(elements_per_reg(*f), 8);
    for (int j = 0; j < s8->a_regs * 4; ++j)
      for (int e = 0; e < 2; ++e) {
        const FragOffset packed = a_offset(*f, 2 * j + e), bytes = a_offset(*s8, j);
        EXPECT_EQ(packed.row, bytes.row) << j;
        EXPECT_EQ(packed.col, 2 * bytes.col + e) << j;
      }
    for (int j = 0; j < s8->b_regs * 4; ++j)
      for (int e = 0; e < 2; ++e)
        EXPECT_EQ(b_k_offset(*f, 2 * j + e), 2 * b_k_offset(*s8, j) + e) << j;
    EXPECT_EQ(a_q_multiplier(*f), 2 * a_q_multiplier(*s8));
    const MmaForm &twin = dense_twin(*f);
    EXPECT_FALSE(twin.sparse);
    EXPECT_EQ(twin.k, 64);
    EXPECT_EQ(twin.a, a);
    EXPECT_EQ(twin.b, b);
  }
  // the plan: K-tiles of 256 values are 128-byte rows of B and 64-byte compressed rows of A, the
  // mma 64 bytes deep with s8's sparse map; the fragments load as the dense s4 twin in bytes
  const OpSpec s4 = spec_of("gemm m=64 n=64 k=512 a=s4 b=u4:col c=s32 acc=s32 sparse=2:4");
  TileConfig c{64, 64, 256, 32, 32, 3, 1, 1, 0, 0};
  c = resolve_vectors(s4, c);
  ASSERT_TRUE(validate_tile_config(s4, c, "sm_80", false).empty());
  const KernelPlan p = plan_kernel(s4, c, "sm_80", false);
  EXPECT_EQ(p.k_pack, 2);
  EXPECT_TRUE(p.mma.sparse);
  EXPECT_EQ(p.mma.kind, MmaKind::sp_s4u4_s32);
  EXPECT_EQ(p.mma.k, 64);
  EXPECT_EQ(p.mma.elem_bits, 8);
  EXPECT_EQ(p.mma.fragments, FragmentMap::sp_m16n8k64_8bit);
  EXPECT_EQ(p.k_steps, 2);
  EXPECT_EQ(p.a.cols, 64);
  EXPECT_EQ(p.b.cols, 128);
  EXPECT_EQ(k_tile_extent(p), 128);
  const KernelPlan fp = fragment_plan(p);
  EXPECT_FALSE(fp.mma.sparse);
  EXPECT_EQ(fp.mma.k, 32);
  EXPECT_EQ(fp.mma.elem_bits, 8);
  EXPECT_EQ(fp.mma.fragments, FragmentMap::m16n8k32_8bit);
  // stages x (compressed A 64 x 64 bytes + B 64 x 128 bytes + metadata 64 rows x 128 / 8 bytes)
  EXPECT_EQ(shared_bytes(s4, c), 3 * ((64 * 128 + 64 * 256) / 2 + 64 * 128 / 8));
  EXPECT_EQ(p.smem_bytes, shared_bytes(s4, c));
  // s8's sparse plan of the same bytes: the same tiles and maps
  const OpSpec s8_spec = spec_of("gemm m=64 n=64 k=256 a=s8 b=s8:col c=s32 acc=s32 sparse=2:4");
  TileConfig c8{64, 64, 128, 32, 32, 3, 1, 1, 0, 0};
  c8 = resolve_vectors(s8_spec, c8);
  const KernelPlan p8 = plan_kernel(s8_spec, c8, "sm_80", false);
  EXPECT_EQ(p8.mma.k, p.mma.k);
  EXPECT_EQ(p8.mma.fragments, p.mma.fragments);
  EXPECT_EQ(p8.a.cols, p.a.cols);
  EXPECT_EQ(p8.b.cols, p.b.cols);
  EXPECT_EQ(k_tile_extent(p8), k_tile_extent(p));
  EXPECT_EQ(fragment_plan(p8).mma.fragments, fp.mma.fragments);
  EXPECT_EQ(fragment_plan(p8).mma.k, fp.mma.k);
}

// The swizzle maps the 8 rows of an ldmatrix phase (same 16-byte column) to 8 distinct 16-byte
// bank groups, for every row size; and it is a permutation of the tile.
TEST(KernelPlan, SwizzleIsConflictFreeAndBijective) {
  for (int row_bytes : {16, 32, 64, 128, 256, 512}) {
    OperandPlan op;
    op.esize = 2;
    op.row_bytes = row_bytes;
    op.cols = row_bytes / 2;
    op.rows = 64;
    std::vector<bool> seen(static_cast<size_t>(op.rows * row_bytes / 16), false);
    for (int r = 0; r < op.rows; ++r)
      for (int chunk = 0; chunk < row_bytes / 16; ++chunk) {
        const int64_t o = swizzled_offset(op, r, chunk * 8);
        ASSERT_EQ(o % 16, 0);
        ASSERT_FALSE(seen[static_cast<size_t>(o / 16)]) << row_bytes;
        seen[static_cast<size_t>(o / 16)] = true;
      }
    for (int r0 = 0; r0 < op.rows; r0 += 8)
      for (int chunk = 0; chunk < row_bytes / 16; ++chunk) {
        unsigned groups = 0;
        for (int r = r0; r < r0 + 8; ++r)
          groups |= 1u << ((swizzled_offset(op, r, chunk * 8) / 16) % 8);
        EXPECT_EQ(groups, 0xffu) << "row_bytes " << row_bytes << " rows " << r0;
      }
  }
}

// Every swizzle parameter pair is a permutation of the 16-byte chunks inside each 128-byte line
// (so any 8 consecutive 16-byte cp.async stores stay conflict-free) and keeps 16-byte alignment.
TEST(KernelPlan, EverySwizzleIsAPermutationInsideEachLine) {
  for (int row_bytes : {16, 32, 64, 128, 256, 512})
    for (int shift = 0; shift <= 3; ++shift)
      for (int spread = 0; spread <= 1; ++spread) {
        OperandPlan op;
        op.esize = 1;
        op.row_bytes = row_bytes;
        op.cols = row_bytes;
        op.rows = 64;
        op.swizzle_shift = shift;
        op.swizzle_spread = spread;
        for (int r = 0; r < op.rows; ++r)
          for (int chunk = 0; chunk < row_bytes / 16; ++chunk) {
            const int64_t plain = int64_t{r} * row_bytes + chunk * 16;
            const int64_t o = swizzled_offset(op, r, chunk * 16);
            ASSERT_EQ(o % 16, 0);
            ASSERT_EQ(o / 128, plain / 128) << row_bytes << " " << shift << " " << spread;
            for (int byte = 1; byte < 16; ++byte)
              ASSERT_EQ(swizzled_offset(op, r, chunk * 16 + byte), o + byte);
          }
        std::vector<bool> seen(static_cast<size_t>(op.rows * row_bytes / 16), false);
        for (int r = 0; r < op.rows; ++r)
          for (int chunk = 0; chunk < row_bytes / 16; ++chunk) {
            const auto at = static_cast<size_t>(swizzled_offset(op, r, chunk * 16) / 16);
            ASSERT_FALSE(seen[at]) << row_bytes << " " << shift << " " << spread;
            seen[at] = true;
          }
      }
}

// The parameters plan_kernel picks: none for ldmatrix and SIMT tiles; spread for 32/64-bit
// element-wise loads (tf32 m/n-contiguous, f64); a shift counting k rows 4 apart for s8
// m/n-contiguous tiles.
TEST(KernelPlan, SwizzleParametersFollowTheFragmentLoads) {
  auto plan = [](const char *text, const char *config) {
    const OpSpec spec = spec_of(text);
    TileConfig c;
    std::string error;
    EXPECT_TRUE(parse_tile_config(config, c, error)) << error;
    c = resolve_vectors(spec, c);
    EXPECT_TRUE(validate_tile_config(spec, c, "sm_80", false).empty()) << config;
    return plan_kernel(spec, c, "sm_80", false);
  };
  KernelPlan p =
      plan("gemm m=64 n=64 k=64 a=f16:col b=f16:row c=f16 acc=f32", "64x64x32 w32x32 s3");
  EXPECT_EQ(p.a.swizzle_spread + p.a.swizzle_shift + p.b.swizzle_spread + p.b.swizzle_shift, 0);
  p = plan("gemm m=64 n=64 k=64 a=f32:col b=f32:row c=f32 acc=f32 math=tf32", "64x64x16 w32x32 s3");
  EXPECT_EQ(p.a.load, FragmentLoad::scalar);
  EXPECT_EQ(p.a.swizzle_spread, 1);
  EXPECT_EQ(p.b.swizzle_spread, 1);
  p = plan("gemm m=64 n=64 k=64 a=f64 b=f64:col c=f64 acc=f64", "32x32x16 w16x16 s3");
  EXPECT_EQ(p.a.swizzle_spread, 1);
  EXPECT_EQ(p.b.swizzle_spread, 1);
  p = plan("gemm m=64 n=64 k=64 a=s8:col b=s8:row c=s32 acc=s32", "128x64x64 w64x32 s3");
  EXPECT_EQ(p.a.swizzle_shift, 2); // 128-byte rows
  EXPECT_EQ(p.b.swizzle_shift, 1); // 64-byte rows: two per line
  EXPECT_EQ(p.a.swizzle_spread, 0);
  p = plan("gemm m=64 n=64 k=64 a=f32 b=f32 c=f32 acc=f32 math=f32", "64x64x8 w32x32 s3");
  EXPECT_EQ(p.a.swizzle_spread + p.a.swizzle_shift + p.b.swizzle_spread + p.b.swizzle_shift, 0);
}

TEST(KernelPlan, PlanOfTheDefaultF16Kernel) {
  const TileConfig c = default_tile_config(kF16, "sm_80", false);
  const KernelPlan p = plan_kernel(kF16, c, "sm_80", false);
  EXPECT_EQ(p.threads, 128);
  EXPECT_EQ(p.tiles_m, 4);
  EXPECT_EQ(p.tiles_n, 8);
  EXPECT_EQ(p.k_steps, 2);
  EXPECT_EQ(p.smem_bytes, 3 * (128 * 32 + 128 * 32) * 2);
  EXPECT_EQ(p.a.load, FragmentLoad::ldmatrix);
  EXPECT_EQ(p.b.load, FragmentLoad::ldmatrix);
  EXPECT_EQ(p.a.copy_bytes, 16);
  EXPECT_EQ(p.ptx_version, 70);
  EXPECT_EQ(plan_kernel(kF16, c, "sm_90", false).ptx_version, 78);
  const OpSpec colrow = spec_of("gemm m=512 n=512 k=512 a=f16:col b=f16:row c=f16 acc=f32");
  const KernelPlan t =
      plan_kernel(colrow, default_tile_config(colrow, "sm_80", false), "sm_80", false);
  EXPECT_EQ(t.a.load, FragmentLoad::ldmatrix_trans);
  EXPECT_EQ(t.b.load, FragmentLoad::ldmatrix_trans);
  EXPECT_FALSE(t.a.k_contiguous);
}

} // namespace
} // namespace tcjit::codegen
