// `tcjit db` subcommands, driven through a CLI::App as the tcjit tool does.
#include "db_test_util.h"

#include "cli/db_command.h"
#include "cli/exit_codes.h"
#include "kernels_db/connection.h"
#include "kernels_db/kernels_db.h"
#include "kernels_db/key_hash.h"
#include "kernels_db/schema.h"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <sstream>

#include <fcntl.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace tcjit::kernels_db {
namespace {

using testing::sample_binary;
using testing::sample_problem;
using testing::sample_result;
using testing::TempDir;

struct CliRun {
  int code = -1;
  std::string out, err;
};

CliRun run_cli(std::vector<std::string> args) {
  std::ostringstream out, err;
  CLI::App app{"tcjit test driver", "tcjit"};
  app.require_subcommand(1);
  const CurrentVersions versions = build_versions();
  cli::add_db_command(app, {versions.toolkit_version, versions.compiler_version}, out, err);
  std::vector<const char *> argv{"tcjit"};
  for (const auto &arg : args)
    argv.push_back(arg.c_str());
  CliRun run;
  try {
    app.parse(static_cast<int>(argv.size()), const_cast<char **>(argv.data()));
    run.code = cli::kExitOk;
  } catch (const CLI::RuntimeError &e) {
    run.code = e.get_exit_code();
  } catch (const CLI::ParseError &e) {
    run.code = app.exit(e, out, err) == 0 ? 0 : cli::kExitUsage;
  }
  run.out = out.str();
  run.err = err.str();
  return run;
}

std::string file_bytes(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

class DbCli : public ::testing::Test {
protected:
  TempDir dir;
  std::string db = dir.file("kernels.db").string();
  ProblemRecord gemm = sample_problem(0, "gemm", 2048);
  ProblemRecord small = sample_problem(1, "gemm", 128);
  const std::string toolkit = build_versions().toolkit_version;
  const std::string compiler = build_versions().compiler_version;

  void SetUp() override {
    KernelsDb kdb = KernelsDb::open(db);
    kdb.put_problem(gemm);
    kdb.put_problem(small);
    kdb.put_binary(sample_binary(gemm, 128, "sm_80", toolkit, compiler));
    kdb.put_binary(sample_binary(gemm, 64, "sm_80", "11.0", compiler)); // stale
    kdb.put_result(sample_result(gemm, 128, 12.5));
    kdb.put_result(sample_result(gemm, 64, 20.0));
  }

  CliRun db_run(std::vector<std::string> args) {
    args.insert(args.begin(), "db");
    args.push_back("--db");
    args.push_back(db);
    return run_cli(args);
  }
};

TEST_F(DbCli, HelpWorksForEverySubcommand) {
  for (const char *sub : {"ls", "show", "ptx", "cubin", "stats", "prune", "rebuild", "export",
                          "import", "merge", "check", "vacuum"}) {
    const CliRun run = run_cli({"db", sub, "--help"});
    EXPECT_EQ(run.code, 0) << sub;
    EXPECT_TRUE(contains(run.out, "--db")) << sub << run.out;
  }
  EXPECT_TRUE(contains(run_cli({"db", "ls", "--help"}).out, "--where"));
  EXPECT_NE(run_cli({"db"}).code, 0); // a subcommand is required
}

TEST_F(DbCli, LsListsAndFilters) {
  CliRun run = db_run({"ls"});
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_TRUE(contains(run.out, "HASH")) << run.out;
  EXPECT_TRUE(contains(run.out, gemm.key_text));
  EXPECT_TRUE(contains(run.out, "12.50"));
  EXPECT_TRUE(contains(run.out, "2 problems"));
  run = db_run({"ls", "--where", "m>=1024", "--json"});
  EXPECT_EQ(run.code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  ASSERT_EQ(json.size(), 1u);
  EXPECT_EQ(json[0]["key"], gemm.key_text);
  EXPECT_EQ(json[0]["binaries"], 2);
  EXPECT_EQ(db_run({"ls", "--op", "conv2d"}).out.find(gemm.key_text), std::string::npos);
  EXPECT_NE(db_run({"ls", "--op", "matmul"}).code, 0);
  run = db_run({"ls", "--where", "m>=1; DROP TABLE problems"});
  EXPECT_EQ(run.code, cli::kExitUsage);
  EXPECT_TRUE(contains(run.err, "invalid --where expression")) << run.err;
  EXPECT_EQ(db_run({"ls", "--arch", "sm_80", "--dtype", "f16", "--json"}).code, 0);
}

TEST_F(DbCli, ShowByKeyOrHash) {
  CliRun run = db_run({"show", gemm.key_text});
  EXPECT_EQ(run.code, 0) << run.err;
  for (const char *part : {"best config", "results (2", "binaries (2", "stale", "current",
                           "NVIDIA A100-SXM4-80GB", "49152", "gemm m=2048"})
    EXPECT_TRUE(contains(run.out, part)) << part << "\n" << run.out;
  run = db_run({"show", format_key_hash(gemm.key_hash), "--json"});
  EXPECT_EQ(run.code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  EXPECT_EQ(json["key"], gemm.key_text);
  EXPECT_EQ(json["results"].size(), 2u);
  EXPECT_EQ(json["results"][0]["median_us"], 12.5);
  EXPECT_EQ(json["results"][0]["measured_at_ms"], 1700000000000);
  EXPECT_EQ(json["results"][0]["measured_at"], "2023-11-14T22:13:20.000Z");
  run = db_run({"show", "nope"});
  EXPECT_EQ(run.code, cli::kExitFailure);
  EXPECT_TRUE(contains(run.err, "no problem with key or hash 'nope'"));
}

TEST_F(DbCli, PtxAndCubin) {
  CliRun run = db_run({"ptx", gemm.key_text});
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_TRUE(contains(run.out, ".target sm_80"));
  EXPECT_TRUE(contains(run.out, "tile 128")); // the current binary, not the stale one
  run = db_run({"ptx", gemm.key_text, "--toolkit-version", "11.0"});
  EXPECT_TRUE(contains(run.out, "tile 64"));
  run = db_run({"ptx", gemm.key_text, "--arch", "sm_86"});
  EXPECT_EQ(run.code, cli::kExitFailure);
  EXPECT_TRUE(contains(run.err, "no binary")) << run.err;
  const std::string file = dir.file("out.cubin").string();
  run = db_run({"cubin", format_key_hash(gemm.key_hash), "-o", file});
  EXPECT_EQ(run.code, 0) << run.err;
  std::ifstream in(file, std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const BinaryRecord expected = sample_binary(gemm, 128);
  EXPECT_EQ(bytes, std::string(expected.cubin.begin(), expected.cubin.end()));
  EXPECT_NE(db_run({"cubin", gemm.key_text}).code, 0); // -o is required
}

TEST_F(DbCli, StatsPruneVacuum) {
  CliRun run = db_run({"stats"});
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_TRUE(contains(run.out, "1 stale")) << run.out;
  run = db_run({"stats", "--json"});
  EXPECT_EQ(nlohmann::json::parse(run.out)["stale_binaries"], 1);
  EXPECT_EQ(db_run({"prune"}).code, cli::kExitUsage);
  EXPECT_EQ(db_run({"prune", "--older-than", "soon"}).code, cli::kExitUsage);
  run = db_run({"prune", "--stale"});
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_TRUE(contains(run.out, "removed 1 binaries")) << run.out;
  run = db_run({"prune", "--older-than", "30d", "--json"});
  EXPECT_EQ(nlohmann::json::parse(run.out)["results_removed"], 2); // measured in 2023
  run = db_run({"vacuum"});
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_TRUE(contains(run.out, "vacuumed"));
}

// `ls` gives what a run uses: the decided config and time (a predicted one marked), "-" when
// untuned; --sort orders by key, decided time (untuned last) or age (newest first).
TEST_F(DbCli, LsShowsTheDecidedConfigAndTimeAndSorts) {
  ProblemRecord old = sample_problem(2, "gemm", 64);
  old.created_ms = 1600000000000;
  {
    KernelsDb kdb = KernelsDb::open(db);
    kdb.put_problem(old);
    DispatchTable table;
    table.problem_key = small.key_text;
    table.arch = "sm_80";
    table.tuner_version = "tcjit-tuner 1 / 0.1.0 / model";
    table.created_ms = 1700000000000;
    table.entries = {{"{}", testing::sample_config(32), 3.0, ProvenanceKind::predicted}};
    kdb.put_dispatch_table(table);
  }
  CliRun run = db_run({"ls"});
  EXPECT_EQ(run.code, 0) << run.err;
  for (const char *part : {"CONFIG", "TIME_US", "TIME_FROM", "12.50", "measured", "3.00",
                           "predicted", "{\"stages\":3,\"tile_m\":32,\"tile_n\":128}"})
    EXPECT_TRUE(contains(run.out, part)) << part << "\n" << run.out;
  run = db_run({"ls", "--json"});
  EXPECT_EQ(run.code, 0) << run.err;
  auto rows = nlohmann::json::parse(run.out);
  ASSERT_EQ(rows.size(), 3u);
  for (const auto &row : rows) {
    if (row["key"] == small.key_text) {
      EXPECT_EQ(row["time_us"], 3.0);
      EXPECT_EQ(row["time_from"], "predicted");
      EXPECT_EQ(row["decision_source"], "dispatch table");
      EXPECT_TRUE(row["best_median_us"].is_null()) << "no measured result";
    } else if (row["key"] == gemm.key_text) {
      EXPECT_EQ(row["time_us"], 12.5);
      EXPECT_EQ(row["time_from"], "measured");
      EXPECT_EQ(row["config"], "{\"stages\":3,\"tile_m\":128,\"tile_n\":128}");
    } else {
      EXPECT_TRUE(row["config"].is_null()) << "untuned";
      EXPECT_TRUE(row["time_us"].is_null());
    }
  }
  auto keys = [&](std::vector<std::string> args) {
    args.insert(args.begin(), "ls");
    args.push_back("--json");
    const CliRun sorted = db_run(args);
    EXPECT_EQ(sorted.code, 0) << sorted.err;
    std::vector<std::string> order;
    for (const auto &row : nlohmann::json::parse(sorted.out))
      order.push_back(row["key"]);
    return order;
  };
  EXPECT_EQ(keys({"--sort", "time"}),
            (std::vector<std::string>{small.key_text, gemm.key_text, old.key_text}));
  EXPECT_EQ(keys({"--sort", "time", "--limit", "1"}), std::vector<std::string>{small.key_text});
  std::vector<std::string> by_key{small.key_text, gemm.key_text, old.key_text};
  std::sort(by_key.begin(), by_key.end());
  EXPECT_EQ(keys({"--sort", "key"}), by_key);
  EXPECT_EQ(keys({"--sort", "age"}).back(), old.key_text);
  EXPECT_EQ(db_run({"ls", "--sort", "speed"}).code, cli::kExitUsage);
}

// `show --json` is flat: scalars, and arrays of objects of scalars; timestamps are *_at (ISO text)
// and *_at_ms, never a *_ms that could be read as a duration.
TEST_F(DbCli, ShowJsonIsFlatAndScalar) {
  const CliRun run = db_run({"show", gemm.key_text, "--json"});
  ASSERT_EQ(run.code, 0) << run.err;
  const auto json = nlohmann::json::parse(run.out);
  auto check_key = [](const std::string &key) {
    if (key.size() > 3 && key.compare(key.size() - 3, 3, "_ms") == 0) {
      EXPECT_TRUE(key == "compile_ms" || key.find("_at_ms") != std::string::npos) << key;
    }
  };
  for (const auto &[key, value] : json.items()) {
    check_key(key);
    if (!value.is_array()) {
      EXPECT_TRUE(value.is_primitive()) << key << " is not a scalar: " << value.dump();
      continue;
    }
    for (const auto &row : value) {
      ASSERT_TRUE(row.is_object()) << key;
      for (const auto &[field, item] : row.items()) {
        check_key(field);
        EXPECT_TRUE(item.is_primitive()) << key << "." << field << ": " << item.dump();
      }
    }
  }
  EXPECT_EQ(json["shape"], "k=64 m=2048 n=512");
  ASSERT_EQ(json["results"].size(), 2u);
  EXPECT_TRUE(json["results"][0]["decides"]);
  EXPECT_FALSE(json["results"][0].contains("measured_ms"));
  EXPECT_EQ(json["decisions"][0]["config"], json["results"][0]["config"]);
}

// Every prune mode's --dry-run lists what the prune removes and writes nothing.
TEST_F(DbCli, PruneDryRunListsWhatItWouldRemoveAndWritesNothing) {
  const std::vector<std::vector<std::string>> modes = {
      {"--stale"}, {"--older-than", "30d"}, {"--stale", "--older-than", "30d"}};
  for (const auto &mode : modes) {
    const std::string copy = dir.file("copy.db").string();
    std::filesystem::remove(copy);
    std::filesystem::copy_file(db, copy);
    std::vector<std::string> args{"db", "prune", "--db", copy};
    args.insert(args.end(), mode.begin(), mode.end());
    const std::string before = file_bytes(copy);
    std::vector<std::string> dry = args;
    dry.push_back("--dry-run");
    CliRun run = run_cli(dry);
    EXPECT_EQ(run.code, 0) << run.err;
    EXPECT_TRUE(contains(run.out, "WOULD REMOVE")) << run.out;
    EXPECT_TRUE(contains(run.out, "dry run, nothing removed: would remove")) << run.out;
    dry.push_back("--json");
    run = run_cli(dry);
    EXPECT_EQ(run.code, 0) << run.err;
    const auto preview = nlohmann::json::parse(run.out);
    EXPECT_TRUE(preview["dry_run"]);
    EXPECT_EQ(file_bytes(copy), before) << mode[0];

    args.push_back("--json");
    run = run_cli(args);
    EXPECT_EQ(run.code, 0) << run.err;
    const auto done = nlohmann::json::parse(run.out);
    EXPECT_FALSE(done["dry_run"]);
    int64_t removed = 0;
    for (const char *count :
         {"binaries_removed", "results_removed", "problems_removed", "dispatch_tables_removed"}) {
      EXPECT_EQ(preview[count], done[count]) << count << " " << mode[0];
      removed += done[count].get<int64_t>();
    }
    EXPECT_GT(removed, 0) << mode[0];
    EXPECT_EQ(static_cast<int64_t>(preview["rows"].size()), removed) << mode[0];
  }
}

// A prune that removes a decided config's binary keeps the decision and says so, naming
// `tcjit db rebuild`.
TEST_F(DbCli, PruneNamesTheDecisionsItLeavesWithoutAKernel) {
  CliRun run = db_run({"prune", "--stale", "--toolkit-version", "99.0"});
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_TRUE(contains(run.out, "removed 2 binaries")) << run.out;
  EXPECT_TRUE(contains(run.out, "1 decided config has no kernel of toolkit 99.0")) << run.out;
  EXPECT_TRUE(contains(run.out, "`tcjit db rebuild --db " + db + "`")) << run.out;
  run = db_run({"prune", "--stale", "--toolkit-version", "99.0", "--json"});
  const auto json = nlohmann::json::parse(run.out);
  ASSERT_EQ(json["kernels_missing"].size(), 1u);
  EXPECT_EQ(json["kernels_missing"][0]["hash"], format_key_hash(gemm.key_hash));
  run = db_run({"show", gemm.key_text, "--json"});
  EXPECT_EQ(nlohmann::json::parse(run.out)["decisions"].size(), 1u) << "the decision is kept";
}

TEST_F(DbCli, ExportImportMergeCheck) {
  const std::string exported = dir.file("dump.jsonl").string();
  CliRun run = db_run({"export", "--format", "jsonl", "-o", exported});
  EXPECT_EQ(run.code, 0) << run.err;
  const std::string other = dir.file("other.db").string();
  run = run_cli({"db", "import", exported, "--db", other});
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_TRUE(contains(run.out, "imported 2 problems, 2 binaries, 2 results")) << run.out;
  run = db_run({"export"}); // to standard output
  EXPECT_TRUE(contains(run.out, "\"type\":\"tcjit-kernels-db\""));
  {
    KernelsDb kdb = KernelsDb::open(other);
    kdb.put_result(sample_result(small, 128, 3.0));
  }
  run = db_run({"merge", other, "--json"});
  EXPECT_EQ(run.code, 0) << run.err;
  const auto counts = nlohmann::json::parse(run.out);
  EXPECT_EQ(counts["results_added"], 1);
  EXPECT_EQ(counts["results_already_present"], 2);
  run = db_run({"check"});
  EXPECT_EQ(run.code, 0) << run.out << run.err;
  EXPECT_TRUE(contains(run.out, "quick_check ok"));
  run = db_run({"check", "--full", "--json"});
  EXPECT_EQ(nlohmann::json::parse(run.out)["check"], "integrity_check");
  run = db_run({"import", dir.file("missing.jsonl").string()});
  EXPECT_EQ(run.code, cli::kExitFailure);
}

TEST_F(DbCli, DispatchTablesInShowStatsExportAndPrune) {
  {
    KernelsDb kdb = KernelsDb::open(db);
    DispatchTable table;
    table.problem_key = gemm.key_text;
    table.arch = "sm_80";
    table.tuner_version = "tcjit-tuner 1 / 0.1.0 / cuda";
    table.created_ms = 1700000000000;
    table.entries = {
        {R"({"m":[1,16]})", testing::sample_config(64), 4.5, ProvenanceKind::measured},
        {R"({"m":[17,4096]})", testing::sample_config(128), 30.0, ProvenanceKind::predicted}};
    kdb.put_dispatch_table(table);
  }
  CliRun run = db_run({"show", gemm.key_text});
  EXPECT_EQ(run.code, 0) << run.err;
  for (const char *part : {"dispatch tables (1", "tuner tcjit-tuner 1 / 0.1.0 / cuda", "2 buckets",
                           "m=17..4096", "predicted", "4.50"})
    EXPECT_TRUE(contains(run.out, part)) << part << "\n" << run.out;
  run = db_run({"show", gemm.key_text, "--json"});
  auto json = nlohmann::json::parse(run.out);
  ASSERT_EQ(json["dispatch_entries"].size(), 2u);
  EXPECT_EQ(json["dispatch_entries"][1]["bucket"], "m=17..4096");
  EXPECT_EQ(json["dispatch_entries"][1]["bucket_json"], "{\"m\":[17,4096]}");
  EXPECT_EQ(json["dispatch_entries"][1]["table"], 1);
  run = db_run({"ls", "--where", "m>=1024", "--json"});
  EXPECT_EQ(nlohmann::json::parse(run.out)[0]["dispatch_tables"], 1);
  run = db_run({"stats"});
  EXPECT_TRUE(contains(run.out, "dispatch tables 1 (2 buckets)")) << run.out;
  run = db_run({"stats", "--json"});
  EXPECT_EQ(nlohmann::json::parse(run.out)["dispatch_entries"], 2);
  const std::string exported = dir.file("dump.jsonl").string();
  EXPECT_EQ(db_run({"export", "-o", exported}).code, 0);
  run = run_cli({"db", "import", exported, "--db", dir.file("other.db").string()});
  EXPECT_TRUE(contains(run.out, "2 results, 1 dispatch tables")) << run.out;
  run = db_run({"check"});
  EXPECT_TRUE(contains(run.out, "1 dispatch tables checked, 0 invalid")) << run.out;
  run = db_run({"prune", "--older-than", "30d"});
  EXPECT_TRUE(contains(run.out, "1 dispatch tables")) << run.out;
}

// The issue's evil dispatch table (year 9999, 'tcjit-tuner 999 evil') and a median of -5 us:
// `check` names them implausible and exits 3; `show` marks them and its best config is the
// honest one, the decision a run uses.
TEST_F(DbCli, CheckAndShowNameImplausibleDecisions) {
  {
    KernelsDb kdb = KernelsDb::open(db);
    DispatchTable table;
    table.problem_key = gemm.key_text;
    table.arch = "sm_80";
    table.tuner_version = "tcjit-tuner 999 evil";
    table.created_ms = 253402300799000;
    table.entries = {{"{}", testing::sample_config(256), 0.001, ProvenanceKind::measured}};
    kdb.put_dispatch_table(table);
    ResultRecord negative = sample_result(gemm, 32, -5);
    negative.tflops.reset();
    kdb.put_result(negative);
  }
  CliRun run = db_run({"check"});
  EXPECT_EQ(run.code, cli::kExitFailure);
  for (const char *part : {"2 implausible", "implausible: dispatch table of",
                           "tcjit-tuner 999 evil", "implausible: results row", "median_us -5"})
    EXPECT_TRUE(contains(run.out, part)) << part << "\n" << run.out;
  run = db_run({"show", gemm.key_text});
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_TRUE(contains(run.out, "best config per arch (the decision a run uses):\n  sm_80: "
                                "{\"stages\":3,\"tile_m\":128,\"tile_n\":128}  12.50 us"))
      << run.out;
  EXPECT_TRUE(contains(run.out, "(implausible, ignored: created_ms 253402300799000")) << run.out;
  EXPECT_TRUE(contains(run.out, "(implausible, ignored: median_us -5")) << run.out;
}

TEST_F(DbCli, NewerDatabaseIsRefusedWithAClearMessage) {
  {
    Connection raw = Connection::open(db);
    raw.exec("PRAGMA user_version = 77");
  }
  const CliRun run = db_run({"ls"});
  EXPECT_EQ(run.code, cli::kExitFailure);
  EXPECT_TRUE(contains(run.err, "created by a newer tcjit (schema 77 > ")) << run.err;
  EXPECT_TRUE(contains(run.err, "upgrade tcjit or use another --db")) << run.err;
}

TEST_F(DbCli, MissingDatabaseIsNotCreatedByReads) {
  for (const std::vector<std::string> &command : std::vector<std::vector<std::string>>{
           {"ls"}, {"prune", "--stale", "--dry-run"}, {"rebuild", "--dry-run"}, {"rebuild"}}) {
    std::vector<std::string> args{"db"};
    args.insert(args.end(), command.begin(), command.end());
    args.insert(args.end(), {"--db", dir.file("none.db").string()});
    const CliRun run = run_cli(args);
    EXPECT_EQ(run.code, cli::kExitFailure) << command[0];
    EXPECT_TRUE(contains(run.err, "no database at")) << run.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("none.db"))) << command[0];
  }
}

// Runs `run` as a user who may not write `dir` (nor the files root owns in it): as root (where
// permissions do not apply) in a child process switched to nobody, else with `dir` made
// read-only for the call. Returns the exit code and stderr + stdout of the run.
CliRun run_without_write_access(const std::filesystem::path &dir,
                                const std::function<CliRun()> &run) {
  if (::geteuid() != 0) {
    ::chmod(dir.c_str(), 0555);
    CliRun result = run();
    ::chmod(dir.c_str(), 0755);
    return result;
  }
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0)
    return {};
  const pid_t child = ::fork();
  if (child == 0) {
    ::close(pipe_fds[0]);
    if (::setgid(65534) != 0 || ::setuid(65534) != 0)
      ::_exit(120);
    const CliRun result = run();
    const std::string text = result.err + result.out;
    const ssize_t written = ::write(pipe_fds[1], text.data(), text.size());
    ::_exit(written < 0 ? 121 : result.code);
  }
  ::close(pipe_fds[1]);
  CliRun result;
  char buffer[4096];
  for (ssize_t n; (n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0;)
    result.err.append(buffer, static_cast<size_t>(n));
  ::close(pipe_fds[0]);
  int status = 0;
  ::waitpid(child, &status, 0);
  result.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = result.err;
  return result;
}

TEST_F(DbCli, NegativeUserVersionIsAClearErrorInEveryCommand) {
  const std::string exported = dir.file("dump.jsonl").string();
  ASSERT_EQ(db_run({"export", "-o", exported}).code, 0);
  const std::string other = dir.file("other.db").string();
  { KernelsDb::open(other); }
  {
    Connection raw = Connection::open(db);
    raw.exec("PRAGMA user_version = -1");
  }
  const std::vector<std::vector<std::string>> commands = {
      {"ls"},
      {"ls", "--json"},
      {"show", gemm.key_text},
      {"ptx", gemm.key_text},
      {"cubin", gemm.key_text, "-o", dir.file("x.cubin").string()},
      {"stats"},
      {"prune", "--stale"},
      {"export"},
      {"import", exported},
      {"merge", other},
      {"vacuum"}};
  for (const auto &command : commands) {
    const CliRun run = db_run(command);
    EXPECT_EQ(run.code, cli::kExitFailure) << command[0] << run.err;
    EXPECT_TRUE(contains(run.err, "invalid schema version -1")) << command[0] << run.err;
    EXPECT_TRUE(contains(run.err, db)) << command[0] << run.err;
  }
  // Merging from such a file is refused too.
  CliRun run = run_cli({"db", "merge", db, "--db", other});
  EXPECT_EQ(run.code, cli::kExitFailure);
  EXPECT_TRUE(contains(run.err, "invalid schema version -1")) << run.err;
  run = db_run({"check"});
  EXPECT_EQ(run.code, cli::kExitFailure);
  EXPECT_TRUE(contains(run.out, "wrong user_version -1")) << run.out;
}

TEST_F(DbCli, ReadOnlyCommandsRefuseAForeignFileAndLeaveItUnmodified) {
  const auto foreign = dir.file("foreign.db");
  {
    Connection raw = Connection::open(foreign);
    raw.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT); "
             "INSERT INTO notes (text) VALUES ('keep me')");
  }
  const auto empty = dir.file("empty.db");
  std::ofstream(empty).close();
  for (const auto &file : {foreign, empty}) {
    const std::string before = file_bytes(file);
    for (const std::vector<std::string> &command :
         std::vector<std::vector<std::string>>{{"ls"},
                                               {"show", "x"},
                                               {"ptx", "x"},
                                               {"cubin", "x", "-o", dir.file("x.cubin").string()},
                                               {"stats"},
                                               {"prune", "--stale", "--dry-run"},
                                               {"rebuild", "--dry-run"},
                                               {"export"},
                                               {"check"}}) {
      std::vector<std::string> args{"db"};
      args.insert(args.end(), command.begin(), command.end());
      args.insert(args.end(), {"--db", file.string()});
      const CliRun run = run_cli(args);
      EXPECT_EQ(run.code, command[0] == "check" ? cli::kExitFailure : cli::kExitUsage)
          << command[0] << run.err;
      EXPECT_TRUE(contains(run.err + run.out, "not a tcjit kernel database"))
          << command[0] << run.err << run.out;
    }
    EXPECT_EQ(file_bytes(file), before) << file;
    EXPECT_FALSE(std::filesystem::exists(file.string() + "-wal")) << file;
    EXPECT_FALSE(std::filesystem::exists(file.string() + "-shm")) << file;
  }
}

// Issue 24: a file that is not an SQLite database at all (a workload file) is "not a tcjit kernel
// database", exit 2, for every subcommand (it said "database file is damaged ... delete the file",
// exit 3), as `--db` and as merge's OTHER; it is left alone.
TEST_F(DbCli, AFileThatIsNotADatabaseIsABadArgumentForEverySubcommand) {
  const auto workload = dir.file("workload.tcjit");
  std::ofstream(workload) << "gemm m=1024 n=1024 k=1024 a=f16 b=f16\n";
  const std::string before = file_bytes(workload);
  const std::string path = workload.string();
  for (const std::vector<std::string> &args :
       std::vector<std::vector<std::string>>{{"db", "ls", "--db", path},
                                             {"db", "show", "x", "--db", path},
                                             {"db", "stats", "--db", path},
                                             {"db", "export", "--db", path},
                                             {"db", "check", "--db", path},
                                             {"db", "check", "--full", "--db", path},
                                             {"db", "prune", "--stale", "--db", path},
                                             {"db", "vacuum", "--db", path},
                                             {"db", "merge", db, "--db", path},
                                             {"db", "merge", path, "--db", db}}) {
    const CliRun run = run_cli(args);
    EXPECT_EQ(run.code, cli::kExitUsage) << args[1] << " " << args[2] << run.err << run.out;
    EXPECT_TRUE(contains(run.err, "not a tcjit kernel database")) << args[1] << run.err;
    EXPECT_FALSE(contains(run.err, "delete the file")) << args[1] << run.err;
  }
  EXPECT_EQ(file_bytes(workload), before);
}

// Issue 24: `--db` (or merge's OTHER) that is a FIFO, a device or a directory is refused by stat()
// before any open (`db ls|doctor|merge --db FIFO` blocked forever). The test holds the FIFO open so
// that a build that opens it fails instead of blocking.
TEST_F(DbCli, ADbThatIsNotARegularFileIsRefusedAtOnce) {
  const auto fifo = dir.file("fifo.db");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const int held = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK);
  ASSERT_GE(held, 0);
  for (const std::string &path : {fifo.string(), std::string("/dev/null")}) {
    for (const std::vector<std::string> &args :
         std::vector<std::vector<std::string>>{{"db", "ls", "--db", path},
                                               {"db", "stats", "--db", path},
                                               {"db", "check", "--db", path},
                                               {"db", "vacuum", "--db", path},
                                               {"db", "merge", path, "--db", db}}) {
      const CliRun run = run_cli(args);
      EXPECT_EQ(run.code, cli::kExitUsage) << args[1] << " " << path << run.err;
      EXPECT_TRUE(contains(run.err, "not a regular file")) << args[1] << run.err;
    }
  }
  ::close(held);
}

// Issue 24: a trigger tcjit did not create is refused (exit 3, named), `db check` lists it, and a
// merge of such a file is refused with its source left byte for byte.
TEST_F(DbCli, AForeignTriggerIsRefusedNamedAndListedByCheck) {
  const auto trapped = dir.file("trapped.db");
  {
    KernelsDb kdb = KernelsDb::open(trapped);
    kdb.put_problem(gemm);
  }
  {
    sqlite3 *raw = nullptr;
    ASSERT_EQ(sqlite3_open(trapped.c_str(), &raw), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(raw,
                           "CREATE TRIGGER evil AFTER INSERT ON results BEGIN DELETE FROM "
                           "binaries; DELETE FROM dispatch_tables; END",
                           nullptr, nullptr, nullptr),
              SQLITE_OK);
    sqlite3_close(raw);
  }
  const std::string named = "trigger 'evil' on table 'results' was not created by tcjit";
  const std::string before = file_bytes(trapped);
  CliRun run = run_cli({"db", "ls", "--db", trapped.string()});
  EXPECT_EQ(run.code, cli::kExitFailure) << run.err;
  EXPECT_TRUE(contains(run.err, named)) << run.err;
  run = run_cli({"db", "check", "--db", trapped.string()});
  EXPECT_EQ(run.code, cli::kExitFailure) << run.out;
  EXPECT_TRUE(contains(run.out, "damage: " + named)) << run.out;
  run = run_cli({"db", "merge", trapped.string(), "--db", db});
  EXPECT_EQ(run.code, cli::kExitFailure) << run.err;
  EXPECT_TRUE(contains(run.err, named)) << run.err;
  EXPECT_EQ(file_bytes(trapped), before);
  EXPECT_EQ(run_cli({"db", "check", "--full", "--db", db}).code, cli::kExitOk);
}

TEST_F(DbCli, ReadOnlyCommandsDoNotMigrateAnOldDatabase) {
  const auto old = dir.file("old.db");
  {
    Connection raw = Connection::open(old);
    migrate_to(raw, 1);
  }
  const std::string before = file_bytes(old);
  const CliRun run = run_cli({"db", "ls", "--db", old.string()});
  EXPECT_EQ(run.code, cli::kExitUsage);
  EXPECT_TRUE(contains(run.err, "cannot be migrated read-only")) << run.err;
  EXPECT_TRUE(contains(run.err, "tcjit db vacuum --db")) << run.err;
  EXPECT_EQ(file_bytes(old), before);
}

TEST_F(DbCli, ReadOnlyCommandsWorkWithoutWriteAccess) {
  // The fixture's database is in WAL mode and closed: no -wal or -shm file, which SQLite cannot
  // create in a directory it may not write.
  ASSERT_FALSE(std::filesystem::exists(db + "-wal"));
  ::chmod(db.c_str(), 0644);
  const std::string before = file_bytes(db);
  for (const std::vector<std::string> &command : std::vector<std::vector<std::string>>{
           {"ls"},
           {"show", gemm.key_text, "--json"},
           {"ptx", gemm.key_text},
           {"stats"},
           {"prune", "--stale", "--older-than", "1s", "--dry-run"},
           {"rebuild", "--dry-run"},
           {"export"},
           {"check"}}) {
    const CliRun run = run_without_write_access(dir.path(), [&] { return db_run(command); });
    if (command[0] == "rebuild") { // the fixture's sample specs do not give their keys
      EXPECT_EQ(run.code, cli::kExitFailure) << run.err;
      EXPECT_TRUE(contains(run.out, "the stored spec text does not give")) << run.out;
      continue;
    }
    EXPECT_EQ(run.code, 0) << command[0] << ": " << run.err;
    if (command[0] == "ls") {
      EXPECT_TRUE(contains(run.out, gemm.key_text)) << run.out;
    }
    if (command[0] == "ptx") {
      EXPECT_TRUE(contains(run.out, "tile 128")) << run.out;
    }
  }
  EXPECT_EQ(file_bytes(db), before);
  EXPECT_FALSE(std::filesystem::exists(db + "-wal"));
}

TEST_F(DbCli, PermissionDeniedIsNamedWithThePath) {
  ::chmod(db.c_str(), 0600);
  ::chmod(dir.path().c_str(), 0755);
  for (const char *command : {"ls", "stats", "prune"}) {
    const CliRun run = run_without_write_access(dir.path(), [&] {
      ::chmod(db.c_str(), ::geteuid() == 0 ? 0600 : 0000);
      return command == std::string("prune") ? db_run({"prune", "--stale"}) : db_run({command});
    });
    EXPECT_EQ(run.code, cli::kExitFailure) << command << run.err;
    EXPECT_TRUE(contains(run.err, "permission denied")) << command << ": " << run.err;
    EXPECT_TRUE(contains(run.err, db)) << command << ": " << run.err;
  }
  ::chmod(db.c_str(), 0644);
}

TEST_F(DbCli, BadDbPathsAndLimitsAreRefusedClearly) {
  // --db "" is an error; it does not fall back to the default database.
  const auto fallback = dir.file("default.db");
  ::setenv("TCJIT_DB", fallback.c_str(), 1);
  const std::string exported = dir.file("dump.jsonl").string();
  ASSERT_EQ(db_run({"export", "-o", exported}).code, 0);
  for (const std::vector<std::string> &args :
       std::vector<std::vector<std::string>>{{"db", "ls", "--db", ""},
                                             {"db", "import", exported, "--db", ""},
                                             {"db", "vacuum", "--db", ""}}) {
    const CliRun run = run_cli(args);
    EXPECT_EQ(run.code, cli::kExitUsage) << args[1] << run.err << run.out;
    EXPECT_TRUE(contains(run.err + run.out, "empty path")) << run.err << run.out;
  }
  EXPECT_FALSE(std::filesystem::exists(fallback));
  ::unsetenv("TCJIT_DB");
  // A directory is named by its path (not ":memory:").
  for (const char *command : {"ls", "prune", "check"}) {
    std::vector<std::string> args{"db", command};
    if (command == std::string("prune"))
      args.push_back("--stale");
    args.insert(args.end(), {"--db", dir.path().string()});
    const CliRun run = run_cli(args);
    EXPECT_EQ(run.code, cli::kExitUsage) << command << run.err;
    EXPECT_TRUE(contains(run.err, "'" + dir.path().string() +
                                      "' is a directory, not a regular "
                                      "file"))
        << run.err;
    EXPECT_FALSE(contains(run.err, ":memory:")) << run.err;
  }
  // A negative --limit.
  const CliRun run = db_run({"ls", "--limit", "-5"});
  EXPECT_EQ(run.code, cli::kExitUsage);
  EXPECT_TRUE(contains(run.err, "--limit -5 is negative")) << run.err;
}

// A copy of the fixture's database with `sql` applied (on a raw connection).
std::string damaged_copy(const TempDir &dir, const std::string &db, const std::string &name,
                         const std::string &sql) {
  const std::string copy = dir.file(name).string();
  std::filesystem::copy_file(db, copy);
  Connection raw = Connection::open(copy);
  raw.exec(sql);
  return copy;
}

TEST_F(DbCli, CheckNamesEachBreakage) {
  struct Case {
    const char *name;
    const char *sql;
    const char *expected;
  } cases[] = {
      {"dropped.db", "DROP TABLE dispatch_entries",
       "table 'dispatch_entries' of schema 3 is missing"},
      {"dropped_index.db", "DROP INDEX results_by_age",
       "index 'results_by_age' of schema 2 is missing"},
      {"wrong_version.db", "PRAGMA user_version = 2",
       "wrong user_version 2: the file has table 'dispatch_tables' of schema 3"},
      {"zero_version.db", "PRAGMA user_version = 0", "wrong user_version 0"},
      {"newer.db", "PRAGMA user_version = 9", "wrong user_version 9: schema newer than"},
      {"negative.db", "PRAGMA user_version = -7", "wrong user_version -7"},
      {"shape.db",
       "PRAGMA ignore_check_constraints = ON; UPDATE problems SET shape_json = '{\"m\":'",
       "problems row 1: shape_json not valid JSON"},
      {"resources.db",
       "PRAGMA ignore_check_constraints = ON; UPDATE binaries SET resources_json = 'x'",
       "binaries row 1: resources_json not valid JSON"},
      {"config.db", "PRAGMA ignore_check_constraints = ON; UPDATE results SET config_json = '['",
       "results row 1: config_json not valid JSON"},
      {"text_number.db", "UPDATE results SET median_us = 'fast'",
       "results row 1: median_us holds text"},
      {"cubin.db", "UPDATE binaries SET cubin = zeroblob(4) WHERE id = 1", "cubin sha256 mismatch"},
  };
  ASSERT_EQ(db_run({"check"}).code, 0);
  for (const Case &c : cases) {
    const std::string copy = damaged_copy(dir, db, c.name, c.sql);
    CliRun run = run_cli({"db", "check", "--db", copy});
    EXPECT_EQ(run.code, cli::kExitFailure) << c.name << run.out;
    EXPECT_TRUE(contains(run.out, c.expected)) << c.name << ": " << run.out;
    run = run_cli({"db", "check", "--db", copy, "--json"});
    EXPECT_EQ(run.code, cli::kExitFailure) << c.name;
    EXPECT_FALSE(nlohmann::json::parse(run.out)["ok"]) << c.name;
  }
}

TEST_F(DbCli, MalformedStoredJsonIsReportedNotAnInternalError) {
  {
    Connection raw = Connection::open(db);
    raw.exec("PRAGMA ignore_check_constraints = ON; UPDATE problems SET shape_json = '{bad' "
             "WHERE id = 1; UPDATE binaries SET resources_json = '[1,'");
  }
  CliRun run = db_run({"ls", "--json"});
  EXPECT_EQ(run.code, 0) << run.err;
  auto listed = nlohmann::json::parse(run.out);
  bool flagged = false;
  for (const auto &row : listed)
    if (row["key"] == gemm.key_text) {
      EXPECT_EQ(row["shape"], "{bad");
      EXPECT_EQ(row["invalid_json"], nlohmann::json::array({"shape"}));
      flagged = true;
    }
  EXPECT_TRUE(flagged) << run.out;
  run = db_run({"show", gemm.key_text, "--json"});
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_EQ(nlohmann::json::parse(run.out)["shape"], "{bad");
  run = db_run({"show", gemm.key_text});
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_TRUE(contains(run.out, "{bad")) << run.out;
  const std::string exported = dir.file("dump.jsonl").string();
  run = db_run({"export", "-o", exported});
  EXPECT_EQ(run.code, 0) << run.err;
  EXPECT_TRUE(contains(run.err, "warning: problem '" + gemm.key_text +
                                    "': stored shape is not "
                                    "valid JSON"))
      << run.err;
  // Importing that export rejects the damaged records, with their lines, and keeps the rest.
  run = run_cli({"db", "import", exported, "--db", dir.file("fresh.db").string()});
  EXPECT_EQ(run.code, cli::kExitFailure);
  EXPECT_TRUE(contains(run.err, "rejected import line 2: field 'shape'")) << run.err;
  EXPECT_TRUE(contains(run.out, "imported 1 problems")) << run.out;
}

TEST_F(DbCli, ImportRejectsABinaryWithAnEmptyHashAndKeepsTheStoredCubin) {
  const std::string exported = dir.file("dump.jsonl").string();
  ASSERT_EQ(db_run({"export", "-o", exported}).code, 0);
  std::ifstream in(exported);
  std::string text, line;
  int line_number = 0, damaged_line = 0;
  while (std::getline(in, line)) {
    ++line_number;
    auto object = nlohmann::json::parse(line);
    if (object["type"] == "binary" && damaged_line == 0) {
      object["cubin_base64"] = "";
      object["cubin_sha256"] = "";
      damaged_line = line_number;
    }
    text += object.dump() + "\n";
  }
  const std::string damaged = dir.file("damaged.jsonl").string();
  std::ofstream(damaged) << text;
  const CliRun run = db_run({"import", damaged});
  EXPECT_EQ(run.code, cli::kExitFailure);
  EXPECT_TRUE(contains(run.err, "rejected import line " + std::to_string(damaged_line) +
                                    ": binary without a cubin_sha256"))
      << run.err;
  const std::string cubin = dir.file("out.cubin").string();
  ASSERT_EQ(db_run({"cubin", gemm.key_text, "-o", cubin}).code, 0);
  const BinaryRecord expected = sample_binary(gemm, 128);
  EXPECT_EQ(file_bytes(cubin), std::string(expected.cubin.begin(), expected.cubin.end()));
  EXPECT_EQ(db_run({"check"}).code, 0);
}

TEST_F(DbCli, ImportOfADeeplyNestedShapeIsRejectedNotACrash) {
  const std::string file = dir.file("deep.jsonl").string();
  std::ofstream(file) << "{\"type\":\"tcjit-kernels-db\",\"schema\":3}\n"
                      << R"({"type":"problem","key":"gemm:deep","hash":"00000000000000ab",)"
                      << R"("op":"gemm","dtype":"f16","arch":"sm_80","spec":"x","shape":)"
                      << std::string(100000, '[') << std::string(100000, ']')
                      << R"(,"created_ms":5})"
                      << "\n"
                      << R"({"type":"problem","key":"gemm:flat","hash":"00000000000000ac",)"
                      << R"("op":"gemm","dtype":"f16","arch":"sm_80","spec":"x","shape":{"m":1},)"
                      << R"("created_ms":5})"
                      << "\n";
  const CliRun run = db_run({"import", file});
  EXPECT_EQ(run.code, cli::kExitFailure);
  EXPECT_TRUE(contains(run.err, "rejected import line 2: the record nests arrays or objects "
                                "100001 deep (at most 64)"))
      << run.err;
  EXPECT_TRUE(contains(run.out, "imported 1 problems")) << run.out;
  EXPECT_TRUE(contains(db_run({"ls"}).out, "gemm:flat"));
}

} // namespace
} // namespace tcjit::kernels_db
