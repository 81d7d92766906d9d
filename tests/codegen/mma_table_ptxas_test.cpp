// ptxas is the judge of the mma table (compiler/target/mma_table.h): every form, generated or not,
// assembles as written on its first arch and PTX version and on every arch tcjit targets, and
// ptxas refuses it on the arch and the PTX version before, naming the table's min_sm and min_ptx.
// Operand lists are built from the table's register counts, so a wrong count fails too.
#include "compiler/target/arch.h"
#include "compiler/target/mma_table.h"
#include "runtime/device/device.h"
#include "runtime/jit/ptxas_compiler.h"

#include <gtest/gtest.h>

#include <algorithm>

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
      // The version a kernel of the form declares on the arch (the arch's, or the form's when
      // newer: fp8 needs 8.4 where sm_89 kernels otherwise declare 7.8).
      const std::string text = one_mma_kernel(f, kernel_ptx_version(f, arch), arch.sm_version);
      if (arch.sm_version >= f.min_sm)
        EXPECT_EQ(ptxas_refusal(text, arch.sm_version), "");
      else // an arch before the form's first (fp8 on sm_80/sm_86): refused, as math_problem says
        EXPECT_NE(ptxas_refusal(text, arch.sm_version)
                      .find("requires .target sm_" + std::to_string(f.min_sm) + " or higher"),
                  std::string::npos);
    }
  }
}

// The arch and the PTX ISA version before each form's first (sm_75 and PTX 6.5 before sm_80 and
// 7.0; sm_86 and PTX 8.3 before fp8's sm_89 and 8.4); ptxas names what the form requires.
int arch_before(int min_sm) {
  switch (min_sm) {
  case 80: return 75;
  case 89: return 86;
  }
  ADD_FAILURE() << "pick the arch before sm_" << min_sm;
  return min_sm - 1;
}
int ptx_before(int min_ptx) {
  return min_ptx % 10 == 0 ? min_ptx - 5 : min_ptx - 1; // 7.0 -> 6.5, 8.4 -> 8.3
}

TEST_F(MmaTablePtxas, PtxasRefusesEveryFormBeforeItsFirstArchAndPtxVersion) {
  for (const MmaForm &f : mma_forms()) {
    SCOPED_TRACE(std::string(f.ptx));
    const int old_sm = arch_before(f.min_sm);
    const std::string old_arch = ptxas_refusal(one_mma_kernel(f, f.min_ptx, old_sm), old_sm);
    EXPECT_NE(old_arch.find("requires .target sm_" + std::to_string(f.min_sm) + " or higher"),
              std::string::npos)
        << old_arch;
    const std::string old_ptx =
        ptxas_refusal(one_mma_kernel(f, ptx_before(f.min_ptx), f.min_sm), f.min_sm);
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
