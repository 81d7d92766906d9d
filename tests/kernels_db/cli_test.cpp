// `tcjit db` subcommands, driven through a CLI::App as the tcjit tool does.
#include "db_test_util.h"

#include "kernels_db/connection.h"
#include "kernels_db/kernels_db.h"
#include "kernels_db/key_hash.h"
#include "runtime/cli/db_command.h"
#include "runtime/cli/exit_codes.h"

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

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
  cli::add_db_command(app, build_versions(), out, err);
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
  for (const char *sub : {"ls", "show", "ptx", "cubin", "stats", "prune", "export", "import",
                          "merge", "check", "vacuum"}) {
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
  EXPECT_EQ(json["results"][0]["time_us"]["median"], 12.5);
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
    table.tuner_version = "0.1.0";
    table.created_ms = 1700000000000;
    table.entries = {
        {R"({"m":[1,16]})", testing::sample_config(64), 4.5, ProvenanceKind::measured},
        {R"({"m":[17,4096]})", testing::sample_config(128), 30.0, ProvenanceKind::predicted}};
    kdb.put_dispatch_table(table);
  }
  CliRun run = db_run({"show", gemm.key_text});
  EXPECT_EQ(run.code, 0) << run.err;
  for (const char *part :
       {"dispatch tables (1", "tuner 0.1.0", "2 buckets", "{\"m\":[17,4096]}", "predicted", "4.50"})
    EXPECT_TRUE(contains(run.out, part)) << part << "\n" << run.out;
  run = db_run({"show", gemm.key_text, "--json"});
  auto json = nlohmann::json::parse(run.out);
  ASSERT_EQ(json["dispatch_tables"].size(), 1u);
  EXPECT_EQ(json["dispatch_tables"][0]["entries"][1]["dims"]["m"][1], 4096);
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
  const CliRun run = run_cli({"db", "ls", "--db", dir.file("none.db").string()});
  EXPECT_EQ(run.code, cli::kExitFailure);
  EXPECT_TRUE(contains(run.err, "no database at")) << run.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("none.db")));
}

} // namespace
} // namespace tcjit::kernels_db
