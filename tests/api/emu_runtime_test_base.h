// The fixture of the runtime API tests: a runtime on the emulator with its own database file
// (named by the test, removed with its -wal, -shm and -journal files afterwards).
#pragma once

#include "tcjit/tcjit.hpp"

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
  std::filesystem::path db_path_;
};

} // namespace tcjit::testing
