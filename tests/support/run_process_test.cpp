// run_process: arguments reach the program as given (no shell: no quoting, globbing or word
// splitting), stdout and stderr come back together, exit statuses and signals are reported, and a
// program that does not exist is reported, not thrown.
#include "support/run_process.h"

#include <gtest/gtest.h>

namespace tcjit::support {
namespace {

TEST(RunProcess, ArgumentsArePassedVerbatimWithoutAShell) {
  // A shell would expand $HOME and *, split "a b" and run `; echo x`.
  const ProcessResult r = run_process({"printf", "[%s]", "a b", "$HOME", "*", "; echo x", "'q'"});
  ASSERT_TRUE(r.started) << r.problem;
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "[a b][$HOME][*][; echo x]['q']");
}

TEST(RunProcess, StdoutAndStderrAreCapturedAndTheExitStatusReported) {
  const ProcessResult r = run_process({"sh", "-c", "echo out; echo err >&2; exit 3"});
  ASSERT_TRUE(r.started) << r.problem;
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.signal, 0);
  EXPECT_EQ(r.output, "out\nerr\n");
}

TEST(RunProcess, ASignalIsReported) {
  const ProcessResult r = run_process({"sh", "-c", "kill -9 $$"});
  ASSERT_TRUE(r.started) << r.problem;
  EXPECT_EQ(r.exit_code, -1);
  EXPECT_EQ(r.signal, 9);
}

TEST(RunProcess, AMissingProgramIsReportedNotThrown) {
  const ProcessResult r = run_process({"/nonexistent/tcjit-no-such-program", "-v"});
  EXPECT_FALSE(r.started);
  EXPECT_NE(r.problem.find("/nonexistent/tcjit-no-such-program"), std::string::npos) << r.problem;
  EXPECT_FALSE(run_process({}).started);
}

TEST(RunProcess, StdinIsEmpty) {
  // A program that reads stdin must not hang waiting for the terminal or the test's input.
  const ProcessResult r = run_process({"cat"});
  ASSERT_TRUE(r.started) << r.problem;
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.output, "");
}

} // namespace
} // namespace tcjit::support
