// The PTX emulator as a device::Device: runs PTX on the CPU, checks every access (sanitizer) and
// counts what each launch did (last_counters()).
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "runtime/device/device.h"
#include "runtime/emu/counters.h"
#include "runtime/emu/racecheck_mode.h"

namespace tcjit::emu {

struct Program;
class GlobalMemory;

struct EmuDeviceOptions {
  int sm_arch = 80;
  uint32_t sm_count = 108;
  unsigned worker_threads = 0; // host threads running CTAs; 0: all hardware threads
  uint32_t max_shared_bytes_per_block = 163 * 1024;
  uint64_t max_warp_instructions_per_cta = 0; // 0: 2^34; more fails the launch (infinite loop)
  double timeout_seconds = 0; // wall-clock limit per launch; 0: none (more fails the launch)
  // racecheck in a sample of blocks (default; TCJIT_EMU_RACECHECK=all for all) or in all
  RaceCheck racecheck = RaceCheck::Default;
};

class EmuDevice : public device::Device {
public:
  explicit EmuDevice(EmuDeviceOptions options = {});
  ~EmuDevice() override;

  device::DeviceInfo info() const override;
  device::DevicePtr allocate(size_t bytes) override;
  void free(device::DevicePtr ptr) override;
  void copy_to_device(device::DevicePtr dst, const void *src, size_t bytes) override;
  void copy_to_host(void *dst, device::DevicePtr src, size_t bytes) override;
  void memset(device::DevicePtr dst, uint8_t value, size_t bytes) override;
  device::ModuleHandle load_module(std::string_view ptx, std::string_view source_name) override;
  void unload_module(device::ModuleHandle module) override;
  device::FunctionHandle get_function(device::ModuleHandle module, std::string_view name) override;
  const device::KernelInfo &kernel_info(device::FunctionHandle function) const override;
  void launch(device::FunctionHandle function, const device::LaunchConfig &config,
              std::span<const std::byte> params) override;
  void synchronize() override {}
  void set_progress(std::function<void(uint64_t done, uint64_t total)> callback) override {
    progress_ = std::move(callback);
  }

  // Counters of the most recent successful launch.
  const LaunchCounters &last_counters() const { return last_counters_; }
  // The decoded program of a module (for tools and tests).
  const Program &program(device::ModuleHandle module) const;

private:
  struct ModuleEntry;
  struct ProgramCache;
  struct FunctionEntry {
    uint64_t module = 0;
    uint32_t function = 0;
  };
  const ModuleEntry &module_entry(uint64_t id) const;
  const FunctionEntry &function_entry(uint64_t id) const;

  EmuDeviceOptions options_;
  std::unique_ptr<GlobalMemory> memory_;
  std::vector<std::unique_ptr<ModuleEntry>> modules_;
  std::unique_ptr<ProgramCache> program_cache_; // decoded programs by PTX (emu_device.cpp)
  std::vector<FunctionEntry> functions_;
  LaunchCounters last_counters_;
  std::function<void(uint64_t, uint64_t)> progress_;
};

} // namespace tcjit::emu
