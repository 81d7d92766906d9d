// Several processes on one database at once, and processes killed (SIGKILL) mid-write.
#include "db_test_util.h"

#include "kernels_db/binary_store.h"
#include "kernels_db/connection.h"
#include "kernels_db/integrity.h"
#include "kernels_db/kernels_db.h"
#include "kernels_db/problem_store.h"
#include "kernels_db/result_store.h"
#include "kernels_db/schema.h"
#include "kernels_db/transaction.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <exception>
#include <random>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace tcjit::kernels_db {
namespace {

using testing::filter;
using testing::sample_binary;
using testing::sample_problem;
using testing::sample_result;
using testing::TempDir;

// Runs `body` in a child process; the child exits 0 when it returns, 1 when it throws.
template <typename Body> pid_t spawn(Body body) {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid != 0)
    return pid;
  int status = 0;
  try {
    body();
  } catch (const std::exception &error) {
    std::fprintf(stderr, "child %d: %s\n", static_cast<int>(::getpid()), error.what());
    status = 1;
  } catch (...) {
    status = 1;
  }
  ::_exit(status); // no atexit handlers, no gtest teardown in the child
}

int wait_exit_code(pid_t pid) {
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

ProblemRecord writer_problem(int writer, int i) {
  ProblemRecord problem = sample_problem(writer * 1000 + i);
  problem.key_text = "w" + std::to_string(writer) + ":" + problem.key_text;
  return problem;
}

TEST(KernelsDbConcurrency, ManyProcessesWriteAndReadOneDatabase) {
  TempDir dir;
  const auto path = dir.file("shared.db"); // created by the racing processes themselves
  constexpr int kWriters = 4;
  constexpr int kReaders = 2;
  constexpr int kItems = 40;
  std::vector<pid_t> writers, readers;
  for (int w = 0; w < kWriters; ++w)
    writers.push_back(spawn([&, w] {
      KernelsDb db = KernelsDb::open(path);
      for (int i = 0; i < kItems; ++i) {
        const ProblemRecord problem = writer_problem(w, i);
        db.put_problem(problem);
        db.put_binary(sample_binary(problem, 128));
        db.put_result(sample_result(problem, 128, 1.0 + i));
        db.put_result(sample_result(problem, 64, 2.0 + i));
      }
    }));
  for (int r = 0; r < kReaders; ++r)
    readers.push_back(spawn([&] {
      int64_t last_results = 0;
      for (int round = 0; round < 40; ++round) {
        KernelsDb db = KernelsDb::open(path);
        const DbStats stats = db.stats();
        if (stats.results < last_results)
          throw std::runtime_error("result count went down");
        last_results = stats.results;
        for (const ProblemSummary &summary : db.list(filter({}, {}, {}, "k=64", 0)))
          if (summary.results > 2 || summary.binaries > 1)
            throw std::runtime_error("too many rows for " + summary.problem.key_text);
        const ProblemRecord problem = writer_problem(round % kWriters, round % kItems);
        const BinaryLookup lookup =
            db.find_binary({problem.key_text, std::nullopt, "sm_80", "12.4", "0.1.0"});
        if (lookup.status == LookupStatus::corrupt)
          throw std::runtime_error("corrupt binary seen");
        ::usleep(2000);
      }
    }));
  for (pid_t pid : writers)
    EXPECT_EQ(wait_exit_code(pid), 0);
  for (pid_t pid : readers)
    EXPECT_EQ(wait_exit_code(pid), 0);

  KernelsDb db = KernelsDb::open(path);
  const DbStats stats = db.stats();
  EXPECT_EQ(stats.problems, kWriters * kItems);
  EXPECT_EQ(stats.binaries, kWriters * kItems);
  EXPECT_EQ(stats.results, 2 * kWriters * kItems);
  EXPECT_TRUE(KernelsDb::check(path).ok);
}

// One transaction: a problem, its binary and three results.
void write_group(Connection &connection, int round, int i) {
  ProblemRecord problem = sample_problem(i);
  problem.key_text = "round" + std::to_string(round) + ":" + problem.key_text;
  WriteTransaction transaction(connection);
  upsert_problem(connection, problem);
  BinaryRecord binary = sample_binary(problem, 128);
  binary.cubin.resize(4096 + static_cast<size_t>(i % 7) * 1000, 0x42); // spans pages
  upsert_binary(connection, binary);
  for (int t = 0; t < 3; ++t)
    insert_result(connection, sample_result(problem, 32 << t, 1.0 + t));
  transaction.commit();
}

TEST(KernelsDbConcurrency, KillNineMidWriteLeavesAConsistentDatabase) {
  TempDir dir;
  const auto path = dir.file("killed.db");
  std::mt19937 random(12345);
  int64_t previous = 0;
  for (int round = 0; round < 6; ++round) {
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    const pid_t pid = spawn([&] {
      ::close(ready[0]);
      Connection connection = Connection::open(path);
      prepare_schema(connection);
      for (int i = 0;; ++i) {
        write_group(connection, round, i);
        if (i == 0) {
          const char byte = 1;
          if (::write(ready[1], &byte, 1) != 1)
            ::_exit(3);
        }
      }
    });
    ::close(ready[1]);
    char byte = 0;
    ASSERT_EQ(::read(ready[0], &byte, 1), 1) << "the writer did not start";
    ::close(ready[0]);
    ::usleep(std::uniform_int_distribution<int>(0, 40000)(random));
    ::kill(pid, SIGKILL);
    EXPECT_EQ(wait_exit_code(pid), 128 + SIGKILL);

    const CheckReport report = KernelsDb::check(path);
    EXPECT_TRUE(report.ok) << (report.problems.empty() ? "" : report.problems.front());
    Connection connection = Connection::open(path);
    prepare_schema(connection);
    EXPECT_EQ(
        query_int64(connection,
                    "SELECT COUNT(*) FROM problems p WHERE "
                    "(SELECT COUNT(*) FROM problem_binaries l WHERE l.problem_id = p.id) <> 1 OR "
                    "(SELECT COUNT(*) FROM results r WHERE r.problem_id = p.id) <> 3"),
        0)
        << "a partial group survived";
    const int64_t problems = query_int64(connection, "SELECT COUNT(*) FROM problems");
    EXPECT_GT(problems, previous); // every round committed at least one group
    previous = problems;
  }
}

TEST(KernelsDbConcurrency, WritesWaitForAnotherWriterThenGiveUpClearly) {
  TempDir dir;
  const auto path = dir.file("locked.db");
  KernelsDb::open(path);
  Connection holder = Connection::open(path);
  holder.exec("BEGIN IMMEDIATE");
  std::thread release([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    holder.exec("COMMIT");
  });
  OpenOptions impatient;
  impatient.busy_timeout = std::chrono::milliseconds(10); // the retry loop does the waiting
  KernelsDb db = KernelsDb::open(path, impatient);
  const auto start = std::chrono::steady_clock::now();
  db.put_problem(sample_problem(0));
  EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(100));
  release.join();
  EXPECT_TRUE(db.find_problem(sample_problem(0).key_text));

  holder.exec("BEGIN IMMEDIATE");
  Connection writer = Connection::open(path, impatient);
  try {
    WriteTransaction transaction(writer, std::chrono::milliseconds(50));
    FAIL() << "the write lock was taken twice";
  } catch (const DbError &error) {
    EXPECT_EQ(error.kind(), DbErrorKind::busy);
    EXPECT_NE(error.how_to_fix().find("another process"), std::string::npos);
  }
  holder.exec("ROLLBACK");
}

} // namespace
} // namespace tcjit::kernels_db
