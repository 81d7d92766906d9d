// `tcjit db ls` and `db show` print what a handed-over file holds with its control characters
// escaped: an OSC 52 sequence in a stored spec text or device name (it would write the user's
// clipboard) comes out as \x1b]52;...\x07, never raw.
#include "db_test_util.h"

#include "cli/db_command.h"
#include "cli/exit_codes.h"
#include "kernels_db/kernels_db.h"
#include "kernels_db/schema.h"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>

#include <sstream>

namespace tcjit::kernels_db {
namespace {

struct DbRun {
  int code = -1;
  std::string out, err;
};

DbRun run_db(std::vector<std::string> args) {
  std::ostringstream out, err;
  CLI::App app{"tcjit test driver", "tcjit"};
  app.require_subcommand(1);
  const CurrentVersions versions = build_versions();
  cli::add_db_command(app, {versions.toolkit_version, versions.compiler_version}, out, err);
  std::vector<const char *> argv{"tcjit", "db"};
  for (const auto &arg : args)
    argv.push_back(arg.c_str());
  DbRun run;
  try {
    app.parse(static_cast<int>(argv.size()), const_cast<char **>(argv.data()));
    run.code = cli::kExitOk;
  } catch (const CLI::RuntimeError &e) {
    run.code = e.get_exit_code();
  }
  run.out = out.str();
  run.err = err.str();
  return run;
}

TEST(DbCliEscape, LsAndShowPrintControlCharactersEscaped) {
  testing::TempDir dir;
  const std::string db = dir.file("kernels.db").string();
  const std::string osc52 = "\x1b]52;c;ZXZpbA==\x07";
  ProblemRecord problem = testing::sample_problem(0);
  problem.spec_text += " " + osc52;
  problem.key_text += osc52;
  {
    KernelsDb kdb = KernelsDb::open(db);
    kdb.put_problem(problem);
    kdb.put_result(testing::sample_result(problem, 128, 12.5, "GPU " + osc52 + "\x9b"));
  }
  const std::string escaped = "\\x1b]52;c;ZXZpbA==\\x07";
  const DbRun ls = run_db({"ls", "--db", db});
  ASSERT_EQ(ls.code, cli::kExitOk) << ls.err;
  EXPECT_EQ(ls.out.find('\x1b'), std::string::npos) << ls.out;
  EXPECT_EQ(ls.out.find('\x07'), std::string::npos) << ls.out;
  EXPECT_NE(ls.out.find(escaped), std::string::npos) << ls.out;
  const DbRun show = run_db({"show", "--db", db, "f000000000000000"});
  ASSERT_EQ(show.code, cli::kExitOk) << show.err;
  EXPECT_EQ(show.out.find('\x1b'), std::string::npos) << show.out;
  EXPECT_EQ(show.out.find('\x07'), std::string::npos) << show.out;
  EXPECT_EQ(show.out.find('\x9b'), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("gemm m=1024 n=512 k=64 " + escaped), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("GPU " + escaped + "\\x9b"), std::string::npos) << show.out;
}

} // namespace
} // namespace tcjit::kernels_db
