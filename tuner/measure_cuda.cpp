#include "tuner/measure_cuda.h"

#include "compiler/reference/gemm_geometry.h"
#include "compiler/reference/random_fill.h"
#include "compiler/spec/shape.h"
#include "engine/device_buffer.h"
#include "engine/kernel_launch.h"
#include "engine/kernel_records.h"
#include "engine/verify_kernel.h"
#include "runtime/cuda/cuda_device.h"
#include "tuner/measure_stats.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace tcjit::tuner {

namespace {

namespace kdb = kernels_db;

constexpr uint64_t kCheckSeed = 1;
constexpr uint64_t kTimingSeed = 101;
constexpr uint64_t kDefaultFlushBytes = uint64_t{128} << 20; // when the L2 size is unknown

// A device buffer of `count` random elements of `dtype`.
std::unique_ptr<engine::DeviceBuffer> random_buffer(device::Device &dev, DType dtype, int64_t count,
                                                    uint64_t seed) {
  std::vector<std::byte> host(static_cast<size_t>((count * dtype_bits(dtype) + 7) / 8));
  fill_random(dtype, host.data(), count, seed);
  return std::make_unique<engine::DeviceBuffer>(dev, host);
}

// Unloads a module when it goes out of scope.
struct LoadedModule {
  device::Device &dev;
  engine::LoadedKernel gemm;
  LoadedModule(device::Device &device, const engine::LoadedKernel &loaded)
      : dev(device), gemm(loaded) {}
  LoadedModule(const LoadedModule &) = delete;
  LoadedModule &operator=(const LoadedModule &) = delete;
  ~LoadedModule() {
    try {
      dev.unload_module(gemm.module);
    } catch (const device::DeviceError &) {
      // As for engine::DeviceBuffer.
    }
  }
};

std::string percent_text(double fraction) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.2f%%", 100 * fraction);
  return text;
}

void check_options(const CudaMeasureOptions &options) {
  if (options.warmup < 0 || options.min_reps < 1 || options.max_reps < options.min_reps ||
      !(options.spread >= 0))
    throw std::invalid_argument(
        "cuda measurer options: need warmup >= 0, 1 <= min_reps <= max_reps and spread >= 0 "
        "(got warmup " +
        std::to_string(options.warmup) + ", min_reps " + std::to_string(options.min_reps) +
        ", max_reps " + std::to_string(options.max_reps) + ", spread " +
        std::to_string(options.spread) + ")");
}

// Measured on a GPU (device, driver, SM clock), or emulated.
kdb::Provenance device_provenance(device::Device &dev, const device::DeviceInfo &info) {
  kdb::Provenance provenance;
  provenance.kind =
      info.is_emulator ? kdb::ProvenanceKind::emulated : kdb::ProvenanceKind::measured;
  provenance.device = info.name;
  if (const auto *gpu = dynamic_cast<const cuda::CudaDevice *>(&dev)) {
    const cuda::CudaDeviceProperties &p = gpu->properties();
    provenance.driver = "CUDA " + std::to_string(p.driver_version / 1000) + "." +
                        std::to_string(p.driver_version % 1000 / 10);
    if (p.clock_khz > 0)
      provenance.clock_mhz = p.clock_khz / 1000;
  }
  return provenance;
}

// The bytes written between repetitions: twice the L2, so none of the previous repetition's data
// is left in it; 0 (no flush) on the emulator, which has no cache to flush.
uint64_t flush_size(device::Device &dev, const device::DeviceInfo &info,
                    const CudaMeasureOptions &options) {
  if (!options.flush_l2 || info.is_emulator)
    return 0;
  uint64_t l2_bytes = 0;
  if (const auto *gpu = dynamic_cast<const cuda::CudaDevice *>(&dev))
    l2_bytes = static_cast<uint64_t>(std::max(gpu->properties().l2_cache_bytes, 0));
  return l2_bytes > 0 ? 2 * l2_bytes : kDefaultFlushBytes;
}

// Warm-up, then timed repetitions (the flush, when given, written before each, outside its events)
// until stop_repeating; sets m's status, timing, tflops and message.
void time_launches(device::Device &dev, const OpSpec &spec, const codegen::CompiledKernel &kernel,
                   std::span<const uint8_t> cubin, const CudaMeasureOptions &options,
                   const engine::DeviceBuffer *flush, bool is_emulator, Measurement &m) {
  const engine::OperandBuffers buf =
      engine::operand_buffers(spec); // a GEMM's matrices or a conv's tensors
  const bool has_bias = spec.epilogue.bias != BiasKind::none;
  const auto a = random_buffer(dev, buf.a_type, buf.a, kTimingSeed);
  const auto b = random_buffer(dev, buf.b_type, buf.b, kTimingSeed + 1);
  const auto c = random_buffer(dev, buf.c_type, buf.c, kTimingSeed + 2);
  const auto bias = random_buffer(dev, buf.c_type, buf.bias, kTimingSeed + 3);
  // D apart from C: each repetition computes the same values from the same inputs.
  const engine::DeviceBuffer d(dev,
                               static_cast<uint64_t>((buf.c * dtype_bits(buf.c_type) + 7) / 8));
  const engine::OperandPointers ptrs{a->ptr(), b->ptr(), c->ptr(), d.ptr(),
                                     has_bias ? bias->ptr() : 0};

  const LoadedModule module(dev, engine::load_kernel(dev, kernel, cubin));
  const uint64_t workspace_bytes = kernel_workspace_bytes(module.gemm, spec);
  std::optional<engine::DeviceBuffer> workspace;
  if (workspace_bytes > 0)
    workspace.emplace(dev, workspace_bytes);
  const device::DevicePtr ws = workspace ? workspace->ptr() : 0;

  const auto enqueue = [&] { engine::enqueue_kernel(dev, module.gemm, spec, ptrs, ws); };
  for (int i = 0; i < options.warmup; ++i) {
    enqueue();
    dev.synchronize();
  }
  std::vector<double> times_us;
  do {
    if (flush)
      dev.memset(flush->ptr(), static_cast<uint8_t>(times_us.size()), flush->bytes());
    times_us.push_back(1000.0 * dev.time_ms(enqueue));
  } while (!stop_repeating(times_us, options.min_reps, options.max_reps, options.spread));

  const RepStats stats = rep_stats(times_us);
  m.status = kdb::ResultStatus::ok;
  m.timing = to_timing(stats);
  const double flops = flop_count(spec).value_or(0); // a convolution's forward multiply-adds
  if (stats.median > 0)
    m.tflops = flops / (stats.median * 1e-6) / 1e12;
  m.message =
      std::to_string(stats.count) + " repetitions after " + std::to_string(options.warmup) +
      " warm-up, interquartile spread " + percent_text(relative_spread(stats)) + " of the median" +
      (flush ? ", L2 flushed (" + std::to_string(flush->bytes() >> 20) + " MiB)" : std::string()) +
      (is_emulator ? "; wall clock of the emulator, not a GPU's time" : "");
}

class CudaMeasurer : public Measurer {
public:
  CudaMeasurer(device::Device &dev, const CudaMeasureOptions &options)
      : dev_(dev), options_(options), info_(dev.info()), provenance_(device_provenance(dev, info_)),
        flush_bytes_(flush_size(dev, info_, options)) {}

  std::string name() const override { return "cuda"; }
  bool needs_build() const override { return true; }

  Measurement measure(const TuneTask &task, const codegen::TileConfig &config,
                      const BuiltCandidate *built) override {
    Measurement m;
    m.provenance = provenance_;
    const auto failed = [&](std::string message) {
      m.status = kdb::ResultStatus::failed;
      m.message = std::move(message);
      return m;
    };
    if (!built)
      return failed("the cuda measurer needs the built candidate (none was given)");
    if (!built->usable())
      return failed("not built (" + built->failure_rule + "): " + built->failure);
    if (!is_concrete(task.spec))
      return failed("the spec has symbolic sizes: the cuda measurer needs numbers (bind them)");
    const std::string device_arch = "sm_" + std::to_string(info_.sm_arch);
    if (!info_.is_emulator && task.arch != device_arch && task.arch != device_arch + "a")
      return failed("the task is for " + task.arch + ", the device (" + info_.name + ") is " +
                    device_arch + ": measure on a device of the task's arch");
    try {
      const std::span<const uint8_t> cubin = built->cubin.cubin;
      const std::string checked_id =
          task.key.text + " " + engine::config_json(config) + " " + task.arch;
      if (!checked_.contains(checked_id)) {
        const engine::KernelCheck check = engine::run_and_check_kernel(
            dev_, built->kernel, task.spec, kCheckSeed, cubin, &reference_);
        if (!check.report.ok())
          return failed("wrong result against the CPU reference: " + check.report.summary());
        checked_.insert(checked_id);
      }
      time(task.spec, *built, m);
    } catch (const device::DeviceError &error) {
      return failed(std::string("device error (") + device::error_kind_name(error.kind()) +
                    "): " + error.what());
    }
    return m;
  }

private:
  void time(const OpSpec &spec, const BuiltCandidate &built, Measurement &m) {
    if (flush_bytes_ > 0 && !flush_)
      flush_ = std::make_unique<engine::DeviceBuffer>(dev_, flush_bytes_);
    time_launches(dev_, spec, built.kernel, built.cubin.cubin, options_, flush_.get(),
                  info_.is_emulator, m);
  }

  device::Device &dev_;
  CudaMeasureOptions options_;
  device::DeviceInfo info_;
  kdb::Provenance provenance_;
  uint64_t flush_bytes_ = 0;
  std::unique_ptr<engine::DeviceBuffer> flush_;
  std::set<std::string> checked_;    // candidates whose output matched the reference
  engine::ReferenceCache reference_; // the last problem's CPU reference, shared by its candidates
};

} // namespace

std::unique_ptr<Measurer> make_cuda_measurer(device::Device &cuda,
                                             const CudaMeasureOptions &options) {
  check_options(options);
  return std::make_unique<CudaMeasurer>(cuda, options);
}

Measurement time_kernel(device::Device &dev, const OpSpec &spec,
                        const codegen::CompiledKernel &kernel, std::span<const uint8_t> cubin,
                        const CudaMeasureOptions &options) {
  check_options(options);
  const device::DeviceInfo info = dev.info();
  Measurement m;
  m.provenance = device_provenance(dev, info);
  const uint64_t flush_bytes = flush_size(dev, info, options);
  std::optional<engine::DeviceBuffer> flush;
  if (flush_bytes > 0)
    flush.emplace(dev, flush_bytes);
  time_launches(dev, spec, kernel, cubin, options, flush ? &*flush : nullptr, info.is_emulator, m);
  return m;
}

} // namespace tcjit::tuner
