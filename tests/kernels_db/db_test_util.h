// Helpers shared by the kernels_db tests: a temporary directory and sample records.
#pragma once

#include "kernels_db/queries.h"
#include "kernels_db/records.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <unistd.h>

namespace tcjit::kernels_db::testing {

class TempDir {
public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("tcjit_db_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir &) = delete;
  TempDir &operator=(const TempDir &) = delete;

  const std::filesystem::path &path() const { return path_; }
  std::filesystem::path file(const std::string &name) const { return path_ / name; }

private:
  std::filesystem::path path_;
};

inline ProblemRecord sample_problem(int i, const std::string &op = "gemm", int64_t m = 1024) {
  ProblemRecord problem;
  problem.key_text =
      op + ":f16:sm_80:m" + std::to_string(m) + ":n" + std::to_string(512 + i) + ":k64";
  problem.key_hash = 0xF000000000000000ull + static_cast<uint64_t>(i);
  problem.op = op;
  problem.dtype = "f16";
  problem.arch = "sm_80";
  problem.spec_text = op + " m=" + std::to_string(m) + " n=" + std::to_string(512 + i) + " k=64";
  problem.shape_json =
      "{\"m\":" + std::to_string(m) + ",\"n\":" + std::to_string(512 + i) + ",\"k\":64}";
  return problem;
}

inline ListFilter filter(std::optional<std::string> op, std::optional<std::string> dtype,
                         std::optional<std::string> arch, std::string where = "",
                         int64_t limit = 0) {
  ListFilter result;
  result.op = std::move(op);
  result.dtype = std::move(dtype);
  result.arch = std::move(arch);
  result.where = std::move(where);
  result.limit = limit;
  return result;
}

inline std::string sample_config(int tile) {
  return "{\"tile_m\":" + std::to_string(tile) + ",\"tile_n\":128,\"stages\":3}";
}

inline BinaryRecord sample_binary(const ProblemRecord &problem, int tile,
                                  const std::string &arch = "sm_80",
                                  const std::string &toolkit = "12.4",
                                  const std::string &compiler = "0.1.0") {
  BinaryRecord binary;
  binary.key = {problem.key_text, sample_config(tile), arch, toolkit, compiler};
  binary.ptx = ".version 8.4\n.target " + arch + "\n// tile " + std::to_string(tile) + "\n";
  binary.cubin = {0x7f, 'E', 'L', 'F'}; // import and merge take only ELF cubins
  for (int i = 4; i < 64; ++i)
    binary.cubin.push_back(static_cast<uint8_t>((i * 7 + tile) & 0xff));
  binary.resources_json = "{\"registers\":128,\"spill_bytes\":0,\"shared_bytes\":49152}";
  binary.compile_options = "-O3 --gpu-name " + arch;
  binary.compile_ms = 12.5;
  return binary;
}

inline ResultRecord sample_result(const ProblemRecord &problem, int tile, double median_us,
                                  const std::string &device = "NVIDIA A100-SXM4-80GB",
                                  int64_t measured_ms = 1700000000000) {
  ResultRecord result;
  result.problem_key = problem.key_text;
  result.config_json = sample_config(tile);
  result.arch = "sm_80";
  result.status = ResultStatus::ok;
  result.timing = Timing{median_us, median_us * 0.9, median_us * 1.2, median_us * 0.05};
  result.tflops = 100.0 / median_us;
  result.provenance.kind = ProvenanceKind::measured;
  result.provenance.device = device;
  result.provenance.driver = "550.54.15";
  result.provenance.clock_mhz = 1410;
  result.tuner_version = "tcjit-tuner 1 / 0.1.0 / cuda";
  result.measured_ms = measured_ms;
  return result;
}

} // namespace tcjit::kernels_db::testing
