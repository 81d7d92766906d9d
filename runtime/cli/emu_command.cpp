#include "runtime/cli/emu_command.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstring>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "runtime/cli/exit_codes.h"
#include "runtime/device/npy_file.h"
#include "runtime/emu/counters.h"
#include "runtime/emu/emu_device.h"

namespace tcjit::cli {

namespace {

struct EmuRunOptions {
  std::string ptx_file;
  std::string kernel;
  std::string grid = "1";
  std::string block = "1";
  uint32_t shared = 0;
  bool stats = false;
  bool json = false;
  unsigned threads = 0;
  std::vector<std::string> args;
};

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

device::Dim3 parse_dim3(const std::string &text, const char *what) {
  device::Dim3 d;
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

struct ArgBinding {
  bool is_buffer = false;
  std::string path;
  device::NpyArray array;
  device::DevicePtr ptr = 0;
  std::vector<std::byte> scalar;
};

ArgBinding parse_arg(const std::string &arg) {
  ArgBinding b;
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
    b.is_buffer = true;
    b.path = arg;
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

nlohmann::json counters_json(const emu::LaunchCounters &c) {
  nlohmann::json j;
  j["ctas"] = c.ctas;
  j["threads"] = c.threads;
  j["warp_instructions"] = c.warp_instructions;
  for (size_t i = 0; i < emu::kInstrClassCount; ++i)
    j["warp_instructions_by_class"][emu::instr_class_name(static_cast<emu::InstrClass>(i))] =
        c.warp_instructions_by_class[i];
  j["thread_instructions"] = c.thread_instructions;
  j["mma_instructions"] = c.mma_instructions;
  j["mma_flops"] = c.mma_flops;
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
  j["global_load_sectors_per_request"] = c.global_load_sectors_per_request();
  j["global_store_sectors_per_request"] = c.global_store_sectors_per_request();
  j["global_load_efficiency"] = c.global_load_efficiency();
  j["global_store_efficiency"] = c.global_store_efficiency();
  j["global_bytes_read"] = c.global_bytes_read;
  j["global_bytes_written"] = c.global_bytes_written;
  j["local_requests"] = c.local_requests;
  j["barriers"] = c.barriers;
  return j;
}

int run_emu(const EmuRunOptions &opt) {
  auto fail = [&](int code, const std::string &msg) {
    if (opt.json)
      std::cout << nlohmann::json{{"status", "error"}, {"error", msg}}.dump(2) << "\n";
    std::cerr << "tcjit emu: " << msg << "\n";
    return code;
  };
  std::vector<ArgBinding> bindings;
  device::LaunchConfig config;
  std::string ptx;
  try {
    config.grid = parse_dim3(opt.grid, "--grid");
    config.block = parse_dim3(opt.block, "--block");
    config.dynamic_shared_bytes = opt.shared;
    for (const std::string &a : opt.args)
      bindings.push_back(parse_arg(a));
    std::ifstream in(opt.ptx_file);
    if (!in)
      throw UsageError("cannot read '" + opt.ptx_file + "'");
    std::stringstream ss;
    ss << in.rdbuf();
    ptx = ss.str();
  } catch (const UsageError &e) {
    return fail(kExitUsage, e.what());
  }
  emu::EmuDeviceOptions dev_opt;
  dev_opt.worker_threads = opt.threads;
  emu::EmuDevice dev(dev_opt);
  try {
    device::ModuleHandle m = dev.load_module(ptx, opt.ptx_file);
    device::FunctionHandle f = dev.get_function(m, opt.kernel);
    const device::KernelInfo &info = dev.kernel_info(f);
    if (bindings.size() != info.params.size())
      return fail(kExitUsage, "kernel '" + opt.kernel + "' takes " +
                                  std::to_string(info.params.size()) + " parameters, " +
                                  std::to_string(bindings.size()) + " arguments given after --");
    device::ParamBuffer params(info);
    for (size_t i = 0; i < bindings.size(); ++i) {
      ArgBinding &b = bindings[i];
      if (b.is_buffer) {
        b.array = device::read_npy(b.path);
        b.ptr = dev.allocate(b.array.data.size());
        dev.copy_to_device(b.ptr, b.array.data.data(), b.array.data.size());
        if (info.params[i].size != 8)
          return fail(kExitUsage, "parameter " + std::to_string(i) + " ('" + info.params[i].name +
                                      "') is " + std::to_string(info.params[i].size) +
                                      " bytes; a .npy buffer passes an 8-byte pointer");
        params.set(i, b.ptr);
      } else {
        params.set_bytes(i, b.scalar.data(), b.scalar.size());
      }
    }
    dev.launch(f, config, params.bytes());
    for (ArgBinding &b : bindings) {
      if (!b.is_buffer)
        continue;
      dev.copy_to_host(b.array.data.data(), b.ptr, b.array.data.size());
      device::write_npy_data(b.path, b.array);
    }
  } catch (const device::DeviceError &e) {
    int code = e.kind() == device::ErrorKind::InvalidArgument ? kExitUsage : kExitFailure;
    return fail(code, e.what());
  } catch (const std::runtime_error &e) { // .npy problems
    return fail(kExitUsage, e.what());
  }
  const emu::LaunchCounters &c = dev.last_counters();
  if (opt.json) {
    nlohmann::json j{{"status", "ok"}, {"kernel", opt.kernel}};
    if (opt.stats)
      j["counters"] = counters_json(c);
    std::cout << j.dump(2) << "\n";
  } else if (opt.stats) {
    std::cout << emu::format_counters(c);
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
  run->add_option("ptx", opt->ptx_file, "PTX file")->required();
  run->add_option("--kernel,-k", opt->kernel, "kernel (.entry) name")->required();
  run->add_option("--grid", opt->grid, "grid dimensions X[,Y[,Z]]")->required();
  run->add_option("--block", opt->block, "block dimensions X[,Y[,Z]]")->required();
  run->add_option("--shared", opt->shared, "dynamic shared memory bytes");
  run->add_option("--threads", opt->threads, "host threads (default: all cores)");
  run->add_flag("--stats", opt->stats, "print the launch counters");
  run->add_flag("--json", opt->json, "machine-readable output");
  run->add_option("args", opt->args, "kernel arguments (after --)");
  run->callback([opt]() { throw CLI::RuntimeError(run_emu(*opt)); });
}

} // namespace tcjit::cli
