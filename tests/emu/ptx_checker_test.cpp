// The loader's PTX checker: each finding of the mutation campaign (PTX that ptxas rejects and the
// emulator used to run) is refused with file:line, the instruction and the rule; PTX the ISA
// allows (bit-size registers, wider registers for ld/st/cvt) still loads.
#include <gtest/gtest.h>

#include "tests/emu/emu_test_util.h"

namespace tcjit::emu::test {
namespace {

// A kernel with registers of several types around `body` (the body starts on line 12).
std::string kernel(const std::string &body) {
  return ptx_module(R"(.visible .entry k(.param .u64 out)
{
  .reg .pred %p<3>;
  .reg .b16 %h<3>;
  .reg .b32 %r<3>;
  .reg .b64 %rd<3>;
  .reg .f32 %f<3>;
  .reg .u32 %u<3>;
  .shared .align 4 .b8 smem[64];
)" + body + "\n  ret;\n}\n");
}

void expect_error(const std::string &body, const std::string &expected) {
  const std::string e = load_error(kernel(body));
  EXPECT_NE(e.find(expected), std::string::npos) << "body: " << body << "\nerror: " << e;
}

void expect_loads(const std::string &body) {
  EXPECT_EQ(load_error(kernel(body)), "") << body;
}

TEST(PtxChecker, AddF32OnA16BitRegister) {
  expect_error("  add.f32 %f0, %h1, %f2;",
               "kernel.ptx:13: Arguments mismatch for instruction 'add': operand 2 (a) of "
               "'add.f32' '%h1' is a .b16 register; 'add.f32' needs a .f32 or .b32 register "
               "there (.f32)");
}

TEST(PtxChecker, LdU32IntoA16BitRegister) {
  expect_error("  ld.global.u32 %h0, [%rd1];",
               "kernel.ptx:13: Arguments mismatch for instruction 'ld': operand 1 (destination) "
               "of 'ld.global.u32' '%h0' is a .b16 register; 'ld.global.u32' needs a .b, .u or "
               ".s register of 32 bits or more there (.u32, wider registers allowed)");
}

TEST(PtxChecker, MovU64IntoA32BitRegister) {
  expect_error("  mov.u64 %r0, %rd1;",
               "kernel.ptx:13: Arguments mismatch for instruction 'mov': operand 1 (destination) "
               "of 'mov.u64' '%r0' is a .b32 register; 'mov.u64' needs a 64-bit .b, .u or .s "
               "register there (.u64)");
}

TEST(PtxChecker, SetpIntoA32BitRegister) {
  expect_error("  setp.eq.s32 %r0, %r1, %r2;",
               "kernel.ptx:13: Arguments mismatch for instruction 'setp': operand 1 "
               "(destination) of 'setp.eq.s32' '%r0' is a .b32 register; 'setp.eq.s32' needs a "
               ".pred register there (.pred)");
}

TEST(PtxChecker, SixtyFourBitRegisterInCvtaToSharedU32) {
  // .u32 cvta is refused whatever its registers (ptxas: 32-bit compilation is no longer
  // supported); .u64 with a 32-bit source is a type mismatch
  expect_error("  cvta.to.shared.u32 %r0, %rd1;",
               "kernel.ptx:13: Arguments mismatch for instruction 'cvta': 'cvta.to.shared.u32' "
               "converts 32-bit addresses");
  expect_error("  cvta.to.shared.u64 %rd0, %r1;",
               "kernel.ptx:13: Arguments mismatch for instruction 'cvta': operand 2 (source) of "
               "'cvta.to.shared.u64' '%r1' is a .b32 register");
  expect_loads("  cvta.to.shared.u64 %rd0, %rd1;");
}

TEST(PtxChecker, BitSizeRegistersFitAnyTypeOfTheirSize) {
  expect_loads("  add.f32 %f0, %r1, %f2;"); // .b32 register, .f32 instruction
  expect_loads("  and.b32 %r0, %f1, %u2;"); // .b32 instruction, .f32 and .u32 registers
  expect_loads("  add.s32 %u0, %r1, %u2;"); // .u32 register, .s32 instruction
  expect_error("  add.f32 %f0, %u1, %f2;", "'%u1' is a .u32 register; 'add.f32' needs a .f32 "
                                           "or .b32 register");
}

TEST(PtxChecker, LoadsStoresAndCvtMayUseWiderRegisters) {
  expect_loads("  ld.global.u32 %rd0, [%rd1];");
  expect_loads("  ld.global.u8 %h0, [%rd1];");
  expect_loads("  ld.global.b16 %f0, [%rd1];");
  expect_loads("  st.global.u32 [%rd1], %rd0;");
  expect_loads("  cvt.u32.u16 %rd0, %h1;");
  // float types: their own type or a .bN register of their size or wider
  expect_loads("  ld.global.f32 %rd0, [%rd1];");
  expect_error("  ld.global.f32 %u0, [%rd1];",
               "'%u0' is a .u32 register; 'ld.global.f32' needs a .f32 register or a .b register "
               "of 32 bits or more there (.f32, wider registers allowed)");
  expect_error("  st.global.u32 [%rd1], %h0;", "needs a .b, .u or .s register of 32 bits");
}

TEST(PtxChecker, VectorArityMustMatchTheAccess) {
  expect_error("  ld.global.v4.u32 {%r0, %r1}, [%rd1];",
               "Argument vector size mismatch for instruction 'ld': 'ld.global.v4.u32' accesses "
               "4 elements, operand 1 (destination) has 2");
  expect_error("  st.global.v2.u32 [%rd1], %r0;",
               "Argument vector size mismatch for instruction 'st': 'st.global.v2.u32' accesses "
               "a vector of 2, operand 2 (source) is not a {..} vector");
  expect_error("  ld.global.v2.u32 {%r0, %rd1}, [%rd1];",
               "Incompatible elements of vector expression in 'ld.global.v2.u32'");
  expect_loads("  ld.global.v2.u32 {%r0, %u1}, [%rd1];");
  // each element must suit its neighbour: a .b32 between .f32 and .u32 does not reconcile them
  expect_error("  ld.shared.v4.b32 {%r0, %f1, %u1, %r1}, [%rd1];",
               "Vector with elements of different types are not allowed in ld instruction "
               "'ld.shared.v4.b32': '%f1' is .f32, '%u1' is .u32");
  expect_loads("  ld.shared.v4.b32 {%f1, %r0, %u1, %r1}, [%rd1];");
}

TEST(PtxChecker, StateSpacesOfVariablesAndImmediateAddresses) {
  expect_error("  ld.global.u32 %r0, [smem];",
               "State space mismatch between instruction and address in instruction 'ld': "
               "'smem' is in the .shared state space, 'ld.global.u32' accesses .global");
  expect_error("  ld.shared.u32 %r0, [8];",
               "Immediate addresses allowed only for .local state space");
  expect_error("  ld.global.u32 %r0, [%f1];",
               "Illegal to use symbol '%f1' of type .f32 as address operand");
  expect_loads("  ld.u32 %r0, [smem];");
}

TEST(PtxChecker, ImmediatesMustSuitTheType) {
  expect_error("  add.f32 %f0, %f1, 1;",
               "operand 3 (b) of 'add.f32' is an integer constant; .f32 takes floating-point "
               "constants only");
  expect_error("  add.u32 %r0, %r1, 1.5;",
               "is a floating-point constant (.f64); .u32 takes integer");
  expect_loads("  mov.b32 %r0, 0f3F800000;");
  expect_error("  add.u64 %rd0, %rd1, smem;",
               "Argument 2 of instruction 'add': must be register; operand 3 (b) 'smem' is a "
               "variable");
}

TEST(PtxChecker, PredicatesAndGuards) {
  expect_error("  selp.b32 %r0, %r1, %r2, %r1;", "operand 4 (c) of 'selp.b32' '%r1' is a .b32 "
                                                 "register; 'selp.b32' needs a .pred register");
  expect_error("  @%r1 add.s32 %r0, %r1, 1;",
               "kernel.ptx:13: Predicate expression expected for instruction 'add': the guard "
               "'@%r1' is a .b32 register; a guard must be .pred");
}

TEST(PtxChecker, RequiredModifiersAndTypes) {
  expect_error("  mul.u32 %r0, %r1, %r2;", "'mul.u32' needs .lo, .hi or .wide");
  expect_error("  div.f32 %f0, %f1, %f2;",
               "Rounding modifier or '.approx' modifier required for instruction 'div'");
  expect_error("  add.u8 %h0, %h1, 1;",
               "Unexpected instruction types specified for 'add': .u8 is not a type of 'add'");
  expect_error("  cvt.f32.u32 %f0, %r1;",
               "Rounding modifier required for instruction 'cvt': 'cvt.f32.u32' converts an "
               "integer to a float");
  expect_error("  add.u32 %r0, %r1, %tid.x;",
               "Special register argument not allowed for instruction 'add'");
}

TEST(PtxChecker, AtomicOperationsTakeTheirOwnTypes) {
  expect_error("  atom.global.exch.u32 %r0, [%rd1], %r2;",
               "kernel.ptx:13: Operation .exch requires .b32 or .b64 type for instruction 'atom' "
               "('atom.global.exch.u32' has .u32)");
  expect_error("  red.global.add.b32 [%rd1], %r2;", "Operation .add requires .u32 or .s32 or .u64 "
                                                    "or .f32 or .f64 type for instruction 'red'");
  expect_loads("  atom.global.exch.b32 %r0, [%rd1], %r2;");
  expect_error("  st.const.u32 [%rd1], %r0;",
               "State space incorrect for instruction 'st': 'st.const.u32' cannot use .const");
}

TEST(PtxChecker, CvtRoundingAndSpecialRegisters) {
  expect_error("  cvt.rn.f32.f32 %f0, %f1;",
               "Illegal rounding modifier for instruction 'cvt': 'cvt.rn.f32.f32' converts "
               "between floats of one size");
  expect_loads("  cvt.rni.f32.f32 %f0, %f1;");
  expect_error("  cvt.rzi.u32.f32 %h0, %f1;", "'%h0' is a .b16 register");
  // special registers: mov and integer cvt only
  expect_loads("  cvt.u64.u32 %rd0, %tid.x;");
  expect_error("  cvt.rn.f32.u32 %f0, %tid.x;",
               "Special register argument not allowed for instruction 'cvt'");
}

TEST(PtxChecker, RegisterDeclarationTypes) {
  // ptxas has no .bf16 registers (a syntax error): bf16 values live in .b16 registers
  const std::string e = load_error(ptx_module(".visible .entry k() {\n.reg .bf16 %x;\nret;\n}"));
  EXPECT_NE(e.find("kernel.ptx:5: '.bf16' is not a register type (ptxas: syntax error); "
                   "declare .b16 registers for it"),
            std::string::npos)
      << e;
  EXPECT_EQ(load_error(ptx_module(".visible .entry k() {\n.reg .f16x2 %x;\nret;\n}")), "");
}

// A kernel with the registers of mma fragments around `body` (the body starts on line 15).
std::string tensor_kernel(const std::string &body, const std::string &version = "8.0") {
  return ".version " + version + "\n.target sm_80\n.address_size 64\n" +
         R"(.visible .entry k(.param .u64 out)
{
  .reg .pred %p<2>;
  .reg .b16 %h<2>;
  .reg .b32 %r<8>;
  .reg .u32 %u<4>;
  .reg .f16x2 %x<4>;
  .reg .f32 %f<8>;
  .reg .b64 %rd<4>;
  .reg .f64 %fd<4>;
  .shared .align 16 .b8 smem[256];
)" + body +
         "\n  ret;\n}\n";
}

void expect_tensor_error(const std::string &body, const std::string &expected,
                         const std::string &version = "8.0") {
  const std::string e = load_error(tensor_kernel(body, version));
  EXPECT_NE(e.find(expected), std::string::npos) << "body: " << body << "\nerror: " << e;
}

void expect_tensor_loads(const std::string &body, const std::string &version = "8.0") {
  EXPECT_EQ(load_error(tensor_kernel(body, version)), "") << body;
}

const std::string kMmaF16 = "  mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 ";

TEST(PtxChecker, MmaFragmentsTakeTheRegistersPtxasTakes) {
  expect_tensor_loads(kMmaF16 + "{%f0, %f1, %f2, %f3}, {%r0, %r1, %r2, %r3}, {%r4, %r5}, "
                                "{%f4, %f5, %f6, %f7};");
  // .b32 fits .f32 accumulators, .f16x2 the f16 inputs; D may discard an element
  expect_tensor_loads(kMmaF16 + "{%r0, %f1, %f2, _}, {%x0, %x1, %r2, %r3}, {%r4, %r5}, "
                                "{%f4, %f5, %f6, %f7};");
  expect_tensor_error(kMmaF16 + "{%f0, %f1, %f2, %f3}, {%f4, %f5, %f6, %f7}, {%r4, %r5}, "
                                "{%f4, %f5, %f6, %f7};",
                      "kernel.ptx:15: Arguments mismatch for instruction 'mma': operand 2 (A) of "
                      "'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32' is a vector of .f32 "
                      "registers; .f16 elements need .b32 or .f16x2 registers");
  expect_tensor_error(kMmaF16 + "{%u0, %u1, %u2, %u3}, {%r0, %r1, %r2, %r3}, {%r4, %r5}, "
                                "{%f4, %f5, %f6, %f7};",
                      "operand 1 (D) of 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32' is a "
                      "vector of .u32 registers");
  expect_tensor_error(kMmaF16 + "{%f0, %f1, %f2, %f3}, {%r0, %r1, %r2}, {%r4, %r5}, "
                                "{%f4, %f5, %f6, %f7};",
                      "needs 4 registers in operand 2 (A), got 3");
  expect_tensor_error(kMmaF16 + "{%f0, %f1, %f2, %f3}, {%r0, %r1, %r2, %r3}, {%r4, %r5}, "
                                "{%f4, %f5, %f6, _};",
                      "sinks are not allowed in a source operand");
  expect_tensor_error(kMmaF16 + "{%f0, %f1, %f2, %f3}, {%r0, %r1, %r2, %r3}, %r4, "
                                "{%f4, %f5, %f6, %f7};",
                      "Vector expected for argument 2");
  // bf16 and tf32 inputs are .b32 registers only; s8 inputs any 32-bit register
  expect_tensor_error("  mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%f0, %f1, %f2, %f3}, "
                      "{%f4, %f5, %f6, %f7}, {%r4, %r5}, {%f4, %f5, %f6, %f7};",
                      ".tf32 elements need .b32 registers");
  expect_tensor_loads("  mma.sync.aligned.m16n8k32.row.col.s32.s8.u8.s32 {%r0, %r1, %r2, %r3}, "
                      "{%f4, %f5, %f6, %f7}, {%u0, %u1}, {%r4, %r5, %r6, %r7};");
  // f64: any 64-bit register, one per element
  expect_tensor_loads("  mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%fd0, %rd1}, {%rd2}, "
                      "{%fd3}, {%fd0, %fd1};");
  expect_tensor_error("  mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%fd0, %fd1}, {%r2}, "
                      "{%fd3}, {%fd0, %fd1};",
                      ".f64 elements need .b64 or .u64 or .s64 or .f64 registers");
}

TEST(PtxChecker, MmaF16AccumulatorsHaveOneType) {
  expect_tensor_error("  mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f32 {%r0, %r1}, "
                      "{%r0, %r1, %r2, %r3}, {%r4, %r5}, {%f4, %f5, %f6, %f7};",
                      ".dtype must be '.f32' when .ctype is '.f32'");
  expect_tensor_loads("  mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16 {%x0, %x1}, "
                      "{%r0, %r1}, {%r4}, {%x2, %x3};");
  expect_tensor_error(kMmaF16.substr(0, kMmaF16.size() - 1) +
                          ".rn {%f0, %f1, %f2, %f3}, "
                          "{%r0, %r1, %r2, %r3}, {%r4, %r5}, {%f4, %f5, %f6, %f7};",
                      "Illegal rounding modifier for instruction 'mma'");
}

TEST(PtxChecker, MmaF64TakesARoundingMode) {
  const std::string f64 = "  mma.sync.aligned.m8n8k4.row.col";
  const std::string operands = ".f64.f64.f64.f64 {%fd0, %fd1}, {%fd2}, {%fd3}, {%fd0, %fd1};";
  expect_tensor_loads(f64 + ".rn" + operands);
  // valid PTX; the emulator's fma chain rounds to nearest only
  expect_tensor_error(f64 + ".rz" + operands,
                      "is not supported: the emulator's f64 mma rounds to nearest (.rn only)");
  expect_tensor_error(f64 + ".rna" + operands, "Illegal rounding modifier for instruction 'mma'");
  expect_tensor_error("  mma.sync.aligned.m16n8k8.row.col.rn.f32.tf32.tf32.f32 "
                      "{%f0, %f1, %f2, %f3}, {%r0, %r1, %r2, %r3}, {%r4, %r5}, "
                      "{%f4, %f5, %f6, %f7};",
                      "Illegal rounding modifier for instruction 'mma'");
}

TEST(PtxChecker, PrmtSelectorAndCvtPackingSources) {
  // found by the differential test's other seeds: prmt's selector is any 32-bit register, the
  // f32 sources of cvt.f16x2 may be wider .b registers (not those of cvt.bf16x2)
  expect_loads("  prmt.b32 %r0, %r1, %r2, %f2;");
  expect_error("  prmt.b32 %r0, %r1, %r2, %rd1;", "operand 4 (c) of 'prmt.b32' '%rd1'");
  expect_loads("  cvt.rn.f16x2.f32 %r0, %f1, %rd1;");
  expect_error("  cvt.rn.f16x2.f32 %r0, %f1, %u1;", "operand 3 (b) of 'cvt.rn.f16x2.f32' '%u1'");
  expect_error("  cvt.rn.bf16x2.f32 %r0, %f1, %rd1;",
               "operand 3 (b) of 'cvt.rn.bf16x2.f32' '%rd1' is a .b64 register");
}

TEST(PtxChecker, LdmatrixDestinationAndAddress) {
  // any 32-bit registers, each suiting the one before it (ptxas compares neighbours)
  expect_tensor_loads("  ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%f1, %r0, %p0, _}, "
                      "[%h0];");
  expect_tensor_error("  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r0, %f1, %p0, %r1}, [%h0];",
                      "Vector with elements of different types are not allowed in ldmatrix "
                      "instruction 'ldmatrix.sync.aligned.m8n8.x4.shared.b16': '%f1' is .f32, "
                      "'%p0' is .pred");
  expect_tensor_loads("  ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r0}, [smem+16];");
  expect_tensor_error("  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%rd0, %rd1, %rd2, %rd3}, "
                      "[%r4];",
                      "is a vector of .b64 registers; .b16 elements need .b32 or .u32 or .s32 or "
                      ".f32 or .f16x2 or .pred registers");
  expect_tensor_error("  ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%r0, %r1, %r2, %r3}, [%r4];",
                      "needs 2 registers in operand 1 (destination), got 4");
  expect_tensor_error("  ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r0, %r1, %r2, %r3}, [8];",
                      "Immediate addresses allowed only for .local state space");
  expect_tensor_error("  ldmatrix.sync.aligned.m8n8.x4.global.b16 {%r0, %r1, %r2, %r3}, [%rd0];",
                      "State space incorrect for instruction 'ldmatrix'");
  expect_tensor_error("  ldmatrix.sync.aligned.m8n8.x4.shared.b32 {%r0, %r1, %r2, %r3}, [%r4];",
                      ".b32 is not a type of 'ldmatrix'");
}

TEST(PtxChecker, CpAsyncOperands) {
  const std::string cp = "  cp.async.cg.shared.global [%rd0], ";
  expect_tensor_loads(cp + "[%rd1], 16, %r2;");
  expect_tensor_loads(cp + "[%r1], 16, 8;"); // ptxas takes a 32-bit source register here
  expect_tensor_loads("  cp.async.ca.shared.global [smem], [%rd1], 4;\n"
                      "  cp.async.commit_group;\n  cp.async.wait_group 0;\n  cp.async.wait_all;");
  expect_tensor_error(cp + "[%rd1], 16, %f2;", "'%f2' is a .f32 register");
  expect_tensor_error(cp + "[smem], 16;",
                      "'smem' is in the .shared state space, 'cp.async.cg.shared.global' "
                      "accesses .global");
  expect_tensor_error(cp + "[%rd1], 16, -7;", "cp.async src-size -7 is out of range [0..16]");
  expect_tensor_error(cp + "[%rd1], 16, %r2, %rd3;", "takes 3 to 4 operands, got 5");
  // ignore-src: PTX ISA 7.5
  expect_tensor_loads(cp + "[%rd1], 16, %p1;", "7.5");
  expect_tensor_error(cp + "[%rd1], 16, %p1;",
                      "Feature 'ignore-src on cp.async' requires PTX ISA .version 7.5 or later",
                      "7.0");
  expect_tensor_error("  cp.async.wait_group %r1;",
                      "operand 1 (pending groups) of 'cp.async.wait_group' must be an integer "
                      "constant");
  expect_tensor_error("  cp.async.commit_group 1;", "takes 0 operands, got 1");
}

} // namespace
} // namespace tcjit::emu::test
