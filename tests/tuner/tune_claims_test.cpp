// Concurrent tunes of one database: a claim per problem (tuner/tune_claims.h), so that several
// `tcjit tune` processes on the same workload measure each config once; a claim dies with its
// process (kill -9 included); claim files and directories are never followed through symlinks.
#include "compiler/dsl/parser.h"
#include "compiler/spec/problem_key.h"
#include "kernels_db/kernels_db.h"
#include "tests/cli/run_tool.h"
#include "tuner/measure_model.h"
#include "tuner/perf_model.h"
#include "tuner/tune.h"
#include "tuner/tune_claims.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <csignal>
#include <fcntl.h>
#include <map>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace tcjit::tuner {
namespace {

using tcjit::testing::read_file;

class TuneClaims : public ::testing::Test {
protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("tcjit_claims_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    for (pid_t pid : children_) { // a test that failed half-way leaves none running
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
    std::filesystem::remove_all(dir_);
  }
  std::string path(const std::string &name) const { return (dir_ / name).string(); }

  // Starts `tcjit ARGS...` with its output in files "<tag>.out" and "<tag>.err".
  pid_t spawn_tool(const std::vector<std::string> &args, const std::string &tag) {
    std::vector<std::string> all{TCJIT_TOOL};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char *> argv;
    for (std::string &a : all)
      argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::string out = path(tag + ".out"), err = path(tag + ".err");
    const pid_t pid = ::fork();
    if (pid == 0) {
      const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      ::dup2(o, 1);
      ::dup2(e, 2);
      ::execv(argv[0], argv.data());
      ::_exit(127);
    }
    children_.push_back(pid);
    return pid;
  }

  // A child process that holds claim `name` of `claims_dir` until it is killed; returns once the
  // claim is held.
  pid_t spawn_holder(const std::string &claims_dir, const std::string &name) {
    int ready[2];
    EXPECT_EQ(::pipe(ready), 0);
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::close(ready[0]);
      std::string why;
      std::optional<ClaimDir> dir = ClaimDir::open(claims_dir, why);
      if (!dir)
        ::_exit(2);
      ClaimAttempt attempt = try_claim(*dir, name);
      if (attempt.state != ClaimState::taken)
        ::_exit(3);
      if (::write(ready[1], "x", 1) != 1)
        ::_exit(4);
      while (true)
        ::pause();
    }
    ::close(ready[1]);
    char c = 0;
    EXPECT_EQ(::read(ready[0], &c, 1), 1) << "the holder could not take the claim";
    ::close(ready[0]);
    children_.push_back(pid);
    return pid;
  }

  int wait_exit(pid_t pid) {
    int status = 0;
    EXPECT_EQ(::waitpid(pid, &status, 0), pid);
    children_.erase(std::remove(children_.begin(), children_.end(), pid), children_.end());
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  // Waits until file `tag`.err contains `text`; false when process `pid` exited first.
  bool wait_for_stderr(pid_t pid, const std::string &tag, const std::string &text) {
    while (read_file(path(tag + ".err")).find(text) == std::string::npos) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        children_.erase(std::remove(children_.begin(), children_.end(), pid), children_.end());
        return read_file(path(tag + ".err")).find(text) != std::string::npos;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return true;
  }

  // Waits until process `pid` has `file` open (/proc/PID/fd); false when it exited first.
  bool wait_until_open(pid_t pid, const std::string &file) {
    const std::filesystem::path fds = "/proc/" + std::to_string(pid) + "/fd";
    const std::filesystem::path wanted = std::filesystem::weakly_canonical(file);
    while (true) {
      std::error_code ec;
      for (const auto &fd : std::filesystem::directory_iterator(fds, ec)) {
        std::error_code link_ec;
        if (std::filesystem::read_symlink(fd.path(), link_ec) == wanted)
          return true;
      }
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == pid) {
        children_.erase(std::remove(children_.begin(), children_.end(), pid), children_.end());
        return false;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  std::filesystem::path dir_;
  std::vector<pid_t> children_;
};

constexpr const char *kProblemA = "gemm m=64 n=64 k=64 a=f16 b=f16:col c=f16 acc=f32";
constexpr const char *kProblemB = "gemm m=64 n=32 k=64 a=f16 b=f16:col c=f16 acc=f32";
constexpr const char *kProblemC = "gemm m=32 n=64 k=32 a=f16 b=f16:col c=f32 acc=f32";

std::string key_of(const std::string &spec) {
  const ParseResult parsed = parse_spec(spec);
  EXPECT_TRUE(parsed.ok()) << spec;
  return make_problem_key(parsed.entries.front().spec, "sm_80", false).text;
}

// The claim name `tcjit tune --device emu` takes for `spec`.
std::string emu_claim_name(const std::string &spec) {
  const auto measurer = make_model_measurer(gpu_model_for_arch("sm_80"), nullptr);
  return claim_name(key_of(spec), "sm_80", tuner_version(*measurer));
}

// The result rows of `specs` in `db`: how many per (problem, config, tuner version).
std::map<std::string, int> result_rows(const std::string &db_path,
                                       const std::vector<std::string> &specs) {
  auto db = kernels_db::KernelsDb::open(db_path);
  std::map<std::string, int> rows;
  for (const std::string &spec : specs)
    for (const kernels_db::ResultRecord &r : db.results(key_of(spec)))
      ++rows[r.problem_key + " | " + r.config_json + " | " + r.tuner_version];
  return rows;
}

size_t measured_in(const std::string &json_text) {
  size_t measured = 0;
  for (const auto &problem : nlohmann::json::parse(json_text))
    for (const auto &size : problem["sizes"])
      measured += size["measured"].get<size_t>();
  return measured;
}

TEST_F(TuneClaims, AClaimIsExclusiveAndDiesWithItsProcessEvenOnSigkill) {
  std::string why;
  std::optional<ClaimDir> dir = ClaimDir::open(path("k.db.claims"), why);
  ASSERT_TRUE(dir) << why;
  struct stat st {};
  ASSERT_EQ(::stat(dir->path().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
  const pid_t holder = spawn_holder(dir->path(), "p.lock");
  ClaimAttempt busy = try_claim(*dir, "p.lock");
  EXPECT_EQ(busy.state, ClaimState::busy);
  EXPECT_EQ(busy.holder, std::to_string(holder));
  // Waiting is stopped by the stop flag (Ctrl-C).
  std::atomic<bool> stop{true};
  EXPECT_EQ(wait_for_claim(*dir, "p.lock", &stop).state, ClaimState::stopped);
  // Another claim is not held by it.
  EXPECT_EQ(try_claim(*dir, "q.lock").state, ClaimState::taken);

  ::kill(holder, SIGKILL);
  EXPECT_EQ(wait_exit(holder), 128 + SIGKILL);
  ClaimAttempt mine = try_claim(*dir, "p.lock");
  ASSERT_EQ(mine.state, ClaimState::taken) << mine.why;
  EXPECT_EQ(read_file(path("k.db.claims/p.lock")), std::to_string(::getpid()) + "\n");
  EXPECT_EQ(try_claim(*dir, "p.lock").state, ClaimState::busy); // (a second open in this process)
  mine.claim.release();                                         // and its file is removed
  EXPECT_FALSE(std::filesystem::exists(path("k.db.claims/p.lock")));
  EXPECT_EQ(wait_for_claim(*dir, "p.lock", nullptr).state, ClaimState::taken);
}

TEST_F(TuneClaims, SymlinksFifosAndOtherFilesAreRefusedNotFollowed) {
  std::string why;
  std::optional<ClaimDir> dir = ClaimDir::open(path("k.db.claims"), why);
  ASSERT_TRUE(dir) << why;
  std::ofstream(path("victim")) << "keep me\n";
  std::filesystem::create_symlink(path("victim"), path("k.db.claims/evil.lock"));
  ClaimAttempt link = try_claim(*dir, "evil.lock");
  EXPECT_EQ(link.state, ClaimState::refused);
  EXPECT_NE(link.why.find("symbolic link (not followed)"), std::string::npos) << link.why;
  EXPECT_NE(link.why.find("evil.lock"), std::string::npos) << link.why;
  EXPECT_EQ(read_file(path("victim")), "keep me\n");
  EXPECT_TRUE(std::filesystem::is_symlink(path("k.db.claims/evil.lock")));
  // A dangling link is not created through either.
  std::filesystem::create_symlink(path("created"), path("k.db.claims/dangling.lock"));
  EXPECT_EQ(try_claim(*dir, "dangling.lock").state, ClaimState::refused);
  EXPECT_FALSE(std::filesystem::exists(path("created")));
  // A FIFO is refused at once (opening it would block).
  ASSERT_EQ(::mkfifo(path("k.db.claims/fifo.lock").c_str(), 0600), 0);
  ClaimAttempt fifo = try_claim(*dir, "fifo.lock");
  EXPECT_EQ(fifo.state, ClaimState::refused);
  EXPECT_NE(fifo.why.find("not a regular file"), std::string::npos) << fifo.why;

  // The directory itself: a symlink to a directory, or a file, is refused.
  std::filesystem::create_directories(path("elsewhere"));
  std::filesystem::create_directory_symlink(path("elsewhere"), path("l.db.claims"));
  EXPECT_FALSE(ClaimDir::open(path("l.db.claims"), why));
  EXPECT_NE(why.find("symbolic link (not followed)"), std::string::npos) << why;
  std::ofstream(path("f.db.claims")) << "";
  EXPECT_FALSE(ClaimDir::open(path("f.db.claims"), why));
  EXPECT_NE(why.find("not a directory"), std::string::npos) << why;
}

TEST_F(TuneClaims, ConcurrentTunesOfOneWorkloadMeasureEachConfigOnce) {
  const std::vector<std::string> specs{kProblemA, kProblemB, kProblemC};
  std::ofstream(path("w.tcjit")) << "a: " << kProblemA << "\nb: " << kProblemB
                                 << "\nc: " << kProblemC << "\n";
  auto tune = [&](const std::string &db, const std::string &tag) {
    return spawn_tool({"tune", path("w.tcjit"), "--device", "emu", "--budget", "2", "--jobs", "1",
                       "--json", "--db", path(db)},
                      tag);
  };
  // What one process writes.
  ASSERT_EQ(wait_exit(tune("one.db", "one")), 0) << read_file(path("one.err"));
  const std::map<std::string, int> one = result_rows(path("one.db"), specs);
  ASSERT_FALSE(one.empty());

  // Three at once on one database (created first, as a team's is).
  { auto created = kernels_db::KernelsDb::open(path("three.db")); }
  std::vector<pid_t> pids;
  for (int i = 0; i < 3; ++i)
    pids.push_back(tune("three.db", "p" + std::to_string(i)));
  size_t measured = 0;
  bool some_waited_or_found_it_tuned = false;
  for (int i = 0; i < 3; ++i) {
    const std::string tag = "p" + std::to_string(i);
    ASSERT_EQ(wait_exit(pids[size_t(i)]), 0) << read_file(path(tag + ".err"));
    measured += measured_in(read_file(path(tag + ".out")));
    const std::string out = read_file(path(tag + ".out"));
    some_waited_or_found_it_tuned |= out.find("tuned by another process") != std::string::npos ||
                                     out.find("already tuned") != std::string::npos;
  }
  const std::map<std::string, int> three = result_rows(path("three.db"), specs);
  EXPECT_EQ(three, one); // the same rows, each once: no config measured twice
  size_t rows = 0;
  for (const auto &[what, count] : one)
    rows += size_t(count);
  EXPECT_EQ(measured, rows); // and no process measured what another had
  EXPECT_TRUE(some_waited_or_found_it_tuned);
  // Claims released leave no file behind.
  EXPECT_TRUE(std::filesystem::is_directory(path("three.db.claims")) &&
              std::filesystem::is_empty(path("three.db.claims")));
}

TEST_F(TuneClaims, ConcurrentRetunesDoNotBothMeasure) {
  const std::vector<std::string> specs{kProblemA};
  auto tune = [&](const std::string &budget, bool retune, const std::string &db,
                  const std::string &tag) {
    std::vector<std::string> args{"tune",   kProblemA, "--device", "emu",  "--budget", budget,
                                  "--jobs", "1",       "--json",   "--db", path(db)};
    if (retune)
      args.push_back("--retune");
    return spawn_tool(args, tag);
  };
  // What one retune writes, after a first tune.
  ASSERT_EQ(wait_exit(tune("1", false, "one.db", "first")), 0) << read_file(path("first.err"));
  ASSERT_EQ(wait_exit(tune("3", true, "one.db", "retune")), 0) << read_file(path("retune.err"));
  const std::map<std::string, int> one = result_rows(path("one.db"), specs);

  ASSERT_EQ(wait_exit(tune("1", false, "two.db", "first2")), 0) << read_file(path("first2.err"));
  // Both retunes start while a third process holds the claim, so both began before either stores
  // its decision, however late the machine starts the second: then the holder goes.
  std::string why;
  ASSERT_TRUE(ClaimDir::open(path("two.db.claims"), why)) << why;
  const pid_t holder = spawn_holder(path("two.db.claims"), emu_claim_name(kProblemA));
  const pid_t a = tune("3", true, "two.db", "a");
  const pid_t b = tune("3", true, "two.db", "b");
  // A tune records when its run started before it opens the database (api/tune.cpp tune_ops).
  ASSERT_TRUE(wait_until_open(a, path("two.db"))) << read_file(path("a.err"));
  ASSERT_TRUE(wait_until_open(b, path("two.db"))) << read_file(path("b.err"));
  ::kill(holder, SIGKILL);
  wait_exit(holder);
  ASSERT_EQ(wait_exit(a), 0) << read_file(path("a.err"));
  ASSERT_EQ(wait_exit(b), 0) << read_file(path("b.err"));
  EXPECT_EQ(result_rows(path("two.db"), specs), one);
  EXPECT_EQ(measured_in(read_file(path("a.out"))) + measured_in(read_file(path("b.out"))),
            measured_in(read_file(path("retune.out"))));
}

TEST_F(TuneClaims, ATuneWaitsForTheClaimTunesWhenItsHolderIsKilledAndCtrlCStopsTheWait) {
  const std::string claims = path("k.db.claims");
  { auto created = kernels_db::KernelsDb::open(path("k.db")); }
  std::string why;
  ASSERT_TRUE(ClaimDir::open(claims, why)) << why;
  const std::vector<std::string> args{"tune", kProblemA, "--device", "emu",  "--budget",
                                      "2",    "--jobs",  "1",        "--db", path("k.db")};

  // Ctrl-C while waiting: exit 130 at once, nothing tuned.
  const pid_t holder = spawn_holder(claims, emu_claim_name(kProblemA));
  const pid_t stopped = spawn_tool(args, "stopped");
  ASSERT_TRUE(wait_for_stderr(stopped, "stopped", "waiting for process " + std::to_string(holder)))
      << read_file(path("stopped.err"));
  ::kill(stopped, SIGINT);
  EXPECT_EQ(wait_exit(stopped), 130) << read_file(path("stopped.err"));
  EXPECT_TRUE(result_rows(path("k.db"), {kProblemA}).empty());

  // A holder killed with SIGKILL lets the waiting tune go on and tune the problem.
  const pid_t waiting = spawn_tool(args, "waiting");
  ASSERT_TRUE(wait_for_stderr(waiting, "waiting", "waiting for process " + std::to_string(holder)))
      << read_file(path("waiting.err"));
  ::kill(holder, SIGKILL);
  wait_exit(holder);
  ASSERT_EQ(wait_exit(waiting), 0) << read_file(path("waiting.err"));
  const std::string out = read_file(path("waiting.out"));
  EXPECT_NE(out.find("2 of"), std::string::npos) << out; // measured here, not "tuned by another"
  EXPECT_EQ(result_rows(path("k.db"), {kProblemA}).size(), 2u);
}

TEST_F(TuneClaims, APlantedSymlinkOrAnUncreatableDirectoryIsSaidOnceAndTheTuneGoesOn) {
  { auto created = kernels_db::KernelsDb::open(path("k.db")); }
  std::string why;
  ASSERT_TRUE(ClaimDir::open(path("k.db.claims"), why)) << why;
  std::ofstream(path("victim")) << "keep me\n";
  const std::string planted = path("k.db.claims/" + emu_claim_name(kProblemA));
  std::filesystem::create_symlink(path("victim"), planted);
  const pid_t linked = spawn_tool(
      {"tune", kProblemA, "--device", "emu", "--budget", "1", "--jobs", "1", "--db", path("k.db")},
      "linked");
  ASSERT_EQ(wait_exit(linked), 0) << read_file(path("linked.err"));
  const std::string err = read_file(path("linked.err"));
  EXPECT_NE(err.find(planted + "' is a symbolic link (not followed)"), std::string::npos) << err;
  EXPECT_EQ(read_file(path("victim")), "keep me\n");
  EXPECT_TRUE(std::filesystem::is_symlink(planted));

  // "<db>.claims" a file: no claims, said once, every problem tuned.
  std::ofstream(path("f.db.claims")) << "";
  const pid_t plain = spawn_tool({"tune", kProblemA, kProblemB, "--device", "emu", "--budget", "1",
                                  "--jobs", "1", "--db", path("f.db")},
                                 "plain");
  ASSERT_EQ(wait_exit(plain), 0) << read_file(path("plain.err"));
  const std::string said = read_file(path("plain.err"));
  const std::string note = "is not a directory: tuning without claims";
  ASSERT_NE(said.find(note), std::string::npos) << said;
  EXPECT_EQ(said.find(note, said.find(note) + 1), std::string::npos) << said;
  EXPECT_EQ(result_rows(path("f.db"), {kProblemA, kProblemB}).size(), 2u);
}

} // namespace
} // namespace tcjit::tuner
