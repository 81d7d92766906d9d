// A symbolic spec's kernel compiled on a background thread (api/runtime_state.h): prepare()
// returns before the compile (a fully symbolic spec's kernel takes a second or more: LLVM and
// ptxas over scalar loads), and the first use of the operation's kernel waits for it.
#include "api/runtime_state.h"
#include "api/served_kernel_error.h"

#include <utility>

namespace tcjit {

using api::SharedKernel;

namespace {

std::mutex hook_mutex;
std::function<void()> compile_hook; // set_background_compile_hook's

} // namespace

void api::set_background_compile_hook(std::function<void()> hook) {
  std::lock_guard lock(hook_mutex);
  compile_hook = std::move(hook);
}

std::shared_ptr<const api::SharedKernel> api::kernel_of(const Operation::State &state) {
  if (std::shared_ptr<const SharedKernel> kernel = state.kernel.load())
    return kernel;
  if (!state.compiling.valid())
    throw Error(ErrorCode::internal, "the operation has no kernel", "launch", "");
  // Each thread waits through its own copy of the future; get() rethrows the compile's Error.
  const std::shared_future<std::shared_ptr<const SharedKernel>> compiling = state.compiling;
  std::shared_ptr<const SharedKernel> compiled = compiling.get();
  std::shared_ptr<const SharedKernel> none;
  // Kept from now on (unless another thread stored it first: the same kernel).
  state.kernel.compare_exchange_strong(none, compiled);
  return state.kernel.load();
}

std::shared_future<std::shared_ptr<const api::SharedKernel>>
Runtime::Impl::compile_in_background(const OpSpec &spec, const ProblemKey &key,
                                     const engine::KernelRequest &request,
                                     const std::string &default_id) {
  // The task captures this Impl: ~Impl waits for it (background_compiles is destroyed first).
  auto compile = [this, spec, key, request, default_id]() -> std::shared_ptr<const SharedKernel> {
    std::function<void()> hook;
    {
      std::lock_guard lock(hook_mutex);
      hook = compile_hook;
    }
    if (hook)
      hook();
    engine::ServedKernel served = serve(spec, key, request, "prepare");
    if (!served.ok())
      throw api::served_kernel_error(served, "prepare", ErrorCode::bad_spec);
    std::shared_ptr<const SharedKernel> kernel = load(std::move(served));
    if (!default_id.empty() && default_id != kernel->identity) { // the first spilled: a fallback
      std::lock_guard lock(map_mutex);
      kernels.emplace(default_id, kernel);
    }
    return kernel;
  };
  std::shared_future<std::shared_ptr<const SharedKernel>> future =
      std::async(std::launch::async, std::move(compile)).share();
  std::lock_guard lock(background_compiles.mutex);
  background_compiles.running.push_back(future);
  return future;
}

} // namespace tcjit
