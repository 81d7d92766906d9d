// The JIT compile service: PTX → cubin on a pool of worker threads, single-flight per
// (PTX hash, arch, options): while one compile of a key runs, later requests for the same key
// wait for its result instead of compiling again. Finished compiles are not cached here (that is
// kernels_db's job): a request after the first one finished compiles again.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "runtime/jit/ptx_compiler.h"

namespace tcjit::jit {

struct CompileRequest {
  std::string ptx;
  std::string source_name; // names the PTX in error messages
  PtxCompileOptions options;
};

struct CompileServiceOptions {
  unsigned worker_threads = 0; // 0: min(hardware threads, 4)
  // The compile itself; default: compile_ptx with the process-wide nvJitLink. Tests replace it
  // (to count compiles, or to hold one until every request has arrived).
  std::function<CompiledPtx(const CompileRequest &)> compile_function;
};

class CompileService {
public:
  explicit CompileService(CompileServiceOptions options = {});
  ~CompileService(); // waits for queued compiles to finish
  CompileService(const CompileService &) = delete;
  CompileService &operator=(const CompileService &) = delete;

  // Queues a compile, or joins the one of the same key in flight. The future holds the result
  // or the device::DeviceError the compile threw.
  std::shared_future<CompiledPtx> submit(CompileRequest request);
  // submit(...).get(): blocks, rethrows the compile's error.
  CompiledPtx compile(CompileRequest request);

  // Test hooks: compiles actually run, and requests answered by joining one in flight.
  uint64_t compiles_run() const;
  uint64_t requests_joined() const;

private:
  using Key = std::tuple<uint64_t, size_t, int, std::string>; // hash, length, arch, options
  void worker_loop();
  void forget_in_flight(const Key &key);

  CompileServiceOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable work_ready_;
  std::deque<std::function<void()>> queue_;
  std::map<Key, std::shared_future<CompiledPtx>> in_flight_;
  bool stopping_ = false;
  uint64_t compiles_run_ = 0;
  uint64_t requests_joined_ = 0;
  std::vector<std::thread> workers_;
};

// The process-wide service the CUDA device uses.
CompileService &default_compile_service();

} // namespace tcjit::jit
