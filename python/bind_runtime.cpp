// tcjit::Runtime and tcjit::Operation for the package: device addresses and host buffers as
// integers (the package's Python code takes them from the arrays it was given and checks them
// first), sizes as integers (0: the prepared spec's). Every call that compiles, tunes, copies or
// runs releases the GIL, so other Python threads go on meanwhile.
#include "python/bindings.h"

#include "tcjit/tcjit.hpp"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

namespace nb = nanobind;
using namespace nb::literals;

namespace tcjit::python {
namespace {

using Release = nb::call_guard<nb::gil_scoped_release>;

MissPolicy miss_policy(const std::string &name) {
  if (name == "heuristic")
    return MissPolicy::heuristic;
  if (name == "fail")
    return MissPolicy::fail;
  if (name == "tune")
    return MissPolicy::tune;
  if (name == "background")
    return MissPolicy::background;
  throw Error(ErrorCode::invalid_argument, "unknown on_miss '" + name + "'", "Runtime",
              "write on_miss=\"heuristic\", \"fail\", \"tune\" or \"background\"");
}

Runtime *open_runtime(const std::string &device, const std::string &db_path, bool use_database,
                      const std::string &on_miss, const std::string &backend,
                      const std::string &arch, int tune_budget, double emulator_timeout) {
  RuntimeOptions options;
  options.device = device;
  options.db_path = db_path;
  options.use_database = use_database;
  options.on_miss = miss_policy(on_miss);
  options.backend = backend;
  options.arch = arch;
  options.tune_budget = tune_budget;
  options.emulator_timeout_seconds = emulator_timeout;
  nb::gil_scoped_release release;
  return new Runtime(options);
}

GemmArgs gemm_args(int64_t m, int64_t n, int64_t k, int64_t batch) {
  GemmArgs args;
  args.m = m;
  args.n = n;
  args.k = k;
  args.batch = batch;
  return args;
}

std::optional<std::pair<double, bool>> as_pair(const std::optional<TimeEstimate> &estimate) {
  if (!estimate)
    return std::nullopt;
  return std::make_pair(estimate->time_us, estimate->measured);
}

void bind_operation(nb::module_ &m) {
  nb::class_<Operation>(m, "Operation", "A prepared GEMM or convolution (Runtime.prepare).")
      .def_prop_ro("spec_text", &Operation::spec_text, "The canonical DSL text.")
      .def_prop_ro("key_text", &Operation::key_text, "The canonical problem key.")
      .def_prop_ro("key", &Operation::key_hash_hex, "The problem key's hash (16 hex digits).")
      .def_prop_ro(
          "origin", [](const Operation &op) { return std::string(to_string(op.origin())); },
          "Where the kernel came from: memory, database, compiled_now or tuned_now.")
      .def("ready", &Operation::ready, "Whether the kernel is compiled.")
      .def("config", &Operation::config, Release(), "The tile config of the kernel.")
      .def("kernel_id", &Operation::kernel_id, Release(), "The compiled kernel's identity.")
      .def(
          "config_for",
          [](const Operation &op, int64_t m, int64_t n, int64_t k, int64_t batch) {
            return op.config_for(gemm_args(m, n, k, batch));
          },
          "m"_a = 0, "n"_a = 0, "k"_a = 0, "batch"_a = 0, Release(),
          "The config of the kernel a launch with these sizes runs.")
      .def(
          "predicted_time",
          [](const Operation &op, int64_t m, int64_t n, int64_t k, int64_t batch) {
            return as_pair(op.predicted_time(gemm_args(m, n, k, batch)));
          },
          "m"_a = 0, "n"_a = 0, "k"_a = 0, "batch"_a = 0, Release(),
          "(microseconds, measured) of a GEMM launch with these sizes, or None.")
      .def(
          "predicted_time_conv",
          [](const Operation &op, int64_t n) {
            ConvArgs args;
            args.n = n;
            return as_pair(op.predicted_time_conv(args));
          },
          "n"_a = 0, Release(), "(microseconds, measured) of a convolution launch, or None.")
      .def(
          "workspace_bytes",
          [](const Operation &op, int64_t m, int64_t n, int64_t k, int64_t batch, uint64_t a,
             uint64_t b, uint64_t c, uint64_t d, uint64_t bias) {
            GemmArgs args = gemm_args(m, n, k, batch);
            args.a = a, args.b = b, args.c = c, args.d = d, args.bias = bias;
            return op.workspace_bytes(args);
          },
          "m"_a = 0, "n"_a = 0, "k"_a = 0, "batch"_a = 0, "a"_a = 0, "b"_a = 0, "c"_a = 0,
          "d"_a = 0, "bias"_a = 0, Release(), "Workspace bytes a GEMM launch needs.")
      .def(
          "workspace_bytes_conv",
          [](const Operation &op, int64_t n) {
            ConvArgs args;
            args.n = n;
            return op.workspace_bytes_conv(args);
          },
          "n"_a = 0, Release(), "Workspace bytes a convolution launch needs.")
      .def(
          "launch",
          [](const Operation &op, uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t bias,
             int64_t m, int64_t n, int64_t k, int64_t batch, uintptr_t stream, uint64_t workspace,
             uint64_t workspace_bytes) {
            GemmArgs args = gemm_args(m, n, k, batch);
            args.a = a, args.b = b, args.c = c, args.d = d, args.bias = bias;
            op.launch(args, reinterpret_cast<void *>(stream),
                      Workspace{workspace, workspace_bytes});
          },
          "a"_a, "b"_a, "c"_a, "d"_a, "bias"_a, "m"_a, "n"_a, "k"_a, "batch"_a, "stream"_a,
          "workspace"_a, "workspace_bytes"_a, Release(),
          "Runs the GEMM on device addresses (the emulator: before it returns).")
      .def(
          "launch_conv",
          [](const Operation &op, uint64_t x, uint64_t filter, uint64_t y, uint64_t bias, int64_t n,
             uintptr_t stream, uint64_t workspace, uint64_t workspace_bytes) {
            ConvArgs args;
            args.x = x, args.filter = filter, args.y = y, args.bias = bias, args.n = n;
            op.launch_conv(args, reinterpret_cast<void *>(stream),
                           Workspace{workspace, workspace_bytes});
          },
          "x"_a, "filter"_a, "y"_a, "bias"_a, "n"_a, "stream"_a, "workspace"_a, "workspace_bytes"_a,
          Release(), "Runs the convolution on device addresses.");
}

} // namespace

void bind_runtime(nb::module_ &m) {
  bind_operation(m);
  nb::class_<Runtime>(m, "Runtime", "A device (CUDA or the emulator) and the kernel cache.")
      .def(
          "__init__",
          [](Runtime *self, const std::string &device, const std::string &db_path,
             bool use_database, const std::string &on_miss, const std::string &backend,
             const std::string &arch, int tune_budget, double emulator_timeout) {
            Runtime *opened = open_runtime(device, db_path, use_database, on_miss, backend, arch,
                                           tune_budget, emulator_timeout);
            new (self) Runtime(std::move(*opened));
            delete opened;
          },
          "device"_a = "auto", "db_path"_a = "", "use_database"_a = true, "on_miss"_a = "heuristic",
          "backend"_a = "llvm", "arch"_a = "", "tune_budget"_a = 24, "emulator_timeout"_a = 0.0)
      .def(
          "prepare", [](Runtime &rt, const std::string &text) { return rt.prepare(text); },
          "spec"_a, Release(), "Prepares one GEMM or convolution given as DSL text.")
      .def("wait_for_tuning", &Runtime::wait_for_tuning, Release(),
           "Blocks until every background tune has finished.")
      .def_prop_ro("device_name", &Runtime::device_name)
      .def_prop_ro("is_emulator", &Runtime::device_is_emulator)
      .def_prop_ro("arch", &Runtime::arch)
      .def_prop_ro("database_path", &Runtime::database_path)
      .def("allocate", &Runtime::allocate, "bytes"_a, Release(), "Device memory (an address).")
      .def("free", &Runtime::free, "address"_a, Release(), "Frees allocate()'s memory.")
      .def(
          "copy_to_device",
          [](Runtime &rt, uint64_t dst, uintptr_t host, size_t bytes) {
            rt.copy_to_device(dst, reinterpret_cast<const void *>(host), bytes);
          },
          "dst"_a, "host"_a, "bytes"_a, Release(), "Copies host memory to the device.")
      .def(
          "copy_to_host",
          [](Runtime &rt, uintptr_t host, uint64_t src, size_t bytes) {
            rt.copy_to_host(reinterpret_cast<void *>(host), src, bytes);
          },
          "host"_a, "src"_a, "bytes"_a, Release(), "Copies device memory to host memory.");
}

} // namespace tcjit::python
