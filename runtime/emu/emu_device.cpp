#include "runtime/emu/emu_device.h"

#include <cstring>

#include "runtime/emu/executor.h"
#include "runtime/emu/global_memory.h"
#include "runtime/emu/program.h"

namespace tcjit::emu {

using device::DeviceError;
using device::ErrorKind;

struct EmuDevice::ModuleEntry {
  std::shared_ptr<const Program> program;
  std::vector<uint64_t> global_allocations;
  bool loaded = true;
};

EmuDevice::EmuDevice(EmuDeviceOptions options)
    : options_(options), memory_(std::make_unique<GlobalMemory>()),
      program_cache_(std::make_unique<ProgramCache>()) {}

EmuDevice::~EmuDevice() = default;

device::DeviceInfo EmuDevice::info() const {
  device::DeviceInfo i;
  i.name = "tcjit PTX emulator (sm_" + std::to_string(options_.sm_arch) + ")";
  i.sm_arch = options_.sm_arch;
  i.sm_count = static_cast<int>(options_.sm_count);
  i.global_memory_bytes = 1ull << 40;
  i.max_shared_bytes_per_block = options_.max_shared_bytes_per_block;
  i.max_threads_per_block = 1024;
  i.warp_size = 32;
  i.is_emulator = true;
  return i;
}

device::DevicePtr EmuDevice::allocate(size_t bytes) {
  return memory_->allocate(bytes, 256);
}

void EmuDevice::free(device::DevicePtr ptr) {
  memory_->free(ptr);
}

void EmuDevice::copy_to_device(device::DevicePtr dst, const void *src, size_t bytes) {
  if (bytes == 0)
    return;
  std::memcpy(memory_->host_range(dst, bytes, "copy_to_device destination"), src, bytes);
}

void EmuDevice::copy_to_host(void *dst, device::DevicePtr src, size_t bytes) {
  if (bytes == 0)
    return;
  std::memcpy(dst, memory_->host_range(src, bytes, "copy_to_host source"), bytes);
}

void EmuDevice::memset(device::DevicePtr dst, uint8_t value, size_t bytes) {
  if (bytes == 0)
    return;
  std::memset(memory_->host_range(dst, bytes, "memset destination"), value, bytes);
}

// Decoded programs of modules without .global/.const variables (whose addresses are the
// module's own device allocations), by source name and PTX text: loading the same PTX again (a
// tuner's probes, verify then time) reuses the decoded program. The last kProgramCacheSize.
struct EmuDevice::ProgramCache {
  static constexpr size_t kProgramCacheSize = 16;
  struct Entry {
    std::string key; // source name, '\0', PTX text
    std::shared_ptr<const Program> program;
  };
  std::vector<Entry> entries; // most recent last
  std::shared_ptr<const Program> find(const std::string &key) {
    for (size_t i = 0; i < entries.size(); ++i) {
      if (entries[i].key == key) {
        Entry e = std::move(entries[i]);
        entries.erase(entries.begin() + static_cast<std::ptrdiff_t>(i));
        entries.push_back(std::move(e));
        return entries.back().program;
      }
    }
    return nullptr;
  }
  void add(std::string key, std::shared_ptr<const Program> program) {
    if (entries.size() == kProgramCacheSize)
      entries.erase(entries.begin());
    entries.push_back({std::move(key), std::move(program)});
  }
};

device::ModuleHandle EmuDevice::load_module(std::string_view ptx, std::string_view source_name) {
  auto entry = std::make_unique<ModuleEntry>();
  std::string key = std::string(source_name) + '\0' + std::string(ptx);
  if (std::shared_ptr<const Program> cached = program_cache_->find(key)) {
    entry->program = std::move(cached);
    modules_.push_back(std::move(entry));
    return device::ModuleHandle{modules_.size()};
  }
  std::vector<uint64_t> allocations;
  try {
    entry->program = load_program(ptx, source_name, [&](uint64_t size, uint32_t align) {
      uint64_t a = memory_->allocate(size, align);
      allocations.push_back(a);
      return a;
    });
  } catch (...) {
    for (uint64_t a : allocations)
      memory_->free(a);
    throw;
  }
  entry->global_allocations = allocations;
  if (entry->program->globals.empty())
    program_cache_->add(std::move(key), entry->program);
  for (const GlobalVariable &g : entry->program->globals) {
    if (!g.init.empty())
      std::memcpy(memory_->host_range(g.address, g.init.size(), "module variable"), g.init.data(),
                  g.init.size());
  }
  modules_.push_back(std::move(entry));
  return device::ModuleHandle{modules_.size()};
}

const EmuDevice::ModuleEntry &EmuDevice::module_entry(uint64_t id) const {
  if (id == 0 || id > modules_.size() || !modules_[id - 1]->loaded)
    throw DeviceError(ErrorKind::NotFound,
                      "emulator: module handle " + std::to_string(id) +
                          " is not a loaded module; use a handle returned by load_module()");
  return *modules_[id - 1];
}

void EmuDevice::unload_module(device::ModuleHandle module) {
  const ModuleEntry &e = module_entry(module.id);
  for (uint64_t a : e.global_allocations)
    memory_->free(a);
  modules_[module.id - 1]->loaded = false;
  modules_[module.id - 1]->program.reset();
}

device::FunctionHandle EmuDevice::get_function(device::ModuleHandle module, std::string_view name) {
  const ModuleEntry &e = module_entry(module.id);
  auto it = e.program->function_index.find(std::string(name));
  if (it == e.program->function_index.end() || !e.program->functions[it->second].is_entry) {
    std::string kernels;
    for (const Function &f : e.program->functions) {
      if (f.is_entry)
        kernels += (kernels.empty() ? "" : ", ") + f.name;
    }
    throw DeviceError(ErrorKind::NotFound,
                      "emulator: module '" + e.program->source_name + "' has no kernel '" +
                          std::string(name) +
                          "' (kernels: " + (kernels.empty() ? std::string("none") : kernels) +
                          "); C++ kernels need extern \"C\" or their mangled name");
  }
  functions_.push_back({module.id, it->second});
  return device::FunctionHandle{functions_.size()};
}

const EmuDevice::FunctionEntry &EmuDevice::function_entry(uint64_t id) const {
  if (id == 0 || id > functions_.size())
    throw DeviceError(ErrorKind::NotFound,
                      "emulator: function handle " + std::to_string(id) +
                          " is unknown; use a handle returned by get_function()");
  return functions_[id - 1];
}

const device::KernelInfo &EmuDevice::kernel_info(device::FunctionHandle function) const {
  const FunctionEntry &f = function_entry(function.id);
  return module_entry(f.module).program->functions[f.function].info;
}

const Program &EmuDevice::program(device::ModuleHandle module) const {
  return *module_entry(module.id).program;
}

void EmuDevice::launch(device::FunctionHandle function, const device::LaunchConfig &config,
                       std::span<const std::byte> params) {
  const FunctionEntry &f = function_entry(function.id);
  const ModuleEntry &m = module_entry(f.module);
  LaunchRequest req;
  req.program = m.program.get();
  req.function = f.function;
  req.config = config;
  req.params = params;
  req.memory = memory_.get();
  req.worker_threads = options_.worker_threads;
  req.sm_count = options_.sm_count;
  req.max_shared_bytes = options_.max_shared_bytes_per_block;
  req.max_warp_instructions_per_cta = options_.max_warp_instructions_per_cta;
  req.on_progress = progress_;
  req.timeout_seconds = options_.timeout_seconds;
  req.racecheck = options_.racecheck;
  last_counters_ = execute_launch(req);
}

} // namespace tcjit::emu
