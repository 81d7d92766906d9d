// `tcjit run` on a GPU (api::verify_on_device on a device that is not the emulator): a verified
// kernel is timed with the CUDA measurer's method and its ok result is stored with that timing.
// The database refuses an ok, measured result without one, which is what every `tcjit run
// --device cuda --db` did before (the first GPU run of bench/gpu: 0 of 44 matrix cases stored).
// The GPU here is the emulator reporting itself as one (is_emulator false): the kernel's output
// is real, and the device's time is the emulation's wall clock.
#include "api/verify.h"
#include "compiler/dsl/parser.h"
#include "compiler/spec/problem_key.h"
#include "kernels_db/kernels_db.h"
#include "runtime/device_factory.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <memory>
#include <string>
#include <unistd.h>

namespace tcjit {
namespace {

namespace fs = std::filesystem;
namespace kdb = kernels_db;

// The emulator, presented as a GPU: every call goes to it; info() says it is not an emulator.
class GpuLikeDevice : public device::Device {
public:
  GpuLikeDevice() : emu_(device::open_device("emu")) {}
  device::DeviceInfo info() const override {
    device::DeviceInfo i = emu_->info();
    i.name = "GPU-like emulator";
    i.is_emulator = false;
    return i;
  }
  device::DevicePtr allocate(size_t bytes) override { return emu_->allocate(bytes); }
  void free(device::DevicePtr ptr) override { emu_->free(ptr); }
  void copy_to_device(device::DevicePtr dst, const void *src, size_t bytes) override {
    emu_->copy_to_device(dst, src, bytes);
  }
  void copy_to_host(void *dst, device::DevicePtr src, size_t bytes) override {
    emu_->copy_to_host(dst, src, bytes);
  }
  void memset(device::DevicePtr dst, uint8_t value, size_t bytes) override {
    ++memsets;
    emu_->memset(dst, value, bytes);
  }
  device::ModuleHandle load_module(std::string_view ptx, std::string_view name) override {
    return emu_->load_module(ptx, name);
  }
  void unload_module(device::ModuleHandle module) override { emu_->unload_module(module); }
  device::FunctionHandle get_function(device::ModuleHandle module, std::string_view name) override {
    return emu_->get_function(module, name);
  }
  const device::KernelInfo &kernel_info(device::FunctionHandle function) const override {
    return emu_->kernel_info(function);
  }
  void launch(device::FunctionHandle function, const device::LaunchConfig &config,
              std::span<const std::byte> params) override {
    ++launches;
    emu_->launch(function, config, params);
  }
  void synchronize() override { emu_->synchronize(); }
  double time_ms(const std::function<void()> &enqueue) override {
    ++timed;
    return emu_->time_ms(enqueue);
  }

  int launches = 0, timed = 0, memsets = 0;

private:
  std::unique_ptr<device::Device> emu_;
};

struct TempDb {
  fs::path dir = fs::temp_directory_path() / ("tcjit_verify_gpu_" + std::to_string(getpid()));
  TempDb() { fs::create_directories(dir); }
  ~TempDb() { fs::remove_all(dir); }
};

OpSpec spec_of(const std::string &text) {
  const ParseResult parsed = parse_spec(text);
  EXPECT_TRUE(parsed.ok() && parsed.entries.size() == 1) << text;
  return parsed.entries.front().spec;
}

constexpr const char *kSpec = "gemm m=48 n=40 k=64 a=f16:row b=f16:col c=f32:row acc=f32";

TEST(VerifyOnAGpu, AVerifiedKernelIsTimedAndStoredWithItsTiming) {
  const TempDb temp;
  kdb::KernelsDb db = kdb::KernelsDb::open(temp.dir / "kernels.db");
  GpuLikeDevice gpu;
  const OpSpec spec = spec_of(kSpec);
  VerifyRequest request;
  request.config = "32x32x32 w16x16 s2";
  const VerifyReport report =
      api::verify_on_device(gpu, &db, "sm_80", false, codegen::Backend::llvm, spec, request);
  ASSERT_TRUE(report.ok) << report.text;
  EXPECT_TRUE(report.recorded);
  // Timed: at least the measurer's 3 warm-ups and 10 repetitions, each repetition after an L2
  // flush, beside the one checked launch.
  EXPECT_GE(gpu.timed, 10);
  EXPECT_GE(gpu.launches, 1 + 3 + gpu.timed);
  EXPECT_GE(gpu.memsets, gpu.timed);
  ASSERT_TRUE(report.median_us.has_value());
  EXPECT_GT(*report.median_us, 0);
  ASSERT_TRUE(report.tflops.has_value());
  EXPECT_NE(report.text.find("time:     median "), std::string::npos) << report.text;
  const nlohmann::json j = nlohmann::json::parse(report.json);
  ASSERT_TRUE(j.contains("timing")) << report.json;
  EXPECT_DOUBLE_EQ(j["timing"]["median_us"].get<double>(), *report.median_us);

  const ProblemKey key = make_problem_key(spec, "sm_80", false);
  const std::vector<kdb::ResultRecord> results = db.results(key.text);
  ASSERT_EQ(results.size(), 1u);
  const kdb::ResultRecord &r = results.front();
  EXPECT_EQ(r.status, kdb::ResultStatus::ok);
  EXPECT_EQ(r.provenance.kind, kdb::ProvenanceKind::measured);
  EXPECT_EQ(r.provenance.device, "GPU-like emulator");
  ASSERT_TRUE(r.timing.has_value());
  EXPECT_DOUBLE_EQ(r.timing->median_us, *report.median_us);
  EXPECT_LE(r.timing->min_us, r.timing->median_us);
  EXPECT_GE(r.timing->max_us, r.timing->median_us);
}

TEST(VerifyOnAGpu, TheEmulatorIsNeverTimedAndItsResultIsStoredAsEmulated) {
  const TempDb temp;
  kdb::KernelsDb db = kdb::KernelsDb::open(temp.dir / "kernels.db");
  std::unique_ptr<device::Device> emu = device::open_device("emu");
  const OpSpec spec = spec_of(kSpec);
  VerifyRequest request;
  request.config = "32x32x32 w16x16 s2";
  const VerifyReport report =
      api::verify_on_device(*emu, &db, "sm_80", false, codegen::Backend::llvm, spec, request);
  ASSERT_TRUE(report.ok) << report.text;
  EXPECT_FALSE(report.median_us.has_value());
  EXPECT_EQ(report.text.find("time:"), std::string::npos) << report.text;
  const std::vector<kdb::ResultRecord> results =
      db.results(make_problem_key(spec, "sm_80", false).text);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results.front().provenance.kind, kdb::ProvenanceKind::emulated);
  EXPECT_FALSE(results.front().timing.has_value());
}

} // namespace
} // namespace tcjit
