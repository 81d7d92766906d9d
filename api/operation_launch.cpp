// tcjit::Operation (include/tcjit/tcjit.hpp): a prepared kernel launched on the runtime's device
// at the sizes given — bound and checked against the spec's rules and the kernel's alignment, the
// kernel of the sizes' dispatch bucket, the caller's stream (api/runtime_state.h).
#include "api/runtime_state.h"

#include "compiler/codegen/plan/conv_lowering.h"
#include "compiler/codegen/plan/kernel_plan.h"
#include "compiler/codegen/plan/tile_config.h"
#include "compiler/reference/bind_dims.h"
#include "compiler/spec/alignment.h"
#include "compiler/spec/printer.h"
#include "compiler/spec/shape.h"
#include "compiler/spec/validate.h"

#include <stdexcept>
#include <utility>

namespace tcjit {

namespace {

// A launch on the caller's stream: the device's launches go to `stream` while this lives (the
// device's mutex held), then back to its own stream.
class StreamScope {
public:
  StreamScope(device::Device &dev, void *stream) : dev_(dev), set_(stream != nullptr) {
    if (set_)
      dev_.set_stream(stream);
  }
  StreamScope(const StreamScope &) = delete;
  StreamScope &operator=(const StreamScope &) = delete;
  ~StreamScope() {
    if (set_)
      dev_.set_stream(nullptr);
  }

private:
  device::Device &dev_;
  bool set_;
};

} // namespace

using api::SharedKernel;

Operation::Operation(std::shared_ptr<const State> state, Origin origin)
    : state_(std::move(state)), origin_(origin) {}

const std::string &Operation::spec_text() const {
  return state_->spec_text;
}
const OpSpec &Operation::spec() const {
  return state_->spec;
}
const std::string &Operation::key_text() const {
  return state_->key.text;
}
uint64_t Operation::key_hash() const {
  return state_->key.hash;
}
std::string Operation::key_hash_hex() const {
  return state_->key.hash_hex();
}
std::string Operation::config() const {
  return codegen::to_string(state_->kernel.load()->kernel.config);
}
std::string Operation::kernel_id() const {
  return state_->kernel.load()->identity;
}

ResourceUsage Operation::resources() const {
  ResourceUsage r;
  const std::shared_ptr<const SharedKernel> kernel = state_->kernel.load();
  const engine::MainKernelResources &k = kernel->resources;
  if (k.registers >= 0)
    r.registers = k.registers;
  if (k.spill_bytes >= 0)
    r.spill_bytes = k.spill_bytes;
  r.shared_bytes = k.shared_bytes;
  return r;
}

namespace {

// The spec of a launch with sizes given (or a symbolic spec): the prepared spec with the sizes
// bound, checked against the spec's rules and the kernel's vector widths. Throws Error.
OpSpec bind_launch_sizes(const Operation::State &s, const GemmArgs &args) {
  // The sizes of this launch: the spec's, or the arguments' where the spec leaves them symbolic
  // (or repeats them).
  const GemmSpec &g = s.spec.gemm;
  auto size_of = [&](const char *name, const Dim &dim, int64_t given) -> int64_t {
    if (given < 0)
      throw Error(ErrorCode::invalid_argument,
                  std::string("GemmArgs::") + name + " = " + std::to_string(given) + " is negative",
                  "launch", "pass the size, or 0 for the prepared spec's");
    if (given > 0)
      return given;
    if (dim.is_fixed())
      return dim.value;
    throw Error(ErrorCode::invalid_argument,
                std::string(name) + " is symbolic in the prepared spec (" + s.spec_text + ")",
                "launch", std::string("pass GemmArgs::") + name + " (the size of this launch)");
  };
  OpSpec bound;
  try {
    bound =
        bind_gemm_sizes(s.spec, {size_of("m", g.m, args.m), size_of("n", g.n, args.n),
                                 size_of("k", g.k, args.k), size_of("batch", g.batch, args.batch)});
  } catch (const std::invalid_argument &e) {
    throw Error(ErrorCode::invalid_argument, e.what(), "launch",
                "launch within the sizes the operation was prepared for, or prepare another");
  }
  // The sizes given now obey the spec's rules too (leading dimensions, the kernel's 32-bit sizes,
  // operand sizes).
  if (const std::vector<SpecError> errors = validate_spec(bound); !errors.empty()) {
    std::string text;
    for (const SpecError &e : errors)
      text += "\n  " + (e.key.empty() ? std::string("operation") : e.key) + ": " + e.message;
    throw Error(ErrorCode::invalid_argument,
                "the sizes of this launch make " + print_spec(bound) + " invalid:" + text, "launch",
                "pass sizes the spec allows");
  }
  return bound;
}

// The kernel's vector widths need the alignment they were compiled for. Throws Error.
void check_launch_alignment(const OpSpec &bound, const SharedKernel &kernel) {
  const codegen::KernelPlan &plan = kernel.kernel.plan;
  for (const OperandAlignment &al : analyze_alignment(bound)) {
    const int needed = al.operand == "a"   ? plan.a.vec
                       : al.operand == "b" ? plan.b.vec
                       : al.operand == "c" ? plan.c_vec
                                           : 1;
    if (al.elements < needed)
      throw Error(ErrorCode::invalid_argument,
                  "operand " + al.operand + " of " + print_spec(bound) + " is aligned to " +
                      std::to_string(al.elements) + " elements, but the kernel (" +
                      codegen::to_string(plan.config) + ") loads " + std::to_string(needed) +
                      " at a time",
                  "launch", "prepare the operation with sizes of that alignment (or with these)");
  }
}

// The kernel that runs `bound` (a launch's sizes): its dispatch bucket's, else the operation's.
std::shared_ptr<const SharedKernel> kernel_for(const Operation::State &s, const OpSpec &bound) {
  if (s.dispatch) {
    const GemmSpec &g = bound.gemm;
    if (const kernels_db::DispatchEntry *e =
            s.dispatch->find({g.m.value, g.n.value, g.k.value, g.batch.value}))
      return s.dispatch_kernels[size_t(e - s.dispatch->table().entries.data())];
  }
  return s.kernel.load();
}

// Runs `kernel` for the bound `spec` on its device, on `stream` (under the device's mutex);
// device failures and sizes the kernel cannot take become Error (`how_to_fix` for the latter).
void launch_on_device(const SharedKernel &kernel, const OpSpec &spec,
                      const engine::OperandPointers &ptrs, void *stream, const char *how_to_fix) {
  std::lock_guard lock(kernel.device->mutex);
  try {
    const StreamScope on_stream(*kernel.device->device, stream);
    engine::launch_kernel(*kernel.device->device, kernel.loaded, spec, ptrs);
  } catch (const device::DeviceError &e) {
    throw api::device_error(e, "launch");
  } catch (const std::invalid_argument &e) {
    throw Error(ErrorCode::invalid_argument, e.what(), "launch", how_to_fix);
  }
}

} // namespace

std::string Operation::config_for(const GemmArgs &sizes) const {
  if (state_->spec.kind != OpKind::gemm)
    return config(); // a convolution's one kernel serves every batch size
  const OpSpec bound = bind_launch_sizes(*state_, sizes);
  return codegen::to_string(kernel_for(*state_, bound)->kernel.config);
}

void Operation::launch_conv(const ConvArgs &args, void *stream) const {
  const State &s = *state_;
  if (s.spec.kind == OpKind::gemm)
    throw Error(ErrorCode::invalid_argument,
                "ConvArgs given to a gemm operation (" + s.spec_text + ")", "launch",
                "launch a gemm with GemmArgs");
  const codegen::ConvRoles roles = codegen::conv_roles(s.spec.conv.pass);
  auto ptr = [&](codegen::ConvTensor t) {
    return t == codegen::ConvTensor::x        ? args.x
           : t == codegen::ConvTensor::filter ? args.filter
                                              : args.y;
  };
  for (const auto &[name, p] : {std::pair{"x", args.x}, {"filter", args.filter}, {"y", args.y}})
    if (p == 0)
      throw Error(ErrorCode::invalid_argument, std::string("a null device pointer for ") + name,
                  "launch", "pass addresses from Runtime::allocate (or cuMemAlloc)");
  if (s.spec.epilogue.bias != BiasKind::none && args.bias == 0)
    throw Error(ErrorCode::invalid_argument, "the spec has a bias but ConvArgs::bias is 0",
                "launch", "pass the bias vector's device address");
  if (args.n < 0)
    throw Error(ErrorCode::invalid_argument,
                "ConvArgs::n = " + std::to_string(args.n) + " is negative", "launch",
                "pass the batch size, or 0 for the prepared spec's");
  const bool as_prepared = s.concrete && args.n == 0;
  OpSpec bound;
  if (!as_prepared) {
    if (args.n == 0)
      throw Error(ErrorCode::invalid_argument,
                  "n is symbolic in the prepared spec (" + s.spec_text + ")", "launch",
                  "pass ConvArgs::n (the batch size of this launch)");
    try {
      bound = bind_conv_batch(s.spec, args.n);
    } catch (const std::invalid_argument &e) {
      throw Error(ErrorCode::invalid_argument, e.what(), "launch",
                  "launch within the batch sizes the operation was prepared for");
    }
  }
  const OpSpec &spec = as_prepared ? s.spec : bound;
  std::shared_ptr<const SharedKernel> kernel = s.kernel.load();
  const engine::OperandPointers ptrs{ptr(roles.a), ptr(roles.b), ptr(roles.c), ptr(roles.c),
                                     args.bias};
  launch_on_device(*kernel, spec, ptrs, stream, "pass a batch size n that fits");
}

void Operation::launch(const GemmArgs &args, void *stream) const {
  const State &s = *state_;
  if (s.spec.kind != OpKind::gemm)
    throw Error(ErrorCode::invalid_argument,
                "GemmArgs given to a " + std::string(to_string(s.spec.kind)) + " operation (" +
                    s.spec_text + ")",
                "launch", "launch a convolution with ConvArgs");
  const bool needs_c = s.spec.epilogue.beta != 0;
  if (args.a == 0 || args.b == 0 || args.d == 0 || (needs_c && args.c == 0))
    throw Error(ErrorCode::invalid_argument,
                "a null device pointer for " + std::string(args.a == 0   ? "a"
                                                           : args.b == 0 ? "b"
                                                           : args.d == 0 ? "d"
                                                                         : "c (beta is not 0)"),
                "launch", "pass addresses from Runtime::allocate (or cuMemAlloc)");
  if (s.spec.epilogue.bias != BiasKind::none && args.bias == 0)
    throw Error(ErrorCode::invalid_argument, "the spec has a bias but GemmArgs::bias is 0",
                "launch", "pass the bias vector's device address");
  // A concrete spec launched as prepared was validated, and its kernel planned, at prepare():
  // nothing to bind or check again on this path.
  const bool as_prepared =
      s.concrete && args.m == 0 && args.n == 0 && args.k == 0 && args.batch == 0;
  std::shared_ptr<const SharedKernel> kernel = s.kernel.load();
  OpSpec bound;
  if (!as_prepared) {
    bound = bind_launch_sizes(s, args);
    kernel = kernel_for(s, bound);
    check_launch_alignment(bound, *kernel);
  }
  const OpSpec &spec = as_prepared ? s.spec : bound;
  const engine::OperandPointers ptrs{args.a, args.b, args.c == 0 ? args.d : args.c, args.d,
                                     args.bias};
  launch_on_device(*kernel, spec, ptrs, stream, "pass sizes the spec allows");
}

} // namespace tcjit
