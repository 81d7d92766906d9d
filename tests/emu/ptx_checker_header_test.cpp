// The loader's module header (.version, .target, .address_size) and address offsets, as ptxas
// (CUDA 13, -arch=sm_80) takes them: each case here was run through ptxas; the emulator refuses
// what ptxas refuses (file:line, ptxas's words, how to fix) and loads what it takes.
#include <gtest/gtest.h>

#include "tests/emu/emu_test_util.h"

namespace tcjit::emu::test {
namespace {

// `header` followed by a small kernel; `body` at the kernel's start.
std::string module(const std::string &header, const std::string &body = "") {
  return header + R"(
.visible .entry k(.param .u64 out)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<3>;
  .shared .align 4 .b8 smem[64];
  ld.param.u64 %rd1, [out];
)" + body +
         "\n  ret;\n}\n";
}

void expect_refused(const std::string &ptx, const std::string &expected) {
  const std::string e = load_error(ptx);
  EXPECT_NE(e.find(expected), std::string::npos) << ptx << "\nerror: " << e;
}

void expect_loads(const std::string &ptx) {
  EXPECT_EQ(load_error(ptx), "") << ptx;
}

TEST(PtxHeader, VersionAndTargetMustOpenTheFile) {
  expect_refused(module(".target sm_80\n.address_size 64\n"),
                 "kernel.ptx:1: Missing .version directive at start of file: found '.target'");
  expect_refused(module(".address_size 64\n"), "kernel.ptx:1: Missing .version directive");
  expect_refused(module(""), "Missing .version directive at start of file: found '.visible'");
  expect_refused(module(".version 8.0\n.address_size 64\n"),
                 "kernel.ptx:2: Missing .target directive at start of file: found "
                 "'.address_size' after '.version 8.0'; name the architecture next");
  expect_refused(module(".target sm_80\n.version 8.0\n"), "Missing .version directive");
  // comments before the header are fine; .address_size may be left out
  expect_loads(module("// a comment\n/* another */\n.version 8.0\n.target sm_80\n"));
}

TEST(PtxHeader, DuplicatedOrMisplacedDirectives) {
  // a second .version where ptxas expects .target
  expect_refused(module(".version 8.0\n.version 8.0\n.target sm_80\n"),
                 "kernel.ptx:2: Missing .target directive at start of file: found '.version'");
  // .target directives may follow each other (the last names the architecture) ...
  expect_loads(module(".version 8.0\n.target sm_80\n.target sm_80\n.address_size 64\n"));
  // ... but nothing of the header stands after .address_size or a declaration
  expect_refused(module(".version 8.0\n.target sm_80\n.address_size 64\n.target sm_80\n"),
                 "kernel.ptx:4: Parsing error near '.target': syntax error: .target directives "
                 "stand right after .version");
  expect_refused(module(".version 8.0\n.target sm_80\n.address_size 64\n.address_size 64\n"),
                 "kernel.ptx:4: Parsing error near '.address_size': syntax error: .address_size "
                 "may appear once");
  expect_refused(module(".version 8.0\n.target sm_80\n.global .b32 g;\n.version 8.0\n"),
                 "kernel.ptx:4: Parsing error near '.version': syntax error: .version may "
                 "appear once, as the first directive of the file");
  expect_refused(module(".version 8.0\n.target sm_80\n") + ".target sm_80\n",
                 "Parsing error near '.target'");
}

TEST(PtxHeader, TheLastTargetNamesTheArchitecture) {
  // add.bf16 needs sm_90: the module is checked for the last architecture named
  const std::string add_bf16 = "  .reg .b16 %h<3>;\n  add.rn.bf16 %h0, %h1, %h2;";
  expect_loads(module(".version 8.0\n.target sm_80\n.target sm_90\n", add_bf16));
  expect_refused(module(".version 8.0\n.target sm_90\n.target sm_80\n", add_bf16),
                 "requires .target sm_90 or higher");
  expect_loads(module(".version 8.0\n.target sm_80, sm_90\n", add_bf16));
  // every architecture named must be one the .version supports
  expect_refused(module(".version 7.0\n.target sm_90\n.target sm_80\n"),
                 "kernel.ptx:2: PTX .version 7.0 does not support .target sm_90: sm_90 needs "
                 ".version 7.8 or later");
}

TEST(PtxHeader, ImpossibleVersions) {
  expect_refused(module(".version 99.9\n.target sm_80\n"),
                 "kernel.ptx:1: Unsupported .version 99.9; current version is '9.0'");
  expect_refused(module(".version 9.1\n.target sm_80\n"), "Unsupported .version 9.1");
  expect_refused(module(".version 7.9\n.target sm_80\n"), "Unsupported .version 7.9");
  expect_refused(module(".version 8\n.target sm_80\n"),
                 "kernel.ptx:1: Missing .version directive at start of file: '.version 8' is "
                 "not MAJOR.MINOR");
  // too old for the target (and for the features: ptxas says the target first)
  expect_refused(module(".version 1.0\n.target sm_80\n"),
                 "kernel.ptx:2: PTX .version 1.0 does not support .target sm_80: sm_80 needs "
                 ".version 7.0 or later");
  expect_refused(module(".version 6.5\n.target sm_80\n"), "does not support .target sm_80");
  // a feature newer than the version (the seeds' other features are in PTX 7.0)
  const std::string cvt = "  .reg .b16 %h<2>;\n  .reg .f32 %f<2>;\n  cvt.f32.bf16 %f1, %h1;";
  expect_refused(module(".version 7.0\n.target sm_80\n", cvt),
                 "Feature 'cvt with .f32.bf16' requires PTX ISA .version 7.1 or later");
  expect_loads(module(".version 7.1\n.target sm_80\n", cvt));
  // the versions ptxas reads, in any spelling of their digits
  expect_loads(module(".version 7.0\n.target sm_80\n"));
  expect_loads(module(".version 9.0\n.target sm_80\n"));
  expect_loads(module(".version 08.00\n.target sm_80\n"));
}

TEST(PtxHeader, ImpossibleTargets) {
  expect_refused(module(".version 8.0\n.target sm_999999999999999\n"),
                 "kernel.ptx:2: Unsupported .target 'sm_999999999999999': not an architecture "
                 "ptxas (CUDA 13) knows");
  for (const char *t : {"sm_81", "sm_79", "sm_8", "sm_800", "sm_80a", "sm_", "sm_80_a"})
    expect_refused(module(std::string(".version 8.0\n.target ") + t + "\n"),
                   std::string("Unsupported .target '") + t + "'");
  for (const char *t : {"foo", "SM_80", "sm", "texmode_unified"})
    expect_refused(module(std::string(".version 8.0\n.target ") + t + "\n"),
                   "Target architecture not defined at start of file");
  expect_refused(module(".version 8.0\n.target sm_100\n"),
                 "PTX .version 8.0 does not support .target sm_100: sm_100 needs .version 8.6");
  expect_refused(module(".version 8.0\n.target\n"), "Parsing error near '.visible'");
  // the spellings ptxas takes for sm_80
  expect_loads(module(".version 8.0\n.target compute_80\n"));
  expect_loads(module(".version 8.0\n.target sm_080\n"));
  // newer GPUs (ptxas -arch of the same name takes them)
  for (const char *t : {"sm_86", "sm_87", "sm_88", "sm_89", "sm_90", "sm_90a", "compute_90"})
    expect_loads(module(std::string(".version 8.0\n.target ") + t + "\n"));
  expect_loads(module(".version 8.8\n.target sm_120f\n"));
}

TEST(PtxHeader, TargetOptions) {
  expect_loads(module(".version 8.0\n.target sm_80, texmode_unified\n"));
  expect_loads(module(".version 8.0\n.target sm_75, sm_80\n"));
  expect_refused(module(".version 8.0\n.target sm_80, texmode_unified, texmode_independent\n"),
                 "Conflicting .target option 'texmode_independent'");
  expect_refused(module(".version 8.0\n.target sm_80, foo\n"), "Unsupported .target 'foo'");
  expect_refused(module(".version 8.0\n.target sm_80, map_f64_to_f32\n"),
                 "Directive map_f64_to_f32 is not supported with SM 1.3 or higher");
  // debug: ptxas wants debug sections (which the emulator skips)
  expect_refused(module(".version 8.0\n.target sm_80, debug\n"),
                 "kernel.ptx:2: Debug information not found in presence of .target debug");
  expect_loads(module(".version 8.0\n.target sm_80, debug\n.section .debug_abbrev\n{\n.b8 0\n}\n"));
  expect_refused(module(".version 8.0\n.target sm_80 sm_75\n"), "Parsing error");
}

TEST(PtxHeader, ArchitecturesTheEmulatorDoesNotModel) {
  // ptxas takes these, but checks features the emulator does not know for them
  expect_refused(module(".version 8.0\n.target sm_75\n"),
                 "kernel.ptx:2: unsupported .target sm_75: the emulator models sm_80 and newer");
  expect_refused(module(".version 8.0\n.target sm_80, sm_70\n"), "unsupported .target sm_70");
  expect_refused(module(".version 8.0\n.target sm_82\n"), "ptxas has no -arch=sm_82");
}

TEST(PtxHeader, AddressSize) {
  expect_refused(module(".version 8.0\n.target sm_80\n.address_size 32\n"),
                 "kernel.ptx:3: 32-Bit compilation is no longer supported");
  expect_refused(module(".version 8.0\n.target sm_80\n.address_size 16\n"),
                 "kernel.ptx:3: Illegal value for .address_size directive (must be 32 or 64): 16");
  expect_loads(module(".version 8.0\n.target sm_80\n.address_size 0x40\n"));
  expect_refused(module(".version 8.0\n.address_size 64\n.target sm_80\n"),
                 "Missing .target directive");
}

const std::string kHeader = ".version 8.0\n.target sm_80\n.address_size 64\n";

TEST(PtxAddress, OffsetsAsPtxasTakesThem) {
  for (const char *a : {"[%rd1+-8]", "[%rd1+ -8]", "[%rd1 + -8]", "[%rd1+0x10]", "[%rd1+0X10]",
                        "[%rd1+010]", "[%rd1+0b11]", "[%rd1+8U]", "[%rd1++8]", "[%rd1+4-8]",
                        "[%rd1+4--8]", "[%rd1+-8+-8]", "[%rd1+ - 8]"})
    expect_loads(module(kHeader, std::string("  ld.global.u32 %r1, ") + a + ";"));
  for (const char *a : {"[smem+4]", "[smem+-4]", "[smem+ -4]", "[smem+0x10]"})
    expect_loads(module(kHeader, std::string("  ld.shared.u32 %r1, ") + a + ";"));
  expect_loads(module(kHeader, "  st.global.u32 [%rd1+-4], %r1;"));
  // an immediate address, signed, in .local only
  expect_loads(module(kHeader, "  ld.local.u32 %r1, [-8];"));
  expect_loads(module(kHeader, "  ld.local.u32 %r1, [+8];"));
  expect_refused(module(kHeader, "  ld.global.u32 %r1, [-8];"),
                 "Immediate addresses allowed only for .local");
  expect_loads(module(kHeader, "  mov.u64 %rd2, smem+-4;"));
}

TEST(PtxAddress, MinusAfterTheBaseIsASyntaxError) {
  expect_refused(module(kHeader, "  ld.global.u32 %r1, [%rd1-8];"),
                 "kernel.ptx:11: Parsing error near '-': syntax error: an address adds its offset "
                 "with '+'; write [%rd1+-8] for a negative offset");
  expect_refused(module(kHeader, "  ld.shared.u32 %r1, [smem-4];"),
                 "Parsing error near '-': syntax error");
  expect_refused(module(kHeader, "  st.global.u32 [%rd1- 4], %r1;"), "Parsing error near '-'");
  expect_refused(module(kHeader, "  ld.global.u32 %r1, [%rd1-0x10];"), "Parsing error near '-'");
}

TEST(PtxAddress, OnlyAnIntegerConstantIsAdded) {
  expect_refused(module(kHeader, "  ld.global.u32 %r1, [%rd1+%rd2];"),
                 "kernel.ptx:11: Parsing error near '%rd2': syntax error: an address offset is "
                 "an integer constant");
  expect_refused(module(kHeader, "  ld.shared.u32 %r1, [smem+%r1];"), "Parsing error near '%r1'");
  expect_refused(module(kHeader, "  ld.global.u32 %r1, [8+%rd1];"), "Parsing error near '%rd1'");
  expect_refused(module(kHeader, "  ld.global.u32 %r1, [%rd1+];"), "Parsing error near ']'");
  expect_refused(module(kHeader, "  ld.global.u32 %r1, [%rd1 8];"), "Parsing error near '8'");
  expect_refused(module(kHeader, "  ld.global.u32 %r1, [%rd1+1.0];"),
                 "Integer constant expression expected");
}

TEST(PtxAddress, HugeOffsetsWrapUntilTheConstantOverflows) {
  // ptxas reads an integer modulo 2^64, but refuses a digit after a prefix of 2^63 or more
  for (const char *a : {"[%rd1+18446744073709551615]", "[%rd1+18446744073709551616]",
                        "[%rd1+92233720368547758079]", "[%rd1+0x10000000000000000]",
                        "[%rd1+0x7fffffffffffffff0]", "[%rd1+01000000000000000000000]"})
    expect_loads(module(kHeader, std::string("  ld.global.u32 %r1, ") + a + ";"));
  for (const char *a : {"[%rd1+99999999999999999999]", "[%rd1+92233720368547758080]",
                        "[%rd1+0x80000000000000000]", "[%rd1+010000000000000000000000]"})
    expect_refused(module(kHeader, std::string("  ld.global.u32 %r1, ") + a + ";"),
                   "kernel.ptx:11: Constant overflow");
  expect_refused(module(kHeader, "  mov.u32 %r1, 99999999999999999999;"), "Constant overflow");
}

TEST(PtxAddress, ANegativeOffsetAddressesBelowTheBase) {
  // out[i] = in[i + 1], read through [in + 4 * (i + 2) + -4]
  EmuDevice dev;
  const std::vector<uint32_t> in = {10, 20, 30, 40};
  device::DevicePtr din = upload(dev, in);
  device::DevicePtr dout = upload(dev, std::vector<uint32_t>(3, 0));
  launch(dev, kHeader + R"(
.visible .entry k(.param .u64 out, .param .u64 in)
{
  .reg .b32 %r<3>;
  .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [in];
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd3, %r1, 4;
  add.u64 %rd4, %rd2, %rd3;
  add.u64 %rd4, %rd4, 8;
  ld.global.u32 %r2, [%rd4+-4];
  add.u64 %rd5, %rd1, %rd3;
  st.global.u32 [%rd5+4-4], %r2;
  ret;
}
)",
         "k", {1, 1, 1}, {3, 1, 1}, {Arg::of(dout), Arg::of(din)});
  EXPECT_EQ(download<uint32_t>(dev, dout, 3), (std::vector<uint32_t>{20, 30, 40}));
}

} // namespace
} // namespace tcjit::emu::test
