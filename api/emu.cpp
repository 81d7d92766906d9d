// include/tcjit/emu.hpp: one kernel on the PTX emulator, its buffers from and back to .npy files.
#include "tcjit/emu.hpp"

#include "runtime/device/npy_file.h"
#include "runtime/emu/counters.h"
#include "runtime/emu/emu_device.h"
#include "support/regular_file.h"

#include <chrono>
#include <stdexcept>

namespace tcjit {
namespace {

device::Dim3 dim3_of(const EmuDim3 &d) {
  device::Dim3 dim;
  dim.x = d.x;
  dim.y = d.y;
  dim.z = d.z;
  return dim;
}

EmuCounters counters_of(const emu::LaunchCounters &c) {
  EmuCounters counters;
  counters.ctas = c.ctas;
  counters.threads = c.threads;
  counters.warp_instructions = c.warp_instructions;
  for (size_t i = 0; i < emu::kInstrClassCount; ++i)
    counters.warp_instructions_by_class.emplace_back(
        emu::instr_class_name(static_cast<emu::InstrClass>(i)), c.warp_instructions_by_class[i]);
  counters.thread_instructions = c.thread_instructions;
  counters.mma_instructions = c.mma_instructions;
  counters.mma_flops = c.mma_flops;
  counters.undefined_mma_sp_rows = c.undefined_mma_sp_rows;
  counters.shared_load_requests = c.shared_load_requests;
  counters.shared_store_requests = c.shared_store_requests;
  counters.ldmatrix_requests = c.ldmatrix_requests;
  counters.shared_wavefronts = c.shared_wavefronts;
  counters.shared_bank_conflicts = c.shared_bank_conflicts;
  counters.global_load_requests = c.global_load_requests;
  counters.global_store_requests = c.global_store_requests;
  counters.global_atomic_requests = c.global_atomic_requests;
  counters.cp_async_requests = c.cp_async_requests;
  counters.global_load_sectors = c.global_load_sectors;
  counters.global_store_sectors = c.global_store_sectors;
  counters.global_load_sectors_per_request = c.global_load_sectors_per_request();
  counters.global_store_sectors_per_request = c.global_store_sectors_per_request();
  counters.global_load_efficiency = c.global_load_efficiency();
  counters.global_store_efficiency = c.global_store_efficiency();
  counters.global_bytes_read = c.global_bytes_read;
  counters.global_bytes_written = c.global_bytes_written;
  counters.local_requests = c.local_requests;
  counters.barriers = c.barriers;
  counters.text = emu::format_counters(c);
  return counters;
}

Error bad_request(const std::string &message) {
  return Error(ErrorCode::invalid_argument, message, "emu run", "");
}

// A buffer argument on the device: its file's contents, and where they are.
struct BoundBuffer {
  size_t param = 0;
  std::string path;
  device::NpyArray array;
  device::DevicePtr ptr = 0;
};

// Binds the arguments to the kernel's parameters; reads and copies the .npy buffers.
std::vector<BoundBuffer> bind_arguments(emu::EmuDevice &device, const device::KernelInfo &info,
                                        const EmuRunRequest &request, device::ParamBuffer &params) {
  if (request.args.size() != info.params.size())
    throw bad_request("kernel '" + request.kernel + "' takes " +
                      std::to_string(info.params.size()) + " parameters, " +
                      std::to_string(request.args.size()) + " arguments given after --");
  std::vector<BoundBuffer> buffers;
  for (size_t i = 0; i < request.args.size(); ++i) {
    const EmuArgument &arg = request.args[i];
    if (arg.npy_path.empty()) {
      params.set_bytes(i, arg.scalar.data(), arg.scalar.size());
      continue;
    }
    // a FIFO or a device would block or never end (read, then written back)
    if (std::string problem = support::not_regular_file_problem(arg.npy_path); !problem.empty())
      throw bad_request(problem);
    BoundBuffer buffer{i, arg.npy_path, device::read_npy(arg.npy_path), 0};
    buffer.ptr = device.allocate(buffer.array.data.size());
    device.copy_to_device(buffer.ptr, buffer.array.data.data(), buffer.array.data.size());
    if (info.params[i].size != 8)
      throw bad_request("parameter " + std::to_string(i) + " ('" + info.params[i].name + "') is " +
                        std::to_string(info.params[i].size) +
                        " bytes; a .npy buffer passes an 8-byte pointer");
    params.set(i, buffer.ptr);
    buffers.push_back(std::move(buffer));
  }
  return buffers;
}

} // namespace

std::string read_ptx_file(const std::string &path) {
  support::FileRead file = support::read_regular_file(path, kMaxPtxFileBytes);
  switch (file.status) {
  case support::FileReadStatus::ok: return std::move(file.text);
  case support::FileReadStatus::too_large:
    throw Error(ErrorCode::invalid_argument, file.problem + " for a PTX file", "emu run",
                "a PTX file is at most 64 MiB (docs/emulator.md, \"Limits\")");
  case support::FileReadStatus::not_regular:
    throw Error(ErrorCode::invalid_argument, file.problem, "emu run",
                "name a PTX file (a FIFO, device, socket or directory is not read)");
  case support::FileReadStatus::missing:
  case support::FileReadStatus::unreadable: break;
  }
  throw Error(ErrorCode::invalid_argument, file.problem, "emu run", "");
}

EmuCounters emu_run(const EmuRunRequest &request) {
  emu::EmuDeviceOptions options;
  options.worker_threads = request.threads;
  options.max_warp_instructions_per_cta = request.max_instructions;
  options.timeout_seconds = request.timeout_seconds;
  if (request.racecheck_all)
    options.racecheck = emu::RaceCheck::All;
  emu::EmuDevice device(options);
  try {
    device::LaunchConfig config;
    config.grid = dim3_of(request.grid);
    config.block = dim3_of(request.block);
    config.dynamic_shared_bytes = request.dynamic_shared_bytes;
    device::ModuleHandle module = device.load_module(request.ptx, request.ptx_name);
    device::FunctionHandle function = device.get_function(module, request.kernel);
    const device::KernelInfo &info = device.kernel_info(function);
    device::ParamBuffer params(info);
    std::vector<BoundBuffer> buffers = bind_arguments(device, info, request, params);
    if (request.on_progress) {
      // The callback runs during launch(), after this block: it keeps its own copy of the start.
      const auto start = std::chrono::steady_clock::now();
      device.set_progress([&request, start](uint64_t done, uint64_t total) {
        Progress progress;
        progress.what = "blocks";
        progress.done = done;
        progress.total = total;
        progress.elapsed_seconds =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        request.on_progress(progress);
      });
    }
    device.launch(function, config, params.bytes());
    device.set_progress({});
    for (BoundBuffer &buffer : buffers) {
      device.copy_to_host(buffer.array.data.data(), buffer.ptr, buffer.array.data.size());
      device::write_npy_data(buffer.path, buffer.array);
    }
  } catch (const device::DeviceError &e) {
    throw Error(e.kind() == device::ErrorKind::InvalidArgument ? ErrorCode::invalid_argument
                                                               : ErrorCode::device,
                e.what(), "emu run", "");
  } catch (const Error &) {
    throw;
  } catch (const std::runtime_error &e) { // .npy problems
    throw bad_request(e.what());
  }
  return counters_of(device.last_counters());
}

} // namespace tcjit
