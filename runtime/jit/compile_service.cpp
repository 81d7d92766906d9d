#include "runtime/jit/compile_service.h"

#include "support/fnv1a.h"

#include <algorithm>
#include <memory>

namespace tcjit::jit {

CompileService::CompileService(CompileServiceOptions options) : options_(std::move(options)) {
  if (!options_.compile_function) {
    options_.compile_function = [](const CompileRequest &request) {
      return compile_ptx(request.ptx, request.source_name, request.options);
    };
  }
  unsigned threads = options_.worker_threads;
  if (threads == 0) {
    threads = std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
  }
  for (unsigned i = 0; i < threads; ++i) {
    workers_.emplace_back([this] { worker_loop(); });
  }
}

CompileService::~CompileService() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  work_ready_.notify_all();
  for (std::thread &worker : workers_) {
    worker.join();
  }
}

void CompileService::worker_loop() {
  for (;;) {
    std::function<void()> job;
    {
      std::unique_lock lock(mutex_);
      work_ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) {
        return; // stopping, and every queued compile has run
      }
      job = std::move(queue_.front());
      queue_.pop_front();
    }
    job();
  }
}

std::shared_future<CompiledPtx> CompileService::submit(CompileRequest request) {
  Key key{support::fnv1a64(request.ptx), request.ptx.size(), request.options.sm_arch,
          options_text(request.options)};
  std::lock_guard lock(mutex_);
  if (auto found = in_flight_.find(key); found != in_flight_.end()) {
    ++requests_joined_;
    return found->second;
  }
  auto promise = std::make_shared<std::promise<CompiledPtx>>();
  std::shared_future<CompiledPtx> future = promise->get_future().share();
  in_flight_.emplace(key, future);
  ++compiles_run_;
  queue_.push_back([this, key, promise, request = std::move(request)] {
    // The key leaves the in-flight table before the result is published, so a request made
    // after a waiter saw the result starts a new compile instead of joining a finished one.
    try {
      CompiledPtx compiled = options_.compile_function(request);
      forget_in_flight(key);
      promise->set_value(std::move(compiled));
    } catch (...) {
      forget_in_flight(key);
      promise->set_exception(std::current_exception());
    }
  });
  work_ready_.notify_one();
  return future;
}

void CompileService::forget_in_flight(const Key &key) {
  std::lock_guard lock(mutex_);
  in_flight_.erase(key);
}

CompiledPtx CompileService::compile(CompileRequest request) {
  return submit(std::move(request)).get();
}

uint64_t CompileService::compiles_run() const {
  std::lock_guard lock(mutex_);
  return compiles_run_;
}

uint64_t CompileService::requests_joined() const {
  std::lock_guard lock(mutex_);
  return requests_joined_;
}

CompileService &default_compile_service() {
  static CompileService service;
  return service;
}

} // namespace tcjit::jit
