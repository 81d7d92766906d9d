// The fixture of the runtime API tests: a runtime on the emulator with its own database file
// (named by the test, removed with its -wal, -shm and -journal files afterwards).
#pragma once

#include "tcjit/tcjit.hpp"

#include "compiler/codegen/plan/tile_config.h"
#include "compiler/dsl/parser.h"
#include "compiler/spec/problem_key.h"
#include "engine/kernel_records.h"
#include "kernels_db/dispatch.h"
#include "kernels_db/kernels_db.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <unistd.h>

namespace tcjit::testing {

class EmuRuntimeTest : public ::testing::Test {
protected:
  void SetUp() override {
    const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
    db_path_ = std::filesystem::temp_directory_path() /
               ("tcjit_" + std::string(info->test_suite_name()) + "_" + info->name() + "_" +
                std::to_string(::getpid()) + ".db");
    std::filesystem::remove(db_path_);
  }
  void TearDown() override {
    for (const char *suffix : {"", "-wal", "-shm", "-journal"})
      std::filesystem::remove(db_path_.string() + suffix);
  }
  RuntimeOptions options(MissPolicy on_miss = MissPolicy::heuristic) const {
    RuntimeOptions o;
    o.db_path = db_path_.string();
    o.device = "emu";
    o.on_miss = on_miss;
    return o;
  }
  // Stores what `tcjit tune` stores for `text` (a spec with m=1..256): its problem and a dispatch
  // table of two buckets, m=1..32 taking `small` and m=33..256 `large` (predicted times; no
  // binaries: a runtime that may compile builds them).
  void store_two_bucket_table(const std::string &text, const codegen::TileConfig &small,
                              const codegen::TileConfig &large) const {
    const OpSpec spec = parse_spec(text).entries.front().spec;
    const ProblemKey key = make_problem_key(spec, "sm_80", false);
    auto db = kernels_db::KernelsDb::open(db_path_);
    db.put_problem(engine::problem_record(spec, key, "sm_80"));
    kernels_db::DispatchTable table;
    table.problem_key = key.text;
    table.arch = "sm_80";
    table.tuner_version = "tcjit-tuner 1 / test / model";
    table.entries.push_back({R"({"m":[1,32]})", engine::config_json(small), 1.0,
                             kernels_db::ProvenanceKind::predicted});
    table.entries.push_back({R"({"m":[33,256]})", engine::config_json(large), 2.0,
                             kernels_db::ProvenanceKind::predicted});
    db.put_dispatch_table(table);
  }
  std::filesystem::path db_path_;
};

} // namespace tcjit::testing
