// The LLVM backend's environment overrides (compiler/codegen/plan/llvm_overrides.h): a bad
// TCJIT_LLC_OPT or TCJIT_LLVM_PIPELINE is an error naming it, and a kernel built under an
// override has another identity (so the kernel cache never serves it without the override, nor
// the default kernel under it).
#include "compiler/codegen/plan/llvm_overrides.h"
#include "compiler/dsl/parser.h"
#include "engine/kernel_compile.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <string>

namespace tcjit {
namespace {

constexpr const char *kSpec = "gemm m=64 n=64 k=64 a=f16:row b=f16:col c=f16:row acc=f32";

codegen::CompiledKernel compile() {
  const ParseResult parsed = parse_spec(kSpec);
  EXPECT_TRUE(parsed.ok());
  codegen::CompileOptions options;
  options.backend = codegen::Backend::llvm;
  codegen::TileConfig c;
  std::string error;
  EXPECT_TRUE(codegen::parse_tile_config("64x64x32 w32x32 s2", c, error)) << error;
  options.config = c;
  return engine::compile_kernel(parsed.entries.at(0).spec, options);
}

// `name` set to `value` (unset when nullopt) for the scope.
class ScopedEnv {
public:
  ScopedEnv(const char *name, std::optional<std::string> value) : name_(name) {
    if (const char *before = std::getenv(name))
      saved_ = before;
    if (value)
      setenv(name, value->c_str(), 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (saved_)
      setenv(name_, saved_->c_str(), 1);
    else
      unsetenv(name_);
  }

private:
  const char *name_;
  std::optional<std::string> saved_;
};

TEST(LlvmOverrides, ALevelIsTakenAndAnythingElseIsAnErrorNamingIt) {
  for (const char *good : {"0", "1", "2", "3"}) {
    const ScopedEnv env("TCJIT_LLC_OPT", good);
    EXPECT_EQ(codegen::llvm_overrides().llc_opt, good[0] - '0');
  }
  {
    const ScopedEnv env("TCJIT_LLC_OPT", "");
    EXPECT_EQ(codegen::llvm_overrides().llc_opt, -1);
  }
  for (const char *bad : {"4", "-1", "abc", "1 ", "01", "O2"}) {
    const ScopedEnv env("TCJIT_LLC_OPT", bad);
    try {
      codegen::llvm_overrides();
      ADD_FAILURE() << "TCJIT_LLC_OPT='" << bad << "' was accepted";
    } catch (const std::runtime_error &e) {
      EXPECT_NE(std::string(e.what()).find("TCJIT_LLC_OPT='" + std::string(bad) + "'"),
                std::string::npos)
          << e.what();
    }
  }
}

TEST(LlvmOverrides, EachOverrideIsPartOfTheKernelIdentity) {
  const ScopedEnv no_level("TCJIT_LLC_OPT", std::nullopt);
  const ScopedEnv no_pipeline("TCJIT_LLVM_PIPELINE", std::nullopt);
  const codegen::CompiledKernel plain = compile();
  ASSERT_TRUE(plain.ok());
  const std::string identity = codegen::kernel_identity(plain.plan);
  EXPECT_EQ(identity.find("|llc"), std::string::npos) << identity;
  EXPECT_EQ(identity.find("|pipeline"), std::string::npos) << identity;
  {
    const ScopedEnv level("TCJIT_LLC_OPT", "2");
    const codegen::CompiledKernel k = compile();
    ASSERT_TRUE(k.ok());
    EXPECT_EQ(k.plan.llc_opt, 2);
    EXPECT_EQ(codegen::kernel_identity(k.plan), identity + "|llc2");
  }
  std::string o3_identity;
  {
    const ScopedEnv pipeline("TCJIT_LLVM_PIPELINE", "O3");
    const codegen::CompiledKernel k = compile();
    ASSERT_TRUE(k.ok());
    o3_identity = codegen::kernel_identity(k.plan);
    EXPECT_NE(o3_identity.find("|pipeline"), std::string::npos) << o3_identity;
  }
  {
    const ScopedEnv pipeline("TCJIT_LLVM_PIPELINE", "function(early-cse)");
    const codegen::CompiledKernel k = compile();
    ASSERT_TRUE(k.ok());
    EXPECT_NE(codegen::kernel_identity(k.plan), o3_identity); // each pipeline its own identity
  }
  EXPECT_EQ(codegen::kernel_identity(compile().plan), identity); // and none: the default again
}

TEST(LlvmOverrides, APipelineLlvmCannotRunIsAnErrorNamingTheVariable) {
  const ScopedEnv pipeline("TCJIT_LLVM_PIPELINE", "function(no-such-pass)");
  try {
    const codegen::CompiledKernel k = compile();
    ADD_FAILURE() << "compiled with TCJIT_LLVM_PIPELINE=function(no-such-pass): " << k.ok();
  } catch (const std::runtime_error &e) {
    EXPECT_NE(std::string(e.what()).find("TCJIT_LLVM_PIPELINE='function(no-such-pass)'"),
              std::string::npos)
        << e.what();
  }
}

TEST(LlvmOverrides, ControlCharactersAndBadUtf8InAValueAreEscapedInTheError) {
  // a value that would set the terminal's title and hold a byte that is not UTF-8
  const std::string hostile = "\x1b]0;pwned\x07\xff";
  for (const char *name : {"TCJIT_LLC_OPT", "TCJIT_LLVM_PIPELINE"}) {
    SCOPED_TRACE(name);
    const ScopedEnv env(name, hostile);
    try {
      if (std::string(name) == "TCJIT_LLC_OPT")
        codegen::llvm_overrides();
      else
        compile();
      ADD_FAILURE() << name << " with control characters was accepted";
    } catch (const std::runtime_error &e) {
      const std::string what = e.what();
      EXPECT_NE(what.find(name), std::string::npos) << what;
      EXPECT_NE(what.find("\\x1b]0;pwned\\x07\\xff"), std::string::npos) << what;
      for (const char c : what)
        EXPECT_FALSE(c == '\x1b' || c == '\x07' || c == '\xff') << what;
    }
  }
}

} // namespace
} // namespace tcjit
