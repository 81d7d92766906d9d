// tcjit::Operation (include/tcjit/tcjit.hpp) and the C launches: a prepared kernel launched on the
// runtime's device at the sizes given — bound and checked against the spec's rules and the
// kernel's alignment, its pointers checked (null, alignment against the kernel's vectors, a kernel
// for a lower alignment when they need one), the kernel of the sizes' dispatch bucket, the
// caller's stream (api/runtime_state.h). Errors in the words of the calling API.
#include "api/runtime_state.h"

#include "compiler/codegen/plan/conv_lowering.h"
#include "compiler/codegen/plan/kernel_plan.h"
#include "compiler/codegen/plan/tile_config.h"
#include "compiler/reference/bind_dims.h"
#include "compiler/spec/alignment.h"
#include "compiler/spec/printer.h"
#include "compiler/spec/shape.h"
#include "compiler/spec/validate.h"

#include <algorithm>
#include <chrono>
#include <future>
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
  return codegen::to_string(api::kernel_of(*state_)->kernel.config);
}
std::string Operation::kernel_id() const {
  return api::kernel_of(*state_)->identity;
}
bool Operation::ready() const {
  if (state_->kernel.load())
    return true;
  return state_->compiling.valid() &&
         state_->compiling.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

ResourceUsage Operation::resources() const {
  ResourceUsage r;
  const std::shared_ptr<const SharedKernel> kernel = api::kernel_of(*state_);
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
// bound, checked against the spec's rules: a size the spec fixes must be that size (or 0), a
// symbolic one must be given (> 0) and lie in its range. Throws Error in `words`.
OpSpec bind_launch_sizes(const Operation::State &s, const GemmArgs &args,
                         const api::LaunchVocabulary &words) {
  // The sizes of this launch: the spec's, or the arguments' where the spec leaves them symbolic
  // (or repeats them).
  const GemmSpec &g = s.spec.gemm;
  auto size_of = [&](const char *name, const Dim &dim, int64_t given) -> int64_t {
    const std::string arg = words.arg(name);
    if (given < 0)
      throw Error(ErrorCode::invalid_argument, arg + " = " + std::to_string(given) + " is negative",
                  words.where, "pass the size, or 0 for the prepared spec's");
    if (given == 0 && dim.is_fixed())
      return dim.value;
    if (given == 0)
      throw Error(ErrorCode::invalid_argument,
                  std::string(name) + " is symbolic in the prepared spec (" + s.spec_text + ")",
                  words.where, "pass " + arg + " (the size of this launch)");
    if (dim.is_fixed() && given != dim.value)
      throw Error(ErrorCode::invalid_argument,
                  arg + " = " + std::to_string(given) + ", but the operation was prepared for " +
                      name + "=" + std::to_string(dim.value) + " (" + s.spec_text + ")",
                  words.where,
                  "pass " + std::to_string(dim.value) + " or 0, or prepare the spec with " + name +
                      "=? (or a range) to launch other sizes");
    if (dim.kind == Dim::Kind::range && (given < dim.lo || given > dim.hi))
      throw Error(ErrorCode::invalid_argument,
                  arg + " = " + std::to_string(given) + " is outside the prepared range " + name +
                      "=" + std::to_string(dim.lo) + ".." + std::to_string(dim.hi) + " (" +
                      s.spec_text + ")",
                  words.where,
                  "pass a size in " + std::to_string(dim.lo) + ".." + std::to_string(dim.hi) +
                      ", or prepare an operation whose range holds it");
    return given;
  };
  OpSpec bound;
  try {
    bound =
        bind_gemm_sizes(s.spec, {size_of("m", g.m, args.m), size_of("n", g.n, args.n),
                                 size_of("k", g.k, args.k), size_of("batch", g.batch, args.batch)});
  } catch (const std::invalid_argument &e) {
    throw Error(ErrorCode::invalid_argument, e.what(), words.where,
                "launch within the sizes the operation was prepared for, or prepare another");
  }
  // The sizes given now obey the spec's rules too (leading dimensions, the kernel's 32-bit sizes,
  // operand sizes).
  if (const std::vector<SpecError> errors = validate_spec(bound); !errors.empty()) {
    std::string text;
    for (const SpecError &e : errors)
      text += "\n  " + (e.key.empty() ? std::string("operation") : e.key) + ": " + e.message;
    throw Error(ErrorCode::invalid_argument,
                "the sizes of this launch make " + print_spec(bound) + " invalid:" + text,
                words.where, "pass sizes the spec allows");
  }
  return bound;
}

// The kernel's vector widths need the alignment they were compiled for: the sizes bound now
// (leading dimensions, batch strides). Throws Error.
void check_launch_alignment(const OpSpec &bound, const SharedKernel &kernel,
                            const api::LaunchVocabulary &words) {
  const codegen::KernelPlan &plan = kernel.kernel.plan;
  for (const OperandAlignment &al : analyze_alignment(bound)) {
    const int needed = al.operand == "a"   ? codegen::vector_elements(plan, plan.a)
                       : al.operand == "b" ? codegen::vector_elements(plan, plan.b)
                       : al.operand == "c" ? plan.c_vec
                                           : 1;
    if (al.elements < needed)
      throw Error(
          ErrorCode::invalid_argument,
          "operand " + al.operand + " of " + print_spec(bound) + " is aligned to " +
              std::to_string(al.elements) + " elements, but the kernel (" +
              codegen::to_string(plan.config) + ") loads " + std::to_string(needed) + " at a time",
          words.where, "prepare the operation with sizes of that alignment (or with these)");
  }
}

// The alignment of a device address in bytes: its lowest set bit (an address 2 bytes off a
// 16-byte boundary is aligned to 2), at most 256.
int64_t address_alignment(DeviceAddress address) {
  const uint64_t low = address & (~address + 1);
  return low == 0 || low > 256 ? 256 : int64_t(low);
}

// One pointer a kernel reads or writes: the argument's name (in the API's words), its address,
// and the bytes the kernel moves at once through it.
struct PointerUse {
  std::string arg;
  DeviceAddress address = 0;
  DType dtype = DType::f16;
  int vector_elements = 1;
};

// Refuses a pointer less aligned than the kernel's vector loads and stores through it assume (on a
// GPU a misaligned-address fault that breaks the CUDA context). `alternative`: another fix for a
// pointer aligned to its elements but not to the vectors ("" when none). Throws Error in `words`.
void check_pointer_alignment(const std::vector<PointerUse> &uses, const SharedKernel &kernel,
                             const api::LaunchVocabulary &words, const std::string &alternative) {
  for (const PointerUse &use : uses) {
    // Bytes: packed sub-byte types (s4, u4, b1) hold several elements per byte.
    const int esize = std::max(1, dtype_bits(use.dtype) / 8);
    const int64_t needed =
        std::max<int64_t>(1, int64_t(dtype_bits(use.dtype)) * use.vector_elements / 8);
    const int64_t found = address_alignment(use.address);
    if (found >= needed)
      continue;
    const bool element_aligned = found >= esize;
    const std::string what =
        use.arg + " (" + std::string(to_string(use.dtype)) + ") is aligned to " +
        std::to_string(found) + (found == 1 ? " byte" : " bytes") + ", but " +
        (use.vector_elements > 1
             ? "the kernel (" + codegen::to_string(kernel.kernel.config) +
                   ") moves it in vectors of " + std::to_string(use.vector_elements) +
                   " elements, which need "
             : std::string("its elements need ")) +
        std::to_string(needed) + "-byte alignment";
    std::string fix = "pass an address aligned to " + std::to_string(needed) + " bytes (" +
                      words.allocate +
                      " returns 256-byte-aligned memory: offset into it by whole " +
                      (use.vector_elements > 1 ? std::to_string(use.vector_elements) + "-element "
                                                                                       "vectors)"
                                               : std::string("elements)"));
    if (element_aligned && !alternative.empty())
      fix += ", or " + alternative;
    throw Error(ErrorCode::invalid_argument, what, words.where, fix);
  }
}

// The GEMM spec with operand `operand`'s alignment lowered to `elements` (a power of two below
// what the spec allows): its leading dimension made an odd multiple of `elements`, at least the
// one it had. Leading dimensions are run-time arguments of a kernel, so the kernel of this spec
// differs from the spec's only in its vector widths.
void lower_alignment(OpSpec &spec, char operand, int64_t elements) {
  GemmSpec &g = spec.gemm;
  MatrixOperand &op = operand == 'a' ? g.a : operand == 'b' ? g.b : g.c;
  const Dim &rows = operand == 'b' ? g.k : g.m;
  const Dim &cols = operand == 'a' ? g.k : g.n;
  const Dim &inner = op.layout == MatrixLayout::row ? cols : rows;
  const int64_t at_least = op.ld ? *op.ld : inner.is_fixed() ? inner.value : elements;
  int64_t ld = (at_least + elements - 1) / elements * elements;
  if ((ld / elements) % 2 == 0)
    ld += elements;
  op.ld = ld;
}

// Refuses a null pointer for an operand the spec uses. Throws Error in `words`.
void check_not_null(const std::string &arg, DeviceAddress address, const std::string &why,
                    const api::LaunchVocabulary &words) {
  if (address != 0)
    return;
  throw Error(ErrorCode::invalid_argument, arg + " is 0 (a null device pointer)" + why, words.where,
              "pass the device address of its buffer (from " + words.allocate + " or cuMemAlloc)");
}

// Refuses a caller's workspace that is not usable by a launch whose kernel needs `needed` bytes:
// an address 0 with bytes, an address less aligned than the kernels' vectors, too few bytes.
// `conv`: the launch is a convolution's (the query to name). Throws Error in `words`.
void check_workspace(const Workspace &workspace, uint64_t needed, const SharedKernel &kernel,
                     bool conv, const api::LaunchVocabulary &words) {
  if (workspace.address == 0) {
    if (workspace.bytes != 0)
      throw Error(ErrorCode::invalid_argument,
                  words.workspace_arg(true) + " = " + std::to_string(workspace.bytes) + ", but " +
                      words.workspace_arg(false) + " is 0",
                  words.where,
                  "pass the workspace's device address, or 0 bytes to let the runtime's pool serve "
                  "the launch");
    return;
  }
  const int64_t found = address_alignment(workspace.address);
  if (uint64_t(found) < engine::kWorkspaceAlignment)
    throw Error(ErrorCode::invalid_argument,
                words.workspace_arg(false) + " is aligned to " + std::to_string(found) +
                    (found == 1 ? " byte" : " bytes") + ", but the kernels move it in vectors of " +
                    std::to_string(engine::kWorkspaceAlignment) + " bytes",
                words.where,
                "pass an address aligned to " + std::to_string(engine::kWorkspaceAlignment) +
                    " bytes (" + words.allocate + " returns 256-byte-aligned memory)");
  if (workspace.bytes < needed)
    throw Error(ErrorCode::invalid_argument,
                words.workspace_arg(true) + " = " + std::to_string(workspace.bytes) +
                    ", but this launch's kernel (" + codegen::to_string(kernel.kernel.config) +
                    ") needs " + std::to_string(needed) + " bytes of workspace",
                words.where,
                "pass a workspace of at least " + std::to_string(needed) + " bytes (" +
                    words.workspace_query(conv) +
                    " tells the bytes a launch needs), or none to let the runtime's pool serve "
                    "the launch");
}

// The device pool's workspace of `stream` (at least `needed` bytes), grown when smaller: a failed
// allocation becomes Error naming the other ways (a workspace of the caller's; an allocation
// during a CUDA graph capture fails).
device::DevicePtr pooled_workspace(api::DeviceContext &context, void *stream, uint64_t needed,
                                   bool conv, const api::LaunchVocabulary &words) {
  try {
    return context.workspaces.acquire(*context.device, stream, needed);
  } catch (const device::DeviceError &e) {
    const Error error = api::device_error(e, words.where);
    throw Error(error.code(),
                error.problem() + " (growing the runtime's workspace pool for this stream to " +
                    std::to_string(needed) + " bytes)",
                words.where,
                "pass a workspace of your own (" + words.workspace_query(conv) +
                    " tells its bytes), or launch once at these sizes on this stream before a "
                    "CUDA graph capture (a capture allows no allocation)");
  }
}

// Enqueues `kernel` for the bound `spec` on its device, on `stream` (under the device's mutex),
// with the caller's workspace or else the device's pool's for `stream`: no allocation once the
// pool is warm, no copy, memset or synchronize. Device failures and sizes the kernel cannot take
// become Error (`how_to_fix` for the latter).
void launch_on_device(const SharedKernel &kernel, const OpSpec &spec,
                      const engine::OperandPointers &ptrs, void *stream, const Workspace &workspace,
                      bool conv, const api::LaunchVocabulary &words, const char *how_to_fix) {
  api::DeviceContext &context = *kernel.device;
  try {
    const uint64_t needed = engine::kernel_workspace_bytes(kernel.loaded, spec);
    check_workspace(workspace, needed, kernel, conv, words);
    std::lock_guard lock(context.mutex);
    const StreamScope on_stream(*context.device, stream);
    const device::DevicePtr space = needed == 0 ? 0
                                    : workspace.address != 0
                                        ? workspace.address
                                        : pooled_workspace(context, stream, needed, conv, words);
    engine::enqueue_kernel(*context.device, kernel.loaded, spec, ptrs, space);
  } catch (const device::DeviceError &e) {
    throw api::device_error(e, words.where);
  } catch (const std::invalid_argument &e) {
    throw Error(ErrorCode::invalid_argument, e.what(), words.where, how_to_fix);
  }
}

// The concrete spec of a launch: the prepared one (a concrete spec launched as prepared: validated
// at prepare(), nothing to bind or check again), or the prepared one with the launch's sizes bound.
struct LaunchSpec {
  bool as_prepared = false;
  OpSpec bound;
  const OpSpec &of(const Operation::State &s) const { return as_prepared ? s.spec : bound; }
};

// The kernel and the concrete spec of a GEMM launch with `args`: its sizes bound and checked, the
// kernel of their dispatch bucket, for its pointers' alignment (0 pointers count as aligned).
struct GemmLaunch {
  LaunchSpec spec;
  std::shared_ptr<const SharedKernel> kernel;
};
GemmLaunch plan_gemm_launch(const Operation::State &s, const GemmArgs &args,
                            const api::LaunchVocabulary &words);

// The spec of a convolution launched with batch size `n` (0: the prepared spec's). Throws Error.
LaunchSpec bind_conv_launch(const Operation::State &s, int64_t n,
                            const api::LaunchVocabulary &words) {
  if (n < 0)
    throw Error(ErrorCode::invalid_argument,
                words.arg("n") + " = " + std::to_string(n) + " is negative", words.where,
                "pass the batch size, or 0 for the prepared spec's");
  LaunchSpec spec;
  spec.as_prepared = s.concrete && n == 0;
  if (spec.as_prepared)
    return spec;
  if (n == 0)
    throw Error(ErrorCode::invalid_argument,
                "n is symbolic in the prepared spec (" + s.spec_text + ")", words.where,
                "pass " + words.arg("n") + " (the batch size of this launch)");
  // The batch size is a launch argument of every convolution kernel (not part of its identity):
  // any n >= 1 launches, whatever n (fixed, ? or a range) the spec was prepared with.
  OpSpec any_batch = s.spec;
  any_batch.conv.n = Dim::any_size();
  try {
    spec.bound = bind_conv_batch(any_batch, n);
  } catch (const std::invalid_argument &e) {
    throw Error(ErrorCode::invalid_argument, words.arg("n") + ": " + e.what(), words.where,
                "pass a positive batch size");
  }
  return spec;
}

// Refuses GemmArgs for a convolution and ConvArgs for a GEMM. Throws Error in `words`.
void check_args_kind(const Operation::State &s, bool conv_args,
                     const api::LaunchVocabulary &words) {
  if ((s.spec.kind == OpKind::gemm) != conv_args)
    return;
  const std::string given = conv_args ? "ConvArgs" : "GemmArgs";
  throw Error(ErrorCode::invalid_argument,
              (words.args.empty() ? words.where : given) + " given to a " +
                  std::string(to_string(s.spec.kind)) + " operation (" + s.spec_text + ")",
              words.where,
              words.args.empty()
                  ? (conv_args ? "call tcjit_launch_gemm_sized (tcjit_operation_workspace_bytes) "
                                 "for a gemm"
                               : "call tcjit_launch_conv (tcjit_operation_workspace_bytes_conv) "
                                 "for a convolution")
                  : (conv_args ? "launch a gemm with GemmArgs (launch, workspace_bytes)"
                               : "launch a convolution with ConvArgs (launch_conv, "
                                 "workspace_bytes_conv)"));
}

} // namespace

std::shared_ptr<const SharedKernel> api::kernel_for_sizes(const Operation::State &s,
                                                          const OpSpec &bound) {
  if (s.dispatch) {
    const GemmSpec &g = bound.gemm;
    if (const kernels_db::DispatchEntry *e =
            s.dispatch->find({g.m.value, g.n.value, g.k.value, g.batch.value}))
      return s.dispatch_kernels[size_t(e - s.dispatch->table().entries.data())];
  }
  return api::kernel_of(s);
}

OpSpec api::bind_gemm_launch(const Operation::State &s, const GemmArgs &sizes,
                             const LaunchVocabulary &words) {
  return bind_launch_sizes(s, sizes, words);
}

std::string api::config_for(const Operation::State &s, const GemmArgs &sizes,
                            const LaunchVocabulary &words) {
  if (s.spec.kind != OpKind::gemm) // a convolution's one kernel serves every batch size
    return codegen::to_string(kernel_of(s)->kernel.config);
  const OpSpec bound = bind_launch_sizes(s, sizes, words);
  return codegen::to_string(kernel_for_sizes(s, bound)->kernel.config);
}

std::string Operation::config_for(const GemmArgs &sizes) const {
  return api::config_for(*state_, sizes, api::LaunchVocabulary{"config_for"});
}

// The kernel for a GEMM launch's pointers: `kernel`, or — when a pointer is aligned to its
// elements but less than `kernel`'s vectors through it and the runtime serves such launches — the
// runtime's kernel for the pointers' alignment (api::AlignedKernels).
std::shared_ptr<const SharedKernel> kernel_for_pointers(const Operation::State &s,
                                                        std::shared_ptr<const SharedKernel> kernel,
                                                        const GemmArgs &args,
                                                        const api::LaunchVocabulary &words) {
  if (!s.aligned || !s.aligned->serve)
    return kernel;
  const GemmSpec &g = s.spec.gemm;
  const codegen::KernelPlan &plan = kernel->kernel.plan;
  // The widest vector, in elements, each operand's pointers allow (0: not aligned to an element).
  auto elements = [](DeviceAddress p, DType t) { return address_alignment(p) * 8 / dtype_bits(t); };
  int64_t c_elements = elements(args.d, g.c.dtype);
  if (s.spec.epilogue.beta != 0 && args.c != 0)
    c_elements = std::min(c_elements, elements(args.c, g.c.dtype));
  const int64_t found[3] = {elements(args.a, g.a.dtype), elements(args.b, g.b.dtype), c_elements};
  const int64_t vec[3] = {codegen::vector_elements(plan, plan.a),
                          codegen::vector_elements(plan, plan.b), plan.c_vec};
  OpSpec lowered = s.spec;
  bool lower = false;
  for (int i = 0; i < 3; ++i) {
    if (found[i] < 1)
      return kernel; // not even aligned to its elements: refused by the caller
    if (found[i] < vec[i]) {
      lower_alignment(lowered, "abc"[i], found[i]);
      lower = true;
    }
  }
  return lower ? s.aligned->kernel_for(lowered, words.where) : kernel;
}

void api::launch_conv(const Operation::State &s, const ConvArgs &args, void *stream,
                      const LaunchVocabulary &words, const Workspace &workspace) {
  check_args_kind(s, true, words);
  const codegen::ConvRoles roles = codegen::conv_roles(s.spec.conv.pass);
  const ConvSpec &conv = s.spec.conv;
  auto ptr = [&](codegen::ConvTensor t) {
    return t == codegen::ConvTensor::x        ? args.x
           : t == codegen::ConvTensor::filter ? args.filter
                                              : args.y;
  };
  auto name = [](codegen::ConvTensor t) {
    return t == codegen::ConvTensor::x ? "x" : t == codegen::ConvTensor::filter ? "filter" : "y";
  };
  auto dtype = [&](codegen::ConvTensor t) {
    return t == codegen::ConvTensor::x        ? conv.x.dtype
           : t == codegen::ConvTensor::filter ? conv.filter.dtype
                                              : conv.y.dtype;
  };
  for (const codegen::ConvTensor t : {roles.a, roles.b, roles.c})
    check_not_null(words.arg(name(t)), ptr(t), "", words);
  if (s.spec.epilogue.bias != BiasKind::none)
    check_not_null(words.arg("bias"), args.bias, ", but the spec has a bias", words);
  const LaunchSpec spec = bind_conv_launch(s, args.n, words);
  std::shared_ptr<const SharedKernel> kernel = api::kernel_of(s);
  const codegen::KernelPlan &plan = kernel->kernel.plan;
  // Channel padding reads x and the filter element by element (into aligned copies).
  const bool padded = plan.pad_from != 0;
  std::vector<PointerUse> uses{
      {words.arg(name(roles.a)), ptr(roles.a), dtype(roles.a), padded ? 1 : plan.a.vec},
      {words.arg(name(roles.b)), ptr(roles.b), dtype(roles.b), padded ? 1 : plan.b.vec},
      {words.arg(name(roles.c)), ptr(roles.c), dtype(roles.c), plan.c_vec}};
  if (s.spec.epilogue.bias != BiasKind::none)
    uses.push_back({words.arg("bias"), args.bias, dtype(roles.c), 1});
  check_pointer_alignment(uses, *kernel, words, "");
  const engine::OperandPointers ptrs{ptr(roles.a), ptr(roles.b), ptr(roles.c), ptr(roles.c),
                                     args.bias};
  launch_on_device(*kernel, spec.of(s), ptrs, stream, workspace, true, words,
                   "pass a batch size n that fits");
}

namespace {

GemmLaunch plan_gemm_launch(const Operation::State &s, const GemmArgs &args,
                            const api::LaunchVocabulary &words) {
  GemmLaunch launch;
  launch.spec.as_prepared =
      s.concrete && args.m == 0 && args.n == 0 && args.k == 0 && args.batch == 0;
  launch.kernel = api::kernel_of(s);
  if (!launch.spec.as_prepared) {
    launch.spec.bound = bind_launch_sizes(s, args, words);
    launch.kernel = api::kernel_for_sizes(s, launch.spec.bound);
    check_launch_alignment(launch.spec.bound, *launch.kernel, words);
  }
  launch.kernel = kernel_for_pointers(s, std::move(launch.kernel), args, words);
  return launch;
}

} // namespace

void api::launch_gemm(const Operation::State &s, const GemmArgs &args, void *stream,
                      const LaunchVocabulary &words, const Workspace &workspace) {
  check_args_kind(s, false, words);
  const Epilogue &epi = s.spec.epilogue;
  check_not_null(words.arg("a"), args.a, "", words);
  check_not_null(words.arg("b"), args.b, "", words);
  check_not_null(words.arg("d"), args.d, "", words);
  if (epi.beta != 0)
    check_not_null(words.arg("c"), args.c, ", but beta is not 0 (C is read)", words);
  if (epi.bias != BiasKind::none)
    check_not_null(words.arg("bias"), args.bias, ", but the spec has a bias", words);
  const GemmLaunch launch = plan_gemm_launch(s, args, words);
  const SharedKernel &kernel = *launch.kernel;
  const DeviceAddress c = args.c == 0 ? args.d : args.c;
  const GemmSpec &g = s.spec.gemm;
  const codegen::KernelPlan &plan = kernel.kernel.plan;
  std::vector<PointerUse> uses{
      {words.arg("a"), args.a, g.a.dtype, codegen::vector_elements(plan, plan.a)},
      {words.arg("b"), args.b, g.b.dtype, codegen::vector_elements(plan, plan.b)},
      {words.arg("d"), args.d, g.c.dtype, plan.c_vec}};
  if (epi.beta != 0)
    uses.push_back({words.arg(args.c == 0 ? "d" : "c"), c, g.c.dtype, plan.c_vec});
  if (epi.bias != BiasKind::none)
    uses.push_back({words.arg("bias"), args.bias, g.c.dtype, 1});
  check_pointer_alignment(uses, kernel, words,
                          "open the runtime with " +
                              std::string(words.args.empty() ? "an on_miss other than "
                                                               "TCJIT_MISS_FAIL"
                                                             : "a MissPolicy other than fail") +
                              " (a launch with less-aligned pointers then gets a kernel for their "
                              "alignment, compiled once)");
  const engine::OperandPointers ptrs{args.a, args.b, c, args.d, args.bias};
  launch_on_device(kernel, launch.spec.of(s), ptrs, stream, workspace, false, words,
                   "pass sizes the spec allows");
}

size_t api::gemm_workspace_bytes(const Operation::State &s, const GemmArgs &sizes,
                                 const LaunchVocabulary &words) {
  check_args_kind(s, false, words);
  const GemmLaunch launch = plan_gemm_launch(s, sizes, words);
  return engine::kernel_workspace_bytes(launch.kernel->loaded, launch.spec.of(s));
}

size_t api::conv_workspace_bytes(const Operation::State &s, int64_t n,
                                 const LaunchVocabulary &words) {
  check_args_kind(s, true, words);
  const LaunchSpec spec = bind_conv_launch(s, n, words);
  return engine::kernel_workspace_bytes(api::kernel_of(s)->loaded, spec.of(s));
}

void Operation::launch_conv(const ConvArgs &args, void *stream) const {
  api::launch_conv(*state_, args, stream, api::LaunchVocabulary{"launch", "ConvArgs"});
}

void Operation::launch(const GemmArgs &args, void *stream) const {
  api::launch_gemm(*state_, args, stream, api::LaunchVocabulary{});
}

void Operation::launch_conv(const ConvArgs &args, void *stream, const Workspace &workspace) const {
  api::launch_conv(*state_, args, stream, api::LaunchVocabulary{"launch", "ConvArgs"}, workspace);
}

void Operation::launch(const GemmArgs &args, void *stream, const Workspace &workspace) const {
  api::launch_gemm(*state_, args, stream, api::LaunchVocabulary{}, workspace);
}

size_t Operation::workspace_bytes(const GemmArgs &args) const {
  return api::gemm_workspace_bytes(*state_, args, api::LaunchVocabulary{"workspace_bytes"});
}

size_t Operation::workspace_bytes_conv(const ConvArgs &args) const {
  return api::conv_workspace_bytes(*state_, args.n,
                                   api::LaunchVocabulary{"workspace_bytes_conv", "ConvArgs"});
}

} // namespace tcjit
