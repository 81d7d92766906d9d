// `tcjit emu run`: a client of tcjit::emu_run (include/tcjit/emu.hpp); here are the flags, the
// kernel arguments' syntax, the progress line and the printing.
#include "cli/emu_command.h"

#include "cli/exit_codes.h"
#include "cli/json_text.h"
#include "cli/numeric_options.h"
#include "cli/progress_line.h"
#include "tcjit/emu.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstring>
#include <iostream>
#include <memory>
#include <sstream>

namespace tcjit::cli {

namespace {

// Defaults of --max-instructions and --timeout (docs/emulator.md, "Limits"): about a minute of
// one block's emulation at the measured 10-50 M warp-instr/s, and ten minutes per launch.
constexpr uint64_t kDefaultMaxInstructions = 1'000'000'000;
constexpr double kDefaultTimeoutSeconds = kDefaultLaunchTimeoutSeconds;

struct EmuRunOptions {
  std::string ptx_file;
  std::string kernel;
  std::string grid = "1";
  std::string block = "1";
  uint32_t shared = 0;
  bool stats = false;
  bool json = false;
  unsigned threads = 0;
  // warp instructions one block may execute before the launch fails (an infinite loop)
  uint64_t max_instructions = kDefaultMaxInstructions;
  double timeout = kDefaultTimeoutSeconds; // wall-clock seconds per launch; 0: no limit
  bool racecheck_all = false;
  std::vector<std::string> args;
};

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

EmuDim3 parse_dim3(const std::string &text, const char *what) {
  EmuDim3 d;
  uint32_t *parts[3] = {&d.x, &d.y, &d.z};
  std::stringstream ss(text);
  std::string item;
  int i = 0;
  while (std::getline(ss, item, ',')) {
    if (i == 3)
      throw UsageError(std::string(what) + " has more than 3 dimensions: '" + text + "'");
    try {
      size_t used = 0;
      unsigned long v = std::stoul(item, &used);
      if (used != item.size() || v == 0 || v > 0xffffffffu)
        throw std::invalid_argument("");
      *parts[i++] = static_cast<uint32_t>(v);
    } catch (const std::exception &) {
      throw UsageError(std::string(what) + " must be X[,Y[,Z]] with positive integers, got '" +
                       text + "'");
    }
  }
  if (i == 0)
    throw UsageError(std::string(what) + " is empty");
  return d;
}

// CUDA's launch limits, checked before anything is loaded.
void check_launch_dims(const EmuDim3 &grid, const EmuDim3 &block) {
  auto over = [](const std::string &what, uint64_t value, uint64_t limit) {
    throw UsageError(what + " is " + std::to_string(value) + ", the limit is " +
                     std::to_string(limit));
  };
  if (grid.x > 2147483647u)
    over("--grid x", grid.x, 2147483647u);
  if (grid.y > 65535)
    over("--grid y", grid.y, 65535);
  if (grid.z > 65535)
    over("--grid z", grid.z, 65535);
  if (block.x > 1024)
    over("--block x", block.x, 1024);
  if (block.y > 1024)
    over("--block y", block.y, 1024);
  if (block.z > 64)
    over("--block z", block.z, 64);
  const uint64_t threads = uint64_t{block.x} * block.y * block.z;
  if (threads > 1024)
    over("--block x*y*z (threads per block)", threads, 1024);
}

// ARG: PATH.npy (a buffer) or TYPE:VALUE (a scalar: u32 s32 u64 s64 f32 f64).
EmuArgument parse_arg(const std::string &arg) {
  EmuArgument b;
  size_t colon = arg.find(':');
  static const char *const kScalars[] = {"u32", "s32", "u64", "s64", "f32", "f64"};
  std::string prefix = colon == std::string::npos ? "" : arg.substr(0, colon);
  bool scalar = false;
  for (const char *s : kScalars)
    scalar |= prefix == s;
  if (!scalar) {
    if (arg.size() < 4 || arg.substr(arg.size() - 4) != ".npy")
      throw UsageError("argument '" + arg +
                       "' is neither a .npy file nor a scalar (u32:V s32:V u64:V s64:V f32:V "
                       "f64:V)");
    b.npy_path = arg;
    return b;
  }
  const std::string value = arg.substr(colon + 1);
  auto put = [&](const auto &v) {
    b.scalar.resize(sizeof(v));
    std::memcpy(b.scalar.data(), &v, sizeof(v));
  };
  try {
    size_t used = 0;
    if (prefix == "u32") {
      unsigned long long v = std::stoull(value, &used, 0);
      if (v > 0xffffffffull)
        throw std::out_of_range("");
      put(static_cast<uint32_t>(v));
    } else if (prefix == "s32") {
      long long v = std::stoll(value, &used, 0);
      if (v < INT32_MIN || v > INT32_MAX)
        throw std::out_of_range("");
      put(static_cast<int32_t>(v));
    } else if (prefix == "u64") {
      put(static_cast<uint64_t>(std::stoull(value, &used, 0)));
    } else if (prefix == "s64") {
      put(static_cast<int64_t>(std::stoll(value, &used, 0)));
    } else if (prefix == "f32") {
      put(std::stof(value, &used));
    } else {
      put(std::stod(value, &used));
    }
    if (used != value.size())
      throw std::invalid_argument("");
  } catch (const std::exception &) {
    throw UsageError("argument '" + arg + "': '" + value + "' is not a valid " + prefix);
  }
  return b;
}

nlohmann::json counters_json(const EmuCounters &c) {
  nlohmann::json j;
  j["ctas"] = c.ctas;
  j["threads"] = c.threads;
  j["warp_instructions"] = c.warp_instructions;
  for (const auto &[name, count] : c.warp_instructions_by_class)
    j["warp_instructions_by_class"][name] = count;
  j["thread_instructions"] = c.thread_instructions;
  j["mma_instructions"] = c.mma_instructions;
  j["mma_flops"] = c.mma_flops;
  j["undefined_mma_sp_rows"] = c.undefined_mma_sp_rows;
  j["shared_load_requests"] = c.shared_load_requests;
  j["shared_store_requests"] = c.shared_store_requests;
  j["ldmatrix_requests"] = c.ldmatrix_requests;
  j["shared_wavefronts"] = c.shared_wavefronts;
  j["shared_bank_conflicts"] = c.shared_bank_conflicts;
  j["global_load_requests"] = c.global_load_requests;
  j["global_store_requests"] = c.global_store_requests;
  j["global_atomic_requests"] = c.global_atomic_requests;
  j["cp_async_requests"] = c.cp_async_requests;
  j["global_load_sectors"] = c.global_load_sectors;
  j["global_store_sectors"] = c.global_store_sectors;
  j["global_load_sectors_per_request"] = c.global_load_sectors_per_request;
  j["global_store_sectors_per_request"] = c.global_store_sectors_per_request;
  j["global_load_efficiency"] = c.global_load_efficiency;
  j["global_store_efficiency"] = c.global_store_efficiency;
  j["global_bytes_read"] = c.global_bytes_read;
  j["global_bytes_written"] = c.global_bytes_written;
  j["local_requests"] = c.local_requests;
  j["barriers"] = c.barriers;
  return j;
}

int run_emu(const EmuRunOptions &opt) {
  auto fail = [&](int code, const std::string &msg) {
    if (opt.json)
      std::cout << json_text(nlohmann::json{{"status", "error"}, {"error", msg}}, 2) << "\n";
    // the message may quote the PTX file's text: its control characters escaped
    std::cerr << "tcjit emu: " << escape_controls_keep_lines(msg) << "\n";
    return code;
  };
  EmuRunRequest request;
  try {
    request.grid = parse_dim3(opt.grid, "--grid");
    request.block = parse_dim3(opt.block, "--block");
    check_launch_dims(request.grid, request.block);
    if (opt.max_instructions == 0)
      throw UsageError("--max-instructions must be at least 1");
    if (!(opt.timeout >= 0) || opt.timeout > 1e9)
      throw UsageError("--timeout must be between 0 (no limit) and 1e9 seconds");
    request.dynamic_shared_bytes = opt.shared;
    for (const std::string &a : opt.args)
      request.args.push_back(parse_arg(a));
    request.ptx = read_ptx_file(opt.ptx_file);
  } catch (const UsageError &e) {
    return fail(kExitUsage, e.what());
  } catch (const Error &e) { // the PTX file: not a regular file, too large, unreadable
    return fail(kExitUsage, e.problem());
  }
  request.ptx_name = opt.ptx_file;
  request.kernel = opt.kernel;
  request.threads = opt.threads;
  request.max_instructions = opt.max_instructions;
  request.timeout_seconds = opt.timeout;
  request.racecheck_all = opt.racecheck_all;
  EmuCounters counters;
  try {
    // the blocks done, on a terminal, while the launch runs (erased at its end)
    ProgressLine progress(opt.json);
    request.on_progress = [&](const Progress &p) {
      if (p.done == p.total) {
        progress.clear();
        return;
      }
      progress.show("tcjit emu run: " + opt.kernel + ": " + std::to_string(p.done) + "/" +
                    std::to_string(p.total) + " blocks, " + short_duration(p.elapsed_seconds));
    };
    counters = emu_run(request);
  } catch (const Error &e) {
    return fail(e.code() == ErrorCode::invalid_argument ? kExitUsage : kExitFailure, e.problem());
  }
  if (opt.json) {
    nlohmann::json j{{"status", "ok"}, {"kernel", opt.kernel}};
    if (opt.stats)
      j["counters"] = counters_json(counters);
    std::cout << json_text(j, 2) << "\n";
  } else if (opt.stats) {
    std::cout << counters.text;
  }
  return kExitOk;
}

} // namespace

void add_emu_command(CLI::App &app) {
  CLI::App *emu = app.add_subcommand("emu", "Run PTX kernels on the CPU emulator (with sanitizer)");
  emu->require_subcommand(1);
  auto opt = std::make_shared<EmuRunOptions>();
  CLI::App *run = emu->add_subcommand(
      "run", "Run one kernel: tcjit emu run FILE.ptx --kernel NAME --grid X,Y,Z --block X,Y,Z "
             "-- ARG... (ARG: PATH.npy buffer, written back after the launch, or u32:V s32:V "
             "u64:V s64:V f32:V f64:V)");
  emu->footer("Example: tcjit emu run saxpy.ptx --kernel saxpy --grid 4 --block 256 -- x.npy "
              "y.npy f32:2.0 u32:1024");
  run->footer("Example: tcjit emu run saxpy.ptx --kernel saxpy --grid 4 --block 256 --stats -- "
              "x.npy y.npy f32:2.0 u32:1024");
  run->add_option("ptx", opt->ptx_file, "PTX file")->required();
  run->add_option("--kernel,-k", opt->kernel, "kernel (.entry) name")->required();
  run->add_option("--grid", opt->grid, "grid dimensions X[,Y[,Z]]")->required();
  run->add_option("--block", opt->block, "block dimensions X[,Y[,Z]]")->required();
  run->add_option("--shared", opt->shared, "dynamic shared memory bytes");
  run->add_option("--threads", opt->threads, "host threads (default: all cores)");
  run->add_option("--max-instructions", opt->max_instructions,
                  "warp instructions one block may execute before the launch fails (an "
                  "infinite loop or a spin-wait)")
      ->capture_default_str();
  run->add_option("--timeout", opt->timeout,
                  "wall-clock seconds the launch may run before it fails; 0: no limit")
      ->capture_default_str();
  run->add_flag("--racecheck-all", opt->racecheck_all,
                "check shared-memory races in every block (default: the first block, every 16th "
                "and the grid's corners; also TCJIT_EMU_RACECHECK=all)");
  run->add_flag("--stats", opt->stats, "print the launch counters");
  run->add_flag("--json", opt->json, "machine-readable output");
  run->add_option("args", opt->args, "kernel arguments (after --)");
  run->callback([opt]() { throw CLI::RuntimeError(run_emu(*opt)); });
}

} // namespace tcjit::cli
