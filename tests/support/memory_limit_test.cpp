#include "support/memory_limit.h"

#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace tcjit::support {
namespace {

constexpr double kGiB = 1024.0 * 1024 * 1024;

TEST(MemoryLimit, TheLeastLimitAppliesAndIsNamed) {
  MemoryLimits limits;
  limits.physical = 64 * kGiB;
  EffectiveMemoryLimit e = effective_memory_limit(limits);
  EXPECT_EQ(e.bytes, 64 * kGiB);
  EXPECT_EQ(e.source, "this machine's physical memory");
  limits.cgroup = 8 * kGiB;
  e = effective_memory_limit(limits);
  EXPECT_EQ(e.bytes, 8 * kGiB);
  EXPECT_NE(e.source.find("cgroup"), std::string::npos) << e.source;
  limits.address_space = 2 * kGiB;
  e = effective_memory_limit(limits);
  EXPECT_EQ(e.bytes, 2 * kGiB);
  EXPECT_NE(e.source.find("RLIMIT_AS"), std::string::npos) << e.source;
  limits.data = 1 * kGiB;
  e = effective_memory_limit(limits);
  EXPECT_EQ(e.bytes, 1 * kGiB);
  EXPECT_NE(e.source.find("RLIMIT_DATA"), std::string::npos) << e.source;
  EXPECT_EQ(effective_memory_limit({}).bytes, 0); // nothing known: no limit
}

TEST(MemoryLimit, CgroupFilesTextIsReadAsBytesOrNone) {
  EXPECT_EQ(cgroup_limit_from_text("max"), 0);
  EXPECT_EQ(cgroup_limit_from_text("9223372036854771712"), 0); // v1: no limit
  EXPECT_EQ(cgroup_limit_from_text("2147483648"), 2 * kGiB);
  EXPECT_EQ(cgroup_limit_from_text(""), 0);
  EXPECT_EQ(cgroup_limit_from_text("12x"), 0);
}

// In a child process (the limit is the process's): RLIMIT_AS of 2 GiB makes the effective limit
// at most 2 GiB, named as the address-space limit.
TEST(MemoryLimit, AnAddressSpaceRlimitIsTheLimitOfThisProcess) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer reserves terabytes of address space, so any sanitized process "
                  "dies under a 2 GiB RLIMIT_AS; the release suite runs this test";
#endif
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    struct rlimit limit {};
    limit.rlim_cur = limit.rlim_max = static_cast<rlim_t>(2 * kGiB);
    if (::setrlimit(RLIMIT_AS, &limit) != 0)
      ::_exit(2);
    const EffectiveMemoryLimit e = effective_memory_limit(current_memory_limits());
    const bool ok =
        e.bytes > 0 && e.bytes <= 2 * kGiB && e.source.find("RLIMIT_AS") != std::string::npos;
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the effective limit in a 2 GiB RLIMIT_AS child";
  // this process, without the limit: at most the physical memory, never 0
  const EffectiveMemoryLimit here = effective_memory_limit(current_memory_limits());
  EXPECT_GT(here.bytes, 0);
}

} // namespace
} // namespace tcjit::support
