// PTX parsing and decoding: layouts, errors with file:line, unsupported features at load time.
#include <gtest/gtest.h>

#include "runtime/emu/program.h"
#include "tests/emu/emu_test_util.h"

namespace tcjit::emu::test {
namespace {

TEST(EmuParser, ParamLayoutFollowsAbi) {
  EmuDevice dev;
  auto m = dev.load_module(ptx_module(R"(
.visible .entry k(.param .u8 a, .param .u64 b, .param .f32 c, .param .align 16 .b8 s[20],
                  .param .u16 d)
{ ret; }
)"),
                           "k.ptx");
  const auto &info = dev.kernel_info(dev.get_function(m, "k"));
  ASSERT_EQ(info.params.size(), 5u);
  EXPECT_EQ(info.params[0].offset, 0u);
  EXPECT_EQ(info.params[1].offset, 8u);
  EXPECT_EQ(info.params[2].offset, 16u);
  EXPECT_EQ(info.params[3].offset, 32u);
  EXPECT_EQ(info.params[3].size, 20u);
  EXPECT_EQ(info.params[4].offset, 52u);
  EXPECT_EQ(info.param_bytes, 54u);
}

TEST(EmuParser, UnsupportedInstructionNamesFileAndLine) {
  std::string e = load_error(ptx_module(R"(
.visible .entry k()
{
  .reg .b32 %r<3>;
  tex.2d.v4.f32.f32 {%r0, %r1, %r2, %r2}, [tex0, {%r0, %r1}];
  ret;
}
)"));
  EXPECT_NE(e.find("kernel.ptx:8: unsupported instruction 'tex.2d.v4.f32.f32'"), std::string::npos)
      << e;
}

TEST(EmuParser, SyntaxAndNameErrors) {
  EXPECT_NE(load_error(ptx_module(".visible .entry k() { add.s32 %r1, %r2, 1; ret; }"))
                .find("kernel.ptx:4: unknown name '%r1'"),
            std::string::npos);
  EXPECT_NE(load_error(ptx_module(".visible .entry k() { bra NOWHERE; }")).find("unknown label"),
            std::string::npos);
  EXPECT_NE(load_error(ptx_module(".visible .entry k() { .reg .b32 %r; add.s32 %r %r, 1; }"))
                .find("kernel.ptx:4: expected ';'"),
            std::string::npos);
  EXPECT_NE(load_error(ptx_module(".visible .entry k() { .reg .b32 %r; add.zz.s32 %r, %r, 1; }"))
                .find("unsupported modifier '.zz'"),
            std::string::npos);
  EXPECT_NE(load_error("/* never closed").find("unterminated"), std::string::npos);
}

TEST(EmuParser, ScopesLiteralsAndVectors) {
  // inline-asm style scopes that redeclare names, hex float literals, vectors, labels
  auto r = run_lanes(R"(
  {
    .reg .f32 %x;
    mov.f32 %x, 0f3F800000;
    add.f32 %fd, %fa, %x;
  }
  {
    .reg .f32 %x;
    mov.f32 %x, 0d4000000000000000;
    add.f32 %fd, %fd, %x;
  }
  )",
                     "f32", {{f32_bits(1.5f), 0, 0}});
  EXPECT_EQ(bits_f32(r[0]), 4.5f);
}

} // namespace
} // namespace tcjit::emu::test
