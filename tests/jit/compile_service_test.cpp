#include "runtime/jit/compile_service.h"

#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "runtime/device/device.h"
#include "tests/jit/test_ptx.h"

namespace tcjit::jit {
namespace {

// Holds every compile until `release()`, and counts the compiles that really ran.
struct GatedCompiler {
  std::mutex mutex;
  std::condition_variable released_cv;
  bool released = false;
  std::atomic<int> compiles{0};

  CompiledPtx operator()(const CompileRequest &request) {
    ++compiles;
    std::unique_lock lock(mutex);
    released_cv.wait(lock, [this] { return released; });
    lock.unlock();
    return compile_ptx(request.ptx, request.source_name, request.options);
  }
  void release() {
    {
      std::lock_guard lock(mutex);
      released = true;
    }
    released_cv.notify_all();
  }
};

CompileRequest axpy_request(int sm_arch) {
  CompileRequest request;
  request.ptx = test::kAxpyPtx;
  request.source_name = "axpy.ptx";
  request.options.sm_arch = sm_arch;
  return request;
}

TEST(CompileService, SameKeyFromManyThreadsCompilesOnceAndAllGetIdenticalBytes) {
  GatedCompiler gate;
  CompileServiceOptions options;
  options.worker_threads = 4;
  options.compile_function = [&gate](const CompileRequest &request) { return gate(request); };
  CompileService service(std::move(options));

  constexpr int kThreads = 8;
  std::vector<std::shared_future<CompiledPtx>> futures(kThreads);
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] { futures[i] = service.submit(axpy_request(80)); });
  }
  for (std::thread &thread : threads) {
    thread.join();
  }
  gate.release(); // every request is in before the first compile may finish
  for (auto &future : futures) {
    const CompiledPtx &compiled = future.get();
    ASSERT_FALSE(compiled.cubin.empty());
    EXPECT_EQ(compiled.cubin, futures[0].get().cubin);
  }
  EXPECT_EQ(gate.compiles.load(), 1);
  EXPECT_EQ(service.compiles_run(), 1u);
  EXPECT_EQ(service.requests_joined(), static_cast<uint64_t>(kThreads - 1));
}

TEST(CompileService, DifferentArchOrOptionsAreDifferentCompiles) {
  GatedCompiler gate;
  CompileServiceOptions options;
  options.worker_threads = 2;
  options.compile_function = [&gate](const CompileRequest &request) { return gate(request); };
  CompileService service(std::move(options));
  auto sm80 = service.submit(axpy_request(80));
  auto sm90 = service.submit(axpy_request(90));
  CompileRequest line_info = axpy_request(80);
  line_info.options.line_info = true;
  auto sm80_lines = service.submit(line_info);
  gate.release();
  EXPECT_NE(sm80.get().cubin, sm90.get().cubin);
  EXPECT_EQ(sm80_lines.get().options, "-arch=sm_80 -O3 -Xptxas=-O3 -lineinfo");
  EXPECT_EQ(gate.compiles.load(), 3);
}

TEST(CompileService, AFinishedCompileIsNotJoinedButRunAgain) {
  std::atomic<int> compiles{0};
  CompileServiceOptions options;
  options.worker_threads = 1;
  options.compile_function = [&](const CompileRequest &request) {
    ++compiles;
    return compile_ptx(request.ptx, request.source_name, request.options);
  };
  CompileService service(std::move(options));
  CompiledPtx first = service.compile(axpy_request(86));
  CompiledPtx second = service.compile(axpy_request(86));
  EXPECT_EQ(first.cubin, second.cubin); // deterministic
  EXPECT_EQ(compiles.load(), 2);
}

TEST(CompileService, ErrorsReachEveryWaiter) {
  GatedCompiler gate;
  CompileServiceOptions options;
  options.compile_function = [&gate](const CompileRequest &request) { return gate(request); };
  CompileService service(std::move(options));
  CompileRequest broken = axpy_request(80);
  broken.ptx = test::kBrokenPtx;
  broken.source_name = "broken.ptx";
  auto first = service.submit(broken);
  auto second = service.submit(broken);
  gate.release();
  for (auto *future : {&first, &second}) {
    try {
      future->get();
      FAIL() << "expected a DeviceError";
    } catch (const device::DeviceError &error) {
      EXPECT_NE(std::string(error.what()).find("undeclared_register"), std::string::npos);
    }
  }
  EXPECT_EQ(gate.compiles.load(), 1);
}

TEST(CompileService, DefaultServiceCompilesWithNvJitLink) {
  CompiledPtx compiled = default_compile_service().compile(axpy_request(89));
  EXPECT_EQ(compiled.origin, CubinOrigin::NvJitLink);
  EXPECT_FALSE(compiled.cubin.empty());
}

} // namespace
} // namespace tcjit::jit
