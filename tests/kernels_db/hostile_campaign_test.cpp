// The hostile-colleague campaign against handed-over databases, end to end through the `tcjit`
// binary. One honest database is made by `tcjit run` and `tcjit tune`; each case copies it, plants
// what a hostile colleague would (SQL triggers, views, indexes and tables; a kernel that returns at
// once with its PTX, cubin and hash consistent; damaged PTX; a decision from the future; impossible
// times; files that are not databases; FIFOs and devices) with the SQLite C API, hands it to
// `tcjit` and checks the exit code, the shared phrases of the issue and that no honest row is lost.
// It ends with the line the README's Reliability section quotes:
//   hostile campaign: N files tried, R refused, B rebuilt, 0 lost
// One test: every case needs the honest database, which takes a few seconds of tuning to make.
#include "db_test_util.h"

#include "kernels_db/base64.h"
#include "kernels_db/sha256.h"
#include "tests/cli/run_tool.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sqlite3.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace tcjit::kernels_db {
namespace {

namespace fs = std::filesystem;
using tcjit::testing::read_file;
using tcjit::testing::shell_quote;
using json = nlohmann::json;

// The GEMM `run` serves from the database (run only: no dispatch table, so a measured result
// would decide its config; of another kernel family than the tuned two — its C is f32 — so that
// their dispatch tables do not decide it: docs/tuner.md), the GEMM tuned concretely (a one-bucket
// dispatch table decides its config) and a size range (a dispatch table of several buckets).
const std::string kRunGemm = "gemm m=64 n=64 k=64 a=f16:row b=f16:col c=f32:row acc=f32";
const std::string kTunedGemm = "gemm m=32 n=64 k=64 a=f16:row b=f16:col c=f16:row acc=f32";
const std::string kRangeGemm = "gemm m=1..64 n=32 k=64 a=f16:row b=f16:col c=f16:row acc=f32";

// The tables tcjit creates: their rows are the honest content that must never be lost.
const std::vector<std::string> kTables = {
    "problems", "binaries", "results", "problem_binaries", "dispatch_tables", "dispatch_entries"};

// Hang guards only, no performance assertion: a command still running after its guard is killed,
// and its exit status (124 or 137) fails the case's exit-code check. A tiny GEMM runs or tunes in
// seconds; a file that must be refused at open is refused before anything is compiled or run (a
// short guard: today's code hangs there, and reading /dev/zero grows by 50 MB/s).
constexpr int kHangGuardSeconds = 300;
constexpr int kRefusalGuardSeconds = 10;

struct Tool {
  int code = -1;
  std::string out, err;
  std::string all() const { return out + "\n" + err; }
};

bool contains(const std::string &text, const std::string &part) {
  return text.find(part) != std::string::npos;
}

bool says_rebuilt(const Tool &t) {
  return contains(t.all(), "rebuilt") || contains(t.all(), "discarded");
}

// ---- SQLite, as a hostile colleague uses it ----

class Sql {
public:
  explicit Sql(const fs::path &path) {
    if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE, nullptr) != SQLITE_OK)
      ADD_FAILURE() << "sqlite3_open_v2 " << path << ": " << sqlite3_errmsg(db_);
  }
  ~Sql() { sqlite3_close_v2(db_); }
  Sql(const Sql &) = delete;
  Sql &operator=(const Sql &) = delete;

  void exec(const std::string &sql) {
    char *error = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK)
      ADD_FAILURE() << sql << ": " << (error ? error : "?");
    sqlite3_free(error);
  }

  // Each row of `sql` as its columns' values (text; blobs as their bytes; NULL as "<null>").
  std::vector<std::vector<std::string>> rows(const std::string &sql) {
    std::vector<std::vector<std::string>> out;
    sqlite3_stmt *stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
      ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db_);
      return out;
    }
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      std::vector<std::string> row;
      for (int i = 0; i < sqlite3_column_count(stmt); ++i) {
        const int type = sqlite3_column_type(stmt, i);
        if (type == SQLITE_NULL) {
          row.emplace_back("<null>");
          continue;
        }
        const void *bytes = type == SQLITE_BLOB
                                ? sqlite3_column_blob(stmt, i)
                                : static_cast<const void *>(sqlite3_column_text(stmt, i));
        row.emplace_back(static_cast<const char *>(bytes),
                         static_cast<size_t>(sqlite3_column_bytes(stmt, i)));
      }
      out.push_back(std::move(row));
    }
    sqlite3_finalize(stmt);
    return out;
  }

  std::string value(const std::string &sql) {
    const auto r = rows(sql);
    return r.empty() || r.front().empty() ? std::string() : r.front().front();
  }

  // Runs `sql` with `binds` (text, blob or double, in order).
  struct Bind {
    enum Kind { text, blob, real } kind;
    std::string bytes;
    double number = 0;
  };
  void run(const std::string &sql, const std::vector<Bind> &binds) {
    sqlite3_stmt *stmt = nullptr;
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
      ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db_);
      return;
    }
    for (size_t i = 0; i < binds.size(); ++i) {
      const int at = static_cast<int>(i) + 1;
      const Bind &b = binds[i];
      if (b.kind == Bind::real)
        sqlite3_bind_double(stmt, at, b.number);
      else if (b.kind == Bind::blob)
        sqlite3_bind_blob(stmt, at, b.bytes.data(), static_cast<int>(b.bytes.size()),
                          SQLITE_TRANSIENT);
      else
        sqlite3_bind_text(stmt, at, b.bytes.data(), static_cast<int>(b.bytes.size()),
                          SQLITE_TRANSIENT);
    }
    if (sqlite3_step(stmt) != SQLITE_DONE)
      ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db_);
    sqlite3_finalize(stmt);
  }

private:
  sqlite3 *db_ = nullptr;
};

Sql::Bind text(std::string s) {
  return {Sql::Bind::text, std::move(s)};
}
Sql::Bind blob(std::string s) {
  return {Sql::Bind::blob, std::move(s)};
}
Sql::Bind real(double d) {
  return {Sql::Bind::real, "", d};
}

// Every row of tcjit's tables, each as one string (table, then each value with its length), so
// that a row changed or deleted is missing from the set afterwards.
using Rows = std::multiset<std::string>;

Rows honest_rows(const fs::path &file, const std::set<std::string> &skip = {}) {
  Rows rows;
  Sql sql(file);
  for (const std::string &table : kTables) {
    if (skip.count(table))
      continue;
    for (const auto &row : sql.rows("SELECT * FROM " + table)) {
      std::string key = table;
      for (const std::string &v : row)
        key += "|" + std::to_string(v.size()) + ":" + v;
      rows.insert(key);
    }
  }
  return rows;
}

int missing(const Rows &before, const Rows &after) {
  int n = 0;
  for (const std::string &row : before)
    n += after.count(row) < before.count(row) ? 1 : 0;
  return n;
}

// ---- The campaign ----

struct Tally {
  int tried = 0, refused = 0, rebuilt = 0, lost = 0;
};

class Campaign {
public:
  kernels_db::testing::TempDir dir;
  Tally tally;
  fs::path honest = dir.file("honest.db");
  std::string run_spec;      // kRunGemm's canonical text, as `run` prints it
  std::string tuned_spec;    // kTunedGemm's canonical text
  std::string tuned_config;  // the config `run` takes for kTunedGemm from the honest file
  std::string tuned_winner;  // its dispatch table's config JSON
  std::string tuned_loser;   // another config of kTunedGemm that verified (JSON)
  std::string tuner_version; // the honest tuner's version
  int counter = 0;

  Campaign() {
    for (const char *who : {"", "other-"})
      for (const char *sub : {"home", "config", "cache"}) {
        fs::create_directories(dir.file(std::string(who) + sub));
        fs::permissions(dir.file(std::string(who) + sub), fs::perms::all); // another user's too
      }
  }

  // The environment of every tcjit command: a per-test signing key, home and XDG directories
  // (`who` = "other-": another user's, for a shared read-only cache).
  std::string env(const std::string &who = "") const {
    return "HOME=" + shell_quote(dir.file(who + "home")) +
           " XDG_CONFIG_HOME=" + shell_quote(dir.file(who + "config")) +
           " XDG_CACHE_HOME=" + shell_quote(dir.file(who + "cache")) +
           " TCJIT_KEY_FILE=" + shell_quote(dir.file(who + "config") / "tcjit-test.key") +
           " TCJIT_DB=" + shell_quote(dir.file(who + "cache") / "unused-default.db");
  }

  // `tcjit ARGS` (shell words, quoted by the caller), standard input empty, under the hang guard.
  // `as` prefixes the command (e.g. setpriv to run it as another user).
  Tool tcjit(const std::string &args, int guard_seconds = kHangGuardSeconds,
             const std::string &as = "") {
    const fs::path out = dir.file("stdout"), err = dir.file("stderr");
    const std::string cmd = env(as.empty() ? "" : "other-") + " " + as + (as.empty() ? "" : " ") +
                            "timeout -k 2 " + std::to_string(guard_seconds) + " " +
                            shell_quote(TCJIT_TOOL) + " " + args + " </dev/null >" +
                            shell_quote(out) + " 2>" + shell_quote(err);
    const int status = std::system(cmd.c_str());
    Tool t;
    t.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    t.out = read_file(out);
    t.err = read_file(err);
    if (t.code == 124 || t.code == 137)
      ADD_FAILURE() << "hung: tcjit " << args << " was killed after " << guard_seconds
                    << " s by the test's hang guard";
    return t;
  }

  Tool run(const std::string &spec, const fs::path &db, const std::string &extra = "",
           int guard_seconds = kHangGuardSeconds) {
    return tcjit("run " + shell_quote(spec) + " --device emu --db " + shell_quote(db) +
                     (extra.empty() ? "" : " " + extra),
                 guard_seconds);
  }

  fs::path copy_of_honest(const std::string &name) {
    const fs::path file = dir.file(name + "-" + std::to_string(counter++) + ".db");
    fs::copy_file(honest, file);
    return file;
  }

  void make_honest_database();
  void triggers_views_indexes_tables();
  void foreign_binaries();
  void foreign_imports();
  void damaged_ptx();
  void decision_from_the_future();
  void impossible_times();
  void not_databases_and_read_only();
  void endless_inputs();
  void round_trips(const fs::path &file, const std::string &what);
};

void Campaign::make_honest_database() {
  Tool t = run(kRunGemm, honest, "--json");
  ASSERT_EQ(t.code, 0) << t.all();
  run_spec = json::parse(t.out).at(0).at("spec").get<std::string>();
  t = tcjit("tune " + shell_quote(kTunedGemm) + " --device emu --budget 3 --jobs 1 --db " +
            shell_quote(honest));
  ASSERT_EQ(t.code, 0) << t.all();
  t = tcjit("tune " + shell_quote(kRangeGemm) + " --device emu --budget 2 --jobs 1 --db " +
            shell_quote(honest));
  ASSERT_EQ(t.code, 0) << t.all();
  t = run(kTunedGemm, honest, "--json");
  ASSERT_EQ(t.code, 0) << t.all();
  tuned_config = json::parse(t.out).at(0).at("config").get<std::string>();
  tuned_spec = json::parse(t.out).at(0).at("spec").get<std::string>();
  Sql sql(honest);
  const std::string tuned_id = "(SELECT id FROM problems WHERE spec_text = '" + tuned_spec + "')";
  tuned_winner = sql.value("SELECT e.config_json FROM dispatch_entries e JOIN dispatch_tables d "
                           "ON e.table_id = d.id WHERE d.problem_id = " +
                           tuned_id);
  tuned_loser =
      sql.value("SELECT config_json FROM results WHERE status = 'ok' AND problem_id = " + tuned_id +
                " AND config_json != '" + tuned_winner + "'");
  // The tuner's own version text (the problem also holds `tcjit run`'s verification records).
  tuner_version = sql.value("SELECT tuner_version FROM results WHERE problem_id = " + tuned_id +
                            " AND tuner_version LIKE 'tcjit-tuner %' LIMIT 1");
  ASSERT_FALSE(tuned_winner.empty()) << "the honest tune stored no dispatch table";
  ASSERT_FALSE(tuned_loser.empty()) << "the honest tune verified only one config";
  ASSERT_GE(std::stoi(sql.value("SELECT count(*) FROM dispatch_tables")), 2);
  // The honest file itself: a run adds a result and loses nothing.
  const Rows before = honest_rows(honest);
  const fs::path again = copy_of_honest("honest-again");
  t = run(kRunGemm, again);
  EXPECT_EQ(t.code, 0) << t.all();
  EXPECT_EQ(missing(before, honest_rows(again)), 0) << "an honest run changed honest rows";
}

// 1. Schema objects tcjit did not create: refused at open by `run` and `db check` (exit 3, the
// object named); nothing of the file changes, and the trigger never runs (nor hangs).
void Campaign::triggers_views_indexes_tables() {
  struct Plant {
    std::string name, sql;
  };
  const std::vector<Plant> plants = {
      {"evil_wipe", "CREATE TRIGGER evil_wipe AFTER INSERT ON results BEGIN DELETE FROM binaries; "
                    "DELETE FROM dispatch_tables; END"},
      {"evil_poison",
       "CREATE TRIGGER evil_poison AFTER INSERT ON binaries BEGIN UPDATE binaries SET cubin = "
       "x'00', cubin_sha256 = "
       "'6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d'; END"},
      {"evil_spin", "CREATE TRIGGER evil_spin BEFORE INSERT ON results BEGIN SELECT count(*) FROM "
                    "(WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT x "
                    "FROM c); END"},
      {"evil_view", "CREATE VIEW evil_view AS SELECT * FROM binaries"},
      {"evil_index", "CREATE INDEX evil_index ON results(device, message)"},
      {"evil_table", "CREATE TABLE evil_table(x); INSERT INTO evil_table VALUES ('payload')"},
  };
  for (const Plant &plant : plants) {
    SCOPED_TRACE("case 1, schema object " + plant.name);
    const fs::path file = copy_of_honest(plant.name);
    Sql(file).exec(plant.sql);
    const Rows before = honest_rows(file);
    ++tally.tried;
    const Tool ran = run(kRunGemm, file, "", kRefusalGuardSeconds);
    EXPECT_EQ(ran.code, 3) << ran.all();
    EXPECT_TRUE(contains(ran.all(), "'" + plant.name + "'")) << ran.all();
    EXPECT_TRUE(contains(ran.all(), "not created by tcjit")) << ran.all();
    const Tool check = tcjit("db check --full --db " + shell_quote(file));
    EXPECT_EQ(check.code, 3) << check.all();
    EXPECT_TRUE(contains(check.all(), "'" + plant.name + "'")) << check.all();
    const int lost = missing(before, honest_rows(file));
    EXPECT_EQ(lost, 0) << "honest rows changed or deleted";
    tally.lost += lost;
    tally.refused += ran.code == 3 && check.code == 3 ? 1 : 0;
  }
}

// The PTX of a kernel with `ptx`'s header and entries (names and parameters) that returns at once.
std::string returns_at_once(const std::string &ptx) {
  std::string out;
  std::istringstream lines(ptx);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind(".version", 0) == 0 || line.rfind(".target", 0) == 0 ||
        line.rfind(".address_size", 0) == 0)
      out += line + "\n";
  for (size_t at = ptx.find(".entry"); at != std::string::npos; at = ptx.find(".entry", at + 1)) {
    const size_t close = ptx.find(')', at);
    if (close == std::string::npos)
      break;
    out += "\n.visible " + ptx.substr(at, close + 1 - at) + "\n{\n\tret;\n}\n";
  }
  return out;
}

fs::path ptxas() {
  for (const char *p : {"/usr/local/cuda/bin/ptxas", "/usr/bin/ptxas"})
    if (fs::exists(p))
      return p;
  return {};
}

// 2. Every binary replaced by a kernel that returns at once, its PTX, cubin (ptxas) and SHA-256
// consistent: `run` rebuilds (or discards) it and verifies, twice (the rebuilt kernel stays).
void Campaign::foreign_binaries() {
  SCOPED_TRACE("case 2, kernels that return at once");
  const fs::path assembler = ptxas();
  ASSERT_FALSE(assembler.empty()) << "no ptxas at /usr/local/cuda/bin/ptxas";
  const fs::path file = copy_of_honest("returns-at-once");
  {
    Sql sql(file);
    for (const auto &row : sql.rows("SELECT id, ptx, arch FROM binaries")) {
      const std::string fake = returns_at_once(row[1]);
      const fs::path src = dir.file("fake.ptx"), bin = dir.file("fake.cubin");
      std::ofstream(src) << fake;
      const std::string cmd = shell_quote(assembler) + " -arch=" + row[2] + " " + shell_quote(src) +
                              " -o " + shell_quote(bin);
      ASSERT_EQ(std::system(cmd.c_str()), 0) << "ptxas refused\n" << fake;
      const std::string cubin = read_file(bin);
      sql.run("UPDATE binaries SET ptx = ?, cubin = ?, cubin_sha256 = ? WHERE id = " + row[0],
              {text(fake), blob(cubin), text(sha256_hex(std::string_view(cubin)))});
    }
  }
  const Rows before = honest_rows(file, {"binaries"});
  ++tally.tried;
  const Tool first = run(kRunGemm, file);
  EXPECT_EQ(first.code, 0) << first.all();
  EXPECT_TRUE(says_rebuilt(first)) << first.all();
  const Tool second = run(kRunGemm, file);
  EXPECT_EQ(second.code, 0) << second.all();
  const int lost = missing(before, honest_rows(file, {"binaries"}));
  EXPECT_EQ(lost, 0);
  tally.lost += lost;
  tally.rebuilt += first.code == 0 && says_rebuilt(first) ? 1 : 0;
}

// The binaries of an export, by their key, with their cubin.
std::map<std::string, std::string> exported_cubins(const std::string &jsonl) {
  std::map<std::string, std::string> out;
  std::istringstream lines(jsonl);
  for (std::string line; std::getline(lines, line);) {
    const json record = json::parse(line, nullptr, false);
    if (record.is_object() && record.value("type", "") == "binary")
      out[record.at("problem").dump() + record.at("config").dump() + record.at("arch").dump() +
          record.at("toolkit_version").dump() + record.at("compiler_version").dump()] =
          record.at("cubin_base64").get<std::string>();
  }
  return out;
}

// 2b. `db import` of a binary whose cubin is empty or 100 bytes of garbage, with a matching
// SHA-256: the valid kernel stays.
void Campaign::foreign_imports() {
  const fs::path dump = dir.file("honest.jsonl");
  Tool t = tcjit("db export -o " + shell_quote(dump) + " --db " + shell_quote(honest));
  ASSERT_EQ(t.code, 0) << t.all();
  const std::string exported = read_file(dump);
  const auto cubins = exported_cubins(exported);
  ASSERT_FALSE(cubins.empty());
  std::mt19937 random(24);
  std::string garbage;
  for (int i = 0; i < 100; ++i)
    garbage += static_cast<char>(random() & 0xff);
  for (const std::string &bytes : {std::string(), garbage}) {
    SCOPED_TRACE("case 2, import of a " + std::to_string(bytes.size()) + "-byte cubin");
    std::string hostile;
    std::istringstream lines(exported);
    for (std::string line; std::getline(lines, line);) {
      json record = json::parse(line);
      if (record.value("type", "") == "binary") {
        const std::vector<uint8_t> raw(bytes.begin(), bytes.end());
        record["cubin_base64"] = base64_encode(raw);
        record["cubin_sha256"] = sha256_hex(std::string_view(bytes));
      }
      hostile += record.dump() + "\n";
    }
    const fs::path lines_file = dir.file("hostile-" + std::to_string(counter++) + ".jsonl");
    std::ofstream(lines_file) << hostile;
    const fs::path file = copy_of_honest("import-target");
    ++tally.tried;
    t = tcjit("db import " + shell_quote(lines_file) + " --db " + shell_quote(file));
    EXPECT_TRUE(t.code == 0 || t.code == 3) << t.all();
    tally.refused += t.code == 3 ? 1 : 0;
    t = tcjit("db export --db " + shell_quote(file));
    ASSERT_EQ(t.code, 0) << t.all();
    const auto after = exported_cubins(t.out);
    int lost = 0;
    for (const auto &[key, cubin] : cubins) {
      const auto it = after.find(key);
      lost += it == after.end() || it->second != cubin ? 1 : 0;
    }
    EXPECT_EQ(lost, 0) << "valid kernels replaced by the import";
    tally.lost += lost;
  }
}

// 3. Stored PTX damaged (`%rd1,` -> `%rd9999,`, and 20 single random bit flips, seeded): every
// run compiles the kernel again and verifies.
void Campaign::damaged_ptx() {
  {
    SCOPED_TRACE("case 3, %rd9999");
    const fs::path file = copy_of_honest("rd9999");
    Sql(file).exec("UPDATE binaries SET ptx = replace(ptx, '%rd1,', '%rd9999,')");
    const Rows before = honest_rows(file, {"binaries"});
    ++tally.tried;
    const Tool t = run(kRunGemm, file);
    EXPECT_EQ(t.code, 0) << t.all();
    EXPECT_TRUE(says_rebuilt(t)) << t.all();
    tally.rebuilt += t.code == 0 && says_rebuilt(t) ? 1 : 0;
    const int lost = missing(before, honest_rows(file, {"binaries"}));
    EXPECT_EQ(lost, 0);
    tally.lost += lost;
  }
  std::mt19937 random(2024);
  for (int flip = 0; flip < 20; ++flip) {
    const fs::path file = copy_of_honest("bit-flip");
    std::string where;
    {
      Sql sql(file);
      const auto row = sql.rows("SELECT b.id, b.ptx FROM binaries b JOIN problem_binaries l ON "
                                "l.binary_id = b.id JOIN problems p ON l.problem_id = p.id "
                                "WHERE p.spec_text = '" +
                                run_spec + "'");
      ASSERT_EQ(row.size(), 1u) << "the run GEMM has one binary in the honest file";
      std::string ptx = row[0][1];
      const size_t bit = random() % (ptx.size() * 8);
      ptx[bit / 8] = static_cast<char>(ptx[bit / 8] ^ (1 << (bit % 8)));
      where = "bit " + std::to_string(bit % 8) + " of byte " + std::to_string(bit / 8);
      sql.run("UPDATE binaries SET ptx = ? WHERE id = " + row[0][0], {text(ptx)});
    }
    SCOPED_TRACE("case 3, PTX with " + where + " flipped");
    const Rows before = honest_rows(file, {"binaries"});
    ++tally.tried;
    const Tool t = run(kRunGemm, file);
    EXPECT_EQ(t.code, 0) << t.all();
    EXPECT_TRUE(says_rebuilt(t)) << t.all();
    tally.rebuilt += t.code == 0 && says_rebuilt(t) ? 1 : 0;
    const int lost = missing(before, honest_rows(file, {"binaries"}));
    EXPECT_EQ(lost, 0);
    tally.lost += lost;
  }
}

// 4. A dispatch table from the future, of a tuner tcjit does not know, naming another config that
// verified, handed over in a file and merged: `run` keeps the honest decision, `check` flags it.
void Campaign::decision_from_the_future() {
  SCOPED_TRACE("case 4, a decision from the future");
  const fs::path source = copy_of_honest("evil-decision");
  Sql(source).exec(
      "INSERT INTO dispatch_tables (problem_id, arch, tuner_version, created_ms) SELECT id, arch, "
      "'tcjit-tuner 999 evil', 253402300799000 FROM problems WHERE spec_text = '" +
      tuned_spec +
      "'; INSERT INTO dispatch_entries (table_id, position, dims_json, config_json, time_us, "
      "provenance) VALUES (last_insert_rowid(), 0, '{}', '" +
      tuned_loser + "', 0.001, 'measured')");
  ++tally.tried;
  Tool t = run(kTunedGemm, source, "--json");
  EXPECT_EQ(t.code, 0) << t.all();
  if (t.code == 0) {
    EXPECT_EQ(json::parse(t.out).at(0).at("config").get<std::string>(), tuned_config)
        << "run took the evil decision of the handed-over file";
  }
  t = tcjit("db check --db " + shell_quote(source));
  EXPECT_TRUE(contains(t.all(), "implausible")) << t.all();

  const fs::path target = copy_of_honest("merge-target");
  const Rows before = honest_rows(target);
  t = tcjit("db merge " + shell_quote(source) + " --db " + shell_quote(target));
  EXPECT_TRUE(t.code == 0 || t.code == 3) << t.all();
  tally.refused += t.code == 3 ? 1 : 0;
  t = run(kTunedGemm, target, "--json");
  EXPECT_EQ(t.code, 0) << t.all();
  if (t.code == 0) {
    EXPECT_EQ(json::parse(t.out).at(0).at("config").get<std::string>(), tuned_config)
        << "run took the merged evil decision";
  }
  t = tcjit("db check --db " + shell_quote(target));
  const bool kept = Sql(target).value("SELECT count(*) FROM dispatch_tables WHERE "
                                      "tuner_version = 'tcjit-tuner 999 evil'") != "0";
  if (kept) { // merge kept the evil table: check must flag it
    EXPECT_TRUE(contains(t.all(), "implausible")) << t.all();
  }
  const int lost = missing(before, honest_rows(target));
  EXPECT_EQ(lost, 0);
  tally.lost += lost;
  round_trips(target, "the merged file");
}

// 5. Measured results of -5, 0 and inf µs for a problem no dispatch table decides: never adopted
// ("tuned (measured)"), flagged by `check`; a control of 5 µs shows the planted config would be.
void Campaign::impossible_times() {
  const double now_ms = static_cast<double>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                                std::chrono::system_clock::now().time_since_epoch())
                                                .count());
  const std::vector<std::pair<std::string, double>> times = {
      {"5 (control)", 5.0}, {"-5", -5.0}, {"0", 0.0}, {"inf", INFINITY}};
  for (const auto &[name, median] : times) {
    SCOPED_TRACE("case 5, median_us " + name);
    const bool control = median == 5.0;
    const fs::path file = copy_of_honest("median");
    const Rows before = honest_rows(file);
    Sql(file).run(
        "INSERT INTO results (problem_id, config_json, arch, status, median_us, min_us, max_us, "
        "stddev_us, tflops, provenance, device, tuner_version, measured_ms, content_sha256) "
        "SELECT id, ?, arch, 'ok', ?, ?, ?, 0, 1.0, 'measured', 'NVIDIA A100-SXM4-80GB', ?, ?, ? "
        "FROM problems WHERE spec_text = ?",
        {text(tuned_loser), real(median), real(median), real(median), text(tuner_version),
         real(now_ms), text("campaign " + name), text(run_spec)});
    tally.tried += control ? 0 : 1;
    Tool t = run(kRunGemm, file);
    EXPECT_EQ(t.code, 0) << t.all();
    if (control) {
      EXPECT_TRUE(contains(t.all(), "tuned (measured)"))
          << "campaign setup: the planted config is not adopted even at 5 us\n"
          << t.all();
    } else {
      EXPECT_FALSE(contains(t.all(), "tuned (measured)")) << t.all();
    }
    t = tcjit("db check --db " + shell_quote(file));
    if (!control) {
      EXPECT_TRUE(contains(t.all(), "implausible")) << t.all();
    }
    const int lost = missing(before, honest_rows(file));
    EXPECT_EQ(lost, 0);
    tally.lost += lost;
    round_trips(file, "median_us " + name);
  }
}

// Export -> import round-trips every file that `db check` passes.
void Campaign::round_trips(const fs::path &file, const std::string &what) {
  SCOPED_TRACE("export -> import of " + what);
  if (tcjit("db check --db " + shell_quote(file)).code != 0)
    return;
  const fs::path dump = dir.file("round-trip-" + std::to_string(counter++) + ".jsonl");
  Tool t = tcjit("db export -o " + shell_quote(dump) + " --db " + shell_quote(file));
  EXPECT_EQ(t.code, 0) << t.all();
  const fs::path fresh = dir.file("round-trip-" + std::to_string(counter++) + ".db");
  t = tcjit("db import " + shell_quote(dump) + " --db " + shell_quote(fresh));
  EXPECT_EQ(t.code, 0) << "a file check passes does not round-trip\n" << t.all();
}

// 6. `--db` that is not a database (a workload, a symlink to /etc/passwd), a FIFO, and an honest
// database in a directory the user may not write.
void Campaign::not_databases_and_read_only() {
  const fs::path workload = dir.file("workload.tcjit");
  std::ofstream(workload) << kRunGemm << "\n";
  const fs::path passwd = dir.file("passwd-link.db");
  fs::create_symlink("/etc/passwd", passwd);
  const std::string passwd_text = read_file("/etc/passwd");
  for (const fs::path &file : {workload, passwd}) {
    SCOPED_TRACE("case 6, --db " + file.filename().string());
    const std::string bytes = read_file(file);
    ++tally.tried;
    const Tool t = run(kRunGemm, file, "", kRefusalGuardSeconds);
    EXPECT_EQ(t.code, 2) << t.all();
    EXPECT_TRUE(contains(t.all(), "not a tcjit kernel database")) << t.all();
    EXPECT_EQ(read_file(file), bytes);
    tally.refused += t.code == 2 ? 1 : 0;
  }
  EXPECT_EQ(read_file("/etc/passwd"), passwd_text);
  {
    SCOPED_TRACE("case 6, --db FIFO");
    const fs::path fifo = dir.file("fifo.db");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    ++tally.tried;
    int refused = 0;
    for (const std::string &command : {"run " + shell_quote(kRunGemm) + " --device emu",
                                       std::string("db ls"), std::string("db check")}) {
      const Tool t = tcjit(command + " --db " + shell_quote(fifo), kRefusalGuardSeconds);
      EXPECT_EQ(t.code, 2) << command << "\n" << t.all();
      EXPECT_TRUE(contains(t.all(), "not a regular file")) << command << "\n" << t.all();
      refused += t.code == 2 ? 1 : 0;
    }
    tally.refused += refused == 3 ? 1 : 0;
  }
  SCOPED_TRACE("case 6, a read-only directory");
  const fs::path ro = dir.file("shared-cache");
  fs::create_directories(ro);
  const fs::path file = ro / "kernels.db";
  fs::copy_file(honest, file);
  fs::permissions(file, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                          fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
  const std::string bytes = read_file(file);
  // root writes anywhere: the shared cache is then used by another user (nobody), as a team's
  // central cache is by everyone but its owner (with their own key, so its kernels are foreign).
  const std::string as =
      ::geteuid() == 0 ? "setpriv --reuid=65534 --regid=65534 --clear-groups" : "";
  ++tally.tried;
  const Tool t = tcjit("run " + shell_quote(kRunGemm) + " --device emu --db " + shell_quote(file),
                       kHangGuardSeconds, as);
  EXPECT_EQ(t.code, 0) << t.all();
  EXPECT_TRUE(contains(t.all(), "read-only")) << t.all();
  EXPECT_EQ(read_file(file), bytes) << "the read-only database changed";
  EXPECT_FALSE(fs::exists(ro / "kernels.db-wal") || fs::exists(ro / "kernels.db-journal"));
  fs::permissions(ro, fs::perms::owner_all);
  fs::permissions(file, fs::perms::owner_read | fs::perms::owner_write);
}

// 7. Endless inputs to `emu run` (a device, a FIFO) refused at once; a negative seed refused.
void Campaign::endless_inputs() {
  const fs::path fifo = dir.file("kernel-fifo.ptx");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const fs::path &file : {fs::path("/dev/zero"), fifo}) {
    SCOPED_TRACE("case 7, emu run " + file.string());
    ++tally.tried;
    const Tool t = tcjit("emu run " + shell_quote(file) + " --kernel k --grid 1 --block 32",
                         kRefusalGuardSeconds);
    EXPECT_EQ(t.code, 2) << t.all();
    EXPECT_TRUE(contains(t.all(), "not a regular file")) << t.all();
    tally.refused += t.code == 2 ? 1 : 0;
  }
  SCOPED_TRACE("case 7, --seed -1");
  const Tool t = run(kRunGemm, copy_of_honest("seed"), "--seed -1", kRefusalGuardSeconds);
  EXPECT_EQ(t.code, 2) << t.all();
}

TEST(HostileCampaign, HandedOverFilesAreRefusedOrRebuiltAndNothingIsLost) {
  Campaign campaign;
  campaign.make_honest_database();
  if (HasFatalFailure())
    return;
  campaign.round_trips(campaign.honest, "the honest file");
  const std::vector<std::pair<const char *, void (Campaign::*)()>> cases = {
      {"1 triggers, view, index, table", &Campaign::triggers_views_indexes_tables},
      {"2 kernels that return at once", &Campaign::foreign_binaries},
      {"2 imports of empty or garbage cubins", &Campaign::foreign_imports},
      {"3 damaged stored PTX", &Campaign::damaged_ptx},
      {"4 a decision from the future", &Campaign::decision_from_the_future},
      {"5 impossible result times", &Campaign::impossible_times},
      {"6 not databases, FIFO, read-only", &Campaign::not_databases_and_read_only},
      {"7 endless inputs", &Campaign::endless_inputs},
  };
  Tally &t = campaign.tally;
  for (const auto &[name, run_case] : cases) {
    const Tally before = t;
    (campaign.*run_case)();
    std::cout << "  case " << name << ": " << t.tried - before.tried << " tried, "
              << t.refused - before.refused << " refused, " << t.rebuilt - before.rebuilt
              << " rebuilt, " << t.lost - before.lost << " lost" << std::endl;
  }
  EXPECT_EQ(t.lost, 0);
  // The figures README's Reliability section quotes.
  std::cout << "hostile campaign: " << t.tried << " files tried, " << t.refused << " refused, "
            << t.rebuilt << " rebuilt, " << t.lost << " lost" << std::endl;
}

} // namespace
} // namespace tcjit::kernels_db
