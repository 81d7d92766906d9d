// ptxas is the judge of the mma table (compiler/target/mma_table.h): every form, generated or not,
// assembles as written on its first arch and PTX version and on every arch tcjit targets, and
// ptxas refuses it on the arch and the PTX version before, naming the table's min_sm and min_ptx.
// Operand lists are built from the table's register counts, so a wrong count fails too.
#include "compiler/target/arch.h"
#include "compiler/target/mma_table.h"
#include "runtime/device/device.h"
#include "runtime/jit/ptxas_compiler.h"

#include <gtest/gtest.h>

#include <string>

namespace tcjit::codegen {
namespace {

std::string version_text(int x10) {
  return std::to_string(x10 / 10) + "." + std::to_string(x10 % 10);
}

// "{%r0, %r1}" for `count` registers called `name`.
std::string reg_list(const char *name, int count) {
  std::string out = "{";
  for (int i = 0; i < count; ++i)
    out += (i ? ", %" : "%") + std::string(name) + std::to_string(i);
  return out + "}";
}

// The PTX register type of an operand: 64-bit for f64, f32 for f32 accumulators, b32 otherwise
// (f16x2, bf16x2, tf32, packed 8-bit, s32).
const char *reg_type(DType t) {
  return t == DType::f64 ? ".f64" : t == DType::f32 ? ".f32" : ".b32";
}

// A kernel holding one `f` (D = A * B + C, D and C in the same registers); a sparse form (mma.sp)
// also takes its metadata register %e and the sparsity selector the code generators pass.
std::string one_mma_kernel(const MmaForm &f, int ptx_version, int sm) {
  const int a = f.a_regs, b = f.b_regs, c = f.c_regs;
  return ".version " + version_text(ptx_version) + "\n.target sm_" + std::to_string(sm) +
         "\n.address_size 64\n.visible .entry one_mma()\n{\n  .reg " + reg_type(f.a) + " %a<" +
         std::to_string(a) + ">;\n  .reg " + reg_type(f.b) + " %b<" + std::to_string(b) +
         ">;\n  .reg " + reg_type(f.acc) + " %c<" + std::to_string(c) + ">;\n  " +
         (f.sparse ? ".reg .b32 %e;\n  " : "") + std::string(f.ptx) + " " + reg_list("c", c) +
         ", " + reg_list("a", a) + ", " + reg_list("b", b) + ", " + reg_list("c", c) +
         (f.sparse ? ", %e, " + std::to_string(kSparsitySelector) : std::string()) +
         ";\n  ret;\n}\n";
}

// "" when ptxas accepts `ptx` for sm_`sm`, else its log.
std::string ptxas_refusal(const std::string &ptx, int sm) {
  jit::PtxCompileOptions options;
  options.sm_arch = sm;
  try {
    jit::compile_ptx_with_ptxas(ptx, "one_mma", options);
    return "";
  } catch (const device::DeviceError &e) {
    const std::string log = e.what();
    return log.empty() ? "(ptxas refused the PTX without a message)" : log;
  }
}

class MmaTablePtxas : public ::testing::Test {
protected:
  void SetUp() override {
    if (!jit::ptxas_available())
      GTEST_SKIP() << "ptxas not found (" << jit::ptxas_executable() << ")";
  }
};

TEST_F(MmaTablePtxas, EveryFormAssemblesFromItsFirstArchAndPtxVersion) {
  for (const MmaForm &f : mma_forms()) {
    SCOPED_TRACE(std::string(f.ptx));
    EXPECT_EQ(ptxas_refusal(one_mma_kernel(f, f.min_ptx, f.min_sm), f.min_sm), "");
    for (const ArchInfo &arch : known_archs()) {
      SCOPED_TRACE(std::string(arch.name));
      ASSERT_GE(arch.sm_version, f.min_sm);
      // at the PTX version of the arch's kernels (raised to min_ptx where that is newer)
      EXPECT_EQ(ptxas_refusal(one_mma_kernel(f, kernel_ptx_version(f, arch), arch.sm_version),
                              arch.sm_version),
                "");
    }
  }
}

// sm_75 is the arch before sm_80, which every form of the table needs; the PTX ISA version before a
// form's min_ptx is 6.5 for 7.0 and 7.0 for 7.1 (mma.sp); ptxas names what the form requires.
TEST_F(MmaTablePtxas, PtxasRefusesEveryFormBeforeItsFirstArchAndPtxVersion) {
  for (const MmaForm &f : mma_forms()) {
    SCOPED_TRACE(std::string(f.ptx));
    ASSERT_EQ(f.min_sm, 80) << "pick the arch before this form's first";
    ASSERT_TRUE(f.min_ptx == 70 || f.min_ptx == 71)
        << "pick the PTX ISA version before this form's first";
    const std::string old_arch = ptxas_refusal(one_mma_kernel(f, f.min_ptx, 75), 75);
    EXPECT_NE(old_arch.find("requires .target sm_" + std::to_string(f.min_sm) + " or higher"),
              std::string::npos)
        << old_arch;
    const std::string old_ptx = f.min_ptx == 70
                                    ? ptxas_refusal(one_mma_kernel(f, 65, 75), 75)
                                    : ptxas_refusal(one_mma_kernel(f, 70, f.min_sm), f.min_sm);
    EXPECT_NE(old_ptx.find("requires PTX ISA .version " + version_text(f.min_ptx) + " or later"),
              std::string::npos)
        << old_ptx;
  }
}

// A wrong register count is refused: the test's kernels check the table's counts.
TEST_F(MmaTablePtxas, AWrongRegisterCountIsRefused) {
  for (const MmaForm &f : mma_forms()) {
    SCOPED_TRACE(std::string(f.ptx));
    MmaForm wrong = f;
    wrong.a_regs += 1;
    EXPECT_NE(ptxas_refusal(one_mma_kernel(wrong, f.min_ptx, f.min_sm), f.min_sm), "");
    wrong = f;
    wrong.c_regs += 1;
    EXPECT_NE(ptxas_refusal(one_mma_kernel(wrong, f.min_ptx, f.min_sm), f.min_sm), "");
  }
}

} // namespace
} // namespace tcjit::codegen
