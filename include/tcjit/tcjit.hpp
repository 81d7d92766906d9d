// The embedding API of tcjit (C++): open a Runtime, prepare an Operation from DSL text or an
// OpSpec, launch it on device pointers. The C API (tcjit.h) offers the same essentials.
//
//   tcjit::RuntimeOptions options;
//   options.device = "emu";
//   tcjit::Runtime rt(options);
//   tcjit::Operation op = rt.prepare("gemm m=64 n=64 k=64 a=f16 b=f16:col");
//   op.launch({a, b, c, d, /*bias=*/0});
//
// Preparing looks the kernel up in memory (Origin::memory: this problem, or another whose kernel
// is the same, as for another batch size), then in the kernel database (Origin::database), then —
// with MissPolicy::heuristic — compiles the default chooser's config now (Origin::compiled_now)
// and stores it; the database's tuned config (`tcjit tune`) comes first when there is one. A spec
// may leave sizes symbolic (`m=?`, `m=1..8192`): the launch gives them (GemmArgs); such a spec's
// kernel, when it must be compiled, is compiled on a background thread (Operation::ready). Runtime
// and Operation are thread-safe: maps are guarded by a mutex and launches on one device are
// serialized (the emulator is not thread-safe). Every failure throws tcjit::Error, which says what
// went wrong, where and how to fix it.
#pragma once

#include "tcjit/op_spec.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace tcjit {

// A device address on the runtime's device (CUDA or the emulator).
using DeviceAddress = uint64_t;

// What prepare() does when neither memory nor the database has a kernel for the problem:
//   heuristic   compile the default chooser's config now (the cost model's best legal config)
//   fail        throw Error(not_found)
//   tune        tune now, blocking (tune_budget candidates; on a GPU measured, on the emulator
//               predicted by the cost model with each candidate verified), store and use the
//               winner (Origin::tuned_now)
//   background  compile the heuristic's config now; tune on a background thread, store the
//               winner and switch the operation to it when it is ready (wait_for_tuning())
// A problem is "tuned" when a tune decided for it or for its kernel family: the same spec but for
// its sizes (docs/tuner.md, "Which decision serves a spec"): a concrete size inside a tuned range
// takes that range's bucket, `m=?` and sub-ranges any tuned dispatch table of the family.
// background applies to concrete problems not tuned yet. tune on a symbolic spec that nothing
// tuned serves tunes representative sizes first, as `tcjit tune` of a range does (a GEMM's `?`
// taken as 1..4096, batch 1..64; a convolution at one batch size: its range's upper end, or 32),
// and stores their dispatch table (with a writable database; else the heuristic's config).
enum class MissPolicy { heuristic, fail, tune, background };

// Where an Operation's kernel came from.
enum class Origin { memory, database, compiled_now, tuned_now };
const char *to_string(Origin origin);

struct RuntimeOptions {
  std::string db_path;         // "" = $TCJIT_DB, else ~/.cache/tcjit/kernels.db
  bool use_database = true;    // false: neither read nor write a database
  std::string device = "auto"; // "auto" (cuda if present, else emu), "emu", "cuda"
  MissPolicy on_miss = MissPolicy::heuristic;
  std::string arch;     // "" = the device's own (the emulator is sm_80)
  int tune_budget = 24; // candidates one tune measures (MissPolicy::tune, ::background), 1..100000
  // Which backend writes kernels compiled now: "llvm" (LLVM's NVPTX backend) or "nvrtc" (CUDA C++
  // source compiled by NVRTC; the one that compiles act=custom:FILE). Part of a stored binary's
  // key: kernels of one backend are never served for the other.
  std::string backend = "llvm";
  // Wall-clock seconds one launch on the emulator may run before it fails (a kernel or an
  // act=custom function that never ends); 0: no limit. A GPU kernel is not interrupted.
  double emulator_timeout_seconds = 0;
};

// What kind of failure an Error is (the C API maps it to tcjit_status).
enum class ErrorCode {
  invalid_argument, // a bad option or argument
  bad_spec,         // DSL text that does not parse, or a spec that is not valid
  not_found,        // a cache miss under MissPolicy::fail
  unsupported,      // e.g. no CUDA driver, an op the code generator lacks
  device,           // the device failed
  database,         // the kernel database failed
  internal,
};

// Thrown by every call of this API. what() is "tcjit: WHERE: WHAT" plus a line
// "how to fix: ..." when there is a fix to suggest.
class Error : public std::runtime_error {
public:
  Error(ErrorCode code, std::string what, std::string where, std::string how_to_fix);
  ErrorCode code() const { return code_; }
  const std::string &problem() const { return problem_; } // what went wrong
  const std::string &where() const { return where_; }     // e.g. "prepare", "launch"
  const std::string &how_to_fix() const { return how_to_fix_; }

private:
  ErrorCode code_;
  std::string problem_, where_, how_to_fix_;
};

// Device pointers of a GEMM's operands: D = act(alpha*A*B + beta*C + bias). bias may be 0 when the
// spec has none; c may be 0 when beta=0; d may equal c. The sizes of this launch: 0 takes the
// prepared spec's; a size the spec leaves symbolic (m=?) or gives as a range (m=1..8192) must be
// given, within the range. One prepared operation thus serves every size: the kernel takes the
// sizes at run time, and needs only the alignment it was compiled for (a launch whose leading
// dimensions are less aligned is refused with Error). Before a launch: a size must equal the
// spec's fixed one or lie in its range; a, b, d (c when beta != 0, bias when the spec has one)
// must not be 0; and each pointer must be aligned to the bytes the kernel's vector loads and
// stores take at once (16 for an f16 operand read 8 elements at a time). A less-aligned pointer
// (still aligned to its elements) gets a kernel for its alignment, compiled on the first such
// launch and kept by the runtime; under MissPolicy::fail it is refused with Error naming the
// operand, the alignment needed and the alignment found.
struct GemmArgs {
  DeviceAddress a = 0, b = 0, c = 0, d = 0, bias = 0;
  int64_t m = 0, n = 0, k = 0, batch = 0;
};

// Device pointers of a convolution's tensors (NHWC/NDHWC activations, KRSC/KTRSC filter), named
// as in cuDNN whatever the pass: fprop reads x and filter and writes y; dgrad reads y (dy) and
// filter and writes x (dx); wgrad reads x and y (dy) and writes filter (dw). The written tensor is
// also C, read first when beta != 0. bias (one value per output channel: k for fprop, c for
// dgrad) may be 0 when the spec has none. n: the batch size of this launch; 0 takes the prepared
// spec's. The kernel takes n at run time, so any operation (prepared with a fixed n, `n=?` or a
// range) launches at any n >= 1.
struct ConvArgs {
  DeviceAddress x = 0, filter = 0, y = 0, bias = 0;
  int64_t n = 0;
};

// Device memory a launch may use as its workspace (split-K's partial sums, channel padding's
// copies of x and the filter): `bytes` at `address`, which is aligned to 16 bytes (allocate()
// returns 256-byte-aligned memory). Address 0: no workspace given — the runtime's pool serves the
// launch (see Operation::launch). The launch's kernels use it until they have finished on the
// stream: do not reuse it for anything else, nor for launches on another stream, before then.
struct Workspace {
  DeviceAddress address = 0;
  size_t bytes = 0;
};

// What the kernel uses, from ptxas (now, or recorded in the database); nullopt when unknown.
struct ResourceUsage {
  std::optional<int> registers; // per thread
  int shared_bytes = 0;         // per CTA, dynamic + static
  std::optional<int> spill_bytes;
};

// The time a launch is expected to take (Operation::predicted_time).
struct TimeEstimate {
  double time_us = 0;
  // true: measured — the kernel database's measured time of this problem's decision (its config is
  // the kernel's), for a concrete spec launched at its own sizes. false: predicted — the cost
  // model's time (docs/perf_model.md) for the kernel's config and resources at these sizes on the
  // model of the runtime's arch (an emulator's sm_80: an A100).
  bool measured = false;
};

class Runtime;
struct OperationAccess; // api/runtime_state.h: the C API's way to an Operation's state
struct VerifyRequest;   // tools.hpp
struct VerifyReport;

// A prepared operation: a cheap, shared, immutable handle (copies share the kernel).
class Operation {
public:
  struct State;

  const std::string &spec_text() const; // canonical DSL text
  const OpSpec &spec() const;
  const std::string &key_text() const;
  uint64_t key_hash() const;
  std::string key_hash_hex() const;
  std::string config() const; // "128x128x32 w64x64 s3 k1 g1 va8 vb8"
  // The config of the kernel a launch with these sizes runs: config(), unless the spec has size
  // ranges tuned by `tcjit tune` (a dispatch table): then the config of the sizes' bucket.
  // Throws Error for sizes the operation does not accept.
  std::string config_for(const GemmArgs &sizes) const;
  // The compiled kernel's identity: operations that share one kernel (the same plan for other
  // sizes: it is compiled and loaded once per runtime) return the same text.
  std::string kernel_id() const;
  Origin origin() const { return origin_; }
  ResourceUsage resources() const;

  // The time a launch with these sizes (as launch() takes them: 0 for the prepared spec's) is
  // expected to take on the kernel it would run (config_for's): measured when the database has it,
  // else predicted (TimeEstimate) by the cost model with the database's calibration for the
  // runtime's GPU (`tcjit calibrate`; the emulator: the arch's newest). nullopt when the cost model
  // has no estimate (a config its GPU model cannot launch). Throws Error for sizes the operation
  // does not accept.
  std::optional<TimeEstimate> predicted_time(const GemmArgs &sizes) const;
  // The same for a convolution launched with batch size sizes.n.
  std::optional<TimeEstimate> predicted_time_conv(const ConvArgs &sizes) const;

  // Whether the kernel is compiled. Preparing a spec with symbolic sizes (m=?, m=1..8192) whose
  // kernel is neither in memory nor in the database does not compile it: prepare() returns at
  // once and the kernel is compiled on a background thread; the first call that needs it
  // (launch, config, config_for, kernel_id, resources, predicted_time) waits for it, and throws
  // the compile's Error when it failed. Every other operation is ready when prepare() returns.
  bool ready() const;

  // Runs the GEMM on the runtime's device. On the CUDA device the launch is asynchronous: the
  // kernels (split-K's reduction and channel padding's copies too) are enqueued on `stream` (an
  // opaque CUstream of the device's context; nullptr: the device's own stream) and the call
  // returns without waiting; the results are there once the stream has run them (synchronize
  // it, or order later work after it). The launch path allocates, copies, sets and synchronizes
  // nothing, so a launch can be captured in a CUDA graph (with a caller's workspace, or a pool
  // grown before the capture: see below). The emulator runs each launch before returning (a
  // launch has finished when it returns) and ignores `stream`. Throws Error when the checks
  // (GemmArgs) refuse the launch or the device fails; a kernel's fault on a GPU is reported by a
  // later call that waits for the stream.
  //
  // Without a workspace (or with Workspace::address 0), a launch that needs one
  // (workspace_bytes() > 0) takes the runtime's pool: one buffer per stream (launches on one
  // stream run in order and share it; two streams never share one), grown — allocated — when a
  // launch needs more than it holds, and reused by every later launch on that stream. A replaced
  // buffer may still be in use, so every buffer of the pool is freed only when the runtime's
  // device closes (the runtime and the last operation it prepared are gone). To capture launches
  // in a CUDA graph, give them a workspace of their own, or launch once at the largest sizes on
  // the capture stream first (the capture then allocates nothing) and replay the graph on that
  // stream. docs/runtime.md, "Workspaces".
  void launch(const GemmArgs &args, void *stream = nullptr) const;
  // Runs the convolution (an operation prepared from a conv2d/conv3d spec) likewise. (Named apart
  // from launch() so that brace-initialised GemmArgs stay unambiguous.)
  void launch_conv(const ConvArgs &args, void *stream = nullptr) const;

  // The bytes of workspace a launch with these arguments needs (0: none): of the kernel that
  // launch runs (its sizes' dispatch bucket; the kernel for its pointers' alignment, when args
  // holds pointers less aligned than the operation's kernel reads — 0 pointers count as aligned,
  // as allocate() returns them). Sizes as for launch(). Throws Error for sizes the operation
  // does not accept, or a convolution (workspace_bytes_conv).
  size_t workspace_bytes(const GemmArgs &args) const;
  // The same for a convolution launched with batch size args.n (0: the prepared spec's); its
  // pointers do not matter.
  size_t workspace_bytes_conv(const ConvArgs &args) const;
  // launch() and launch_conv() with the caller's workspace: `workspace.bytes` at least what
  // workspace_bytes() / workspace_bytes_conv() says for these arguments, else Error
  // (invalid_argument) naming the bytes needed. The kernels use it instead of the pool's.
  void launch(const GemmArgs &args, void *stream, const Workspace &workspace) const;
  void launch_conv(const ConvArgs &args, void *stream, const Workspace &workspace) const;

private:
  friend class Runtime;
  friend struct OperationAccess;
  Operation(std::shared_ptr<const State> state, Origin origin);
  std::shared_ptr<const State> state_;
  Origin origin_;
};

class Runtime {
public:
  // Opens the device and the database. Throws Error (no CUDA driver, unknown arch, a database
  // that cannot be opened, a tune_budget out of range).
  explicit Runtime(const RuntimeOptions &options = {});
  // Stops background tunes (after the candidate each is measuring; what they stored is kept).
  ~Runtime();
  Runtime(Runtime &&) noexcept;
  Runtime &operator=(Runtime &&) noexcept;
  Runtime(const Runtime &) = delete;
  Runtime &operator=(const Runtime &) = delete;

  // One GEMM or convolution in the DSL (docs/dsl.md); sizes may be symbolic (given at launch).
  // Throws Error with the rendered diagnostics for bad text, and when the kernel cannot be found or
  // compiled.
  Operation prepare(std::string_view dsl_text);
  Operation prepare(const OpSpec &spec);

  // Blocks until every background tune (MissPolicy::background) has finished and its winner is
  // in use by its operation. Throws Error when one failed (its operation kept its kernel).
  void wait_for_tuning();

  // Runs the kernel this runtime would use for a concrete spec (memory, the database or the code
  // generator; VerifyRequest::config overrides the choice) on random inputs, checks every output
  // element against the CPU reference under the tolerance model (docs/numerics.md), and records
  // the verified result in the database: what `tcjit run` does (include/tcjit/tools.hpp). A result
  // outside the tolerance is reported (VerifyReport::ok), not thrown. Throws Error for a symbolic
  // spec, a run too large for this machine, a kernel that cannot be built, a device failure.
  VerifyReport verify(const OpSpec &spec, const VerifyRequest &request);

  std::string device_name() const;
  bool device_is_emulator() const;
  const std::string &arch() const;   // the arch kernels are compiled for
  std::string database_path() const; // "" without a database

  // Device memory on the runtime's device (so an application on the emulator can run at all).
  DeviceAddress allocate(size_t bytes);
  void free(DeviceAddress address);
  void copy_to_device(DeviceAddress dst, const void *src, size_t bytes);
  void copy_to_host(void *dst, DeviceAddress src, size_t bytes);

  struct Impl;

private:
  std::unique_ptr<Impl> impl_;
};

} // namespace tcjit
