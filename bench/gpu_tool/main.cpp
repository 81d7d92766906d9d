// tcjit_gpu_bench: what bench/gpu measures on a GPU (bench/README.md, "bench/gpu").
//
//   info [--json]             the GPU (name, arch, clocks, driver, the arch table's peaks); exit 4
//                             with one line "no GPU: <reason>" on stderr when there is none
//   race [--quick] [--gemm-only|--conv-only] --db DB --json FILE [--reps N] ...
//                             tcjit (heuristic and tuned configs) against cuBLASLt and cuDNN
//   model-quality --db DB --json FILE [--top K]
//                             the cost model's ranking against the measurements in DB
//
// Exit codes: 0 done (failures of single problems are in the JSON), 2 bad command line, 3 the
// run could not go on (the runtime or the database cannot be opened), 4 no GPU.
#include "bench/gpu_tool/anchor_planners.h"
#include "bench/gpu_tool/device_json.h"
#include "bench/gpu_tool/model_quality_db.h"
#include "bench/gpu_tool/race.h"
#include "bench/gpu_tool/race_json.h"
#include "runtime/cuda/cuda_device.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>

namespace tcjit::bench {

namespace {

constexpr int kExitFailed = 3;
constexpr int kExitNoGpu = 4;

// Exit 4 with one line when there is no GPU; else 0.
int no_gpu_exit() {
  if (cuda::cuda_device_available())
    return 0;
  std::string reason = cuda::cuda_unavailable_reason();
  for (char &c : reason)
    if (c == '\n')
      c = ' ';
  std::fprintf(stderr, "no GPU: %s\n", reason.empty() ? "no CUDA device" : reason.c_str());
  return kExitNoGpu;
}

bool write_json(const std::string &path, const nlohmann::json &j) {
  std::ofstream out(path);
  out << j.dump(2) << '\n';
  out.close();
  if (!out) {
    std::fprintf(stderr, "tcjit_gpu_bench: cannot write %s\n", path.c_str());
    return false;
  }
  return true;
}

int info(bool as_json) {
  if (const int rc = no_gpu_exit())
    return rc;
  const cuda::CudaDevice dev;
  const nlohmann::json j = device_json(dev);
  if (as_json) {
    std::cout << j.dump(2) << '\n';
    return 0;
  }
  std::cout << j["name"].get<std::string>() << " (" << j["arch"].get<std::string>() << ", "
            << j["sms"].get<int>() << " SMs, SM clock " << j["sm_clock_mhz"].get<int>()
            << " MHz, memory clock " << j["memory_clock_mhz"].get<int>() << " MHz), driver "
            << j["driver"].get<std::string>() << '\n';
  return 0;
}

struct RaceArgs {
  bool quick = false, gemm_only = false, conv_only = false, no_tune = false;
  std::string db, json;
  int reps = 25, warmup = 3, top = 8;
  std::string tune_budget;
};

int race(const RaceArgs &args) {
  if (const int rc = no_gpu_exit())
    return rc;
  RaceOptions options;
  options.timing.reps = args.reps;
  options.timing.warmup = args.warmup;
  options.db_path = args.db;
  options.tune = !args.no_tune;
  options.tune_budget =
      !args.tune_budget.empty() ? args.tune_budget : (args.quick ? std::string("8") : "16");
  options.anchor_top = args.top;
  options.log = [](const std::string &line) { std::fprintf(stderr, "%s\n", line.c_str()); };
  try {
    check_timing_options(options.timing);
  } catch (const std::invalid_argument &e) {
    std::fprintf(stderr, "tcjit_gpu_bench race: %s\n", e.what());
    return 2;
  }
  const std::vector<GemmProblem> gemms =
      args.conv_only ? std::vector<GemmProblem>{} : race_gemm_problems(args.quick);
  const std::vector<ConvProblem> convs =
      args.gemm_only ? std::vector<ConvProblem>{} : race_conv_problems(args.quick);
  try {
    cuda::CudaDevice dev;
    const std::vector<ProblemResult> results =
        run_race(dev, gemms, convs, library_anchor_planners(), options);
    if (!write_json(args.json, race_json(device_json(dev), options, args.quick, results)))
      return kExitFailed;
    std::fprintf(stderr, "raced %zu problems on %s: %s\n", results.size(), dev.info().name.c_str(),
                 args.json.c_str());
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tcjit_gpu_bench race: %s\n", e.what());
    return kExitFailed;
  }
  return 0;
}

int model_quality(const std::string &db, const std::string &json_path, int top) {
  try {
    const ModelQualityReport report = model_quality_of_db(db, static_cast<size_t>(top));
    if (!write_json(json_path, model_quality_json(report)))
      return kExitFailed;
    std::fprintf(stderr, "model quality of %zu problems tuned by measurement: %s\n",
                 report.problems.size(), json_path.c_str());
  } catch (const std::exception &e) {
    std::fprintf(stderr, "tcjit_gpu_bench model-quality: %s\n", e.what());
    return kExitFailed;
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"tcjit_gpu_bench: tcjit against cuBLASLt and cuDNN on a GPU, and the cost "
               "model's quality (run by bench/gpu)"};
  app.require_subcommand(1);

  bool info_json = false;
  CLI::App *info_cmd = app.add_subcommand("info", "the GPU; exit 4 with one line when none");
  info_cmd->add_flag("--json", info_json, "print the device as JSON");

  RaceArgs ra;
  CLI::App *race_cmd =
      app.add_subcommand("race", "tcjit's heuristic and tuned configs against the anchors");
  race_cmd->add_flag("--quick", ra.quick, "a subset that fits in minutes");
  CLI::Option *gemm_only = race_cmd->add_flag("--gemm-only", ra.gemm_only, "GEMMs only");
  race_cmd->add_flag("--conv-only", ra.conv_only, "convolutions only")->excludes(gemm_only);
  race_cmd->add_option("--db", ra.db, "the kernel database tcjit tunes into")->required();
  race_cmd->add_option("--json", ra.json, "the report's file")->required();
  race_cmd->add_option("--reps", ra.reps, "timed repetitions per column (at least 20)")
      ->capture_default_str();
  race_cmd->add_option("--warmup", ra.warmup, "warm-up launches per column")->capture_default_str();
  race_cmd->add_option("--top", ra.top, "an anchor's best of its first N candidates")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  race_cmd->add_option("--tune-budget", ra.tune_budget,
                       "candidates tcjit tune measures per problem (default 8 with --quick, "
                       "else 16)");
  race_cmd->add_flag("--no-tune", ra.no_tune, "no tcjit tuned column");

  std::string mq_db, mq_json;
  int mq_top = 8;
  CLI::App *mq_cmd = app.add_subcommand(
      "model-quality", "Kendall tau and regret of the cost model on the database's measurements");
  mq_cmd->add_option("--db", mq_db, "the kernel database")->required();
  mq_cmd->add_option("--json", mq_json, "the report's file")->required();
  mq_cmd->add_option("--top", mq_top, "k of the top-k regret")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (*info_cmd)
    return info(info_json);
  if (*race_cmd)
    return race(ra);
  return model_quality(mq_db, mq_json, mq_top);
}

} // namespace tcjit::bench

int main(int argc, char **argv) {
  return tcjit::bench::main(argc, argv);
}
