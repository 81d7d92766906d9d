// The C API (include/tcjit/tcjit.h) over tcjit::Runtime: every exception is caught here and becomes
// a status plus this thread's last error message.
#include "tcjit/tcjit.h"

#include "tcjit/tcjit.hpp"

#include "api/c_vocabulary.h"
#include "api/runtime_state.h"

#include <exception>
#include <mutex>
#include <new>
#include <set>
#include <string>

struct tcjit_runtime {
  tcjit::Runtime runtime;
};

struct tcjit_operation {
  tcjit::Operation operation;
  std::string config;
  std::string spec;
  // The strings returned by tcjit_operation_config_for / _kernel_id (and _config once the kernel
  // is compiled): kept as long as the operation (a set's elements never move). Guarded by mutex.
  mutable std::mutex strings_mutex;
  mutable std::set<std::string> strings;
  const char *keep(std::string text) const {
    std::lock_guard lock(strings_mutex);
    return strings.insert(std::move(text)).first->c_str();
  }
};

namespace {

thread_local std::string last_error_message;

tcjit_status status_of(tcjit::ErrorCode code) {
  switch (code) {
  case tcjit::ErrorCode::invalid_argument: return TCJIT_ERROR_INVALID_ARGUMENT;
  case tcjit::ErrorCode::bad_spec: return TCJIT_ERROR_BAD_SPEC;
  case tcjit::ErrorCode::not_found: return TCJIT_ERROR_NOT_FOUND;
  case tcjit::ErrorCode::unsupported: return TCJIT_ERROR_UNSUPPORTED;
  case tcjit::ErrorCode::device: return TCJIT_ERROR_DEVICE;
  case tcjit::ErrorCode::database: return TCJIT_ERROR_DATABASE;
  case tcjit::ErrorCode::internal: return TCJIT_ERROR_INTERNAL;
  }
  return TCJIT_ERROR_INTERNAL;
}

tcjit_status fail(tcjit_status status, std::string message) {
  last_error_message = std::move(message);
  return status;
}

// Runs `body` (which returns nothing) and turns every exception into a status; an Error's message
// in the words of the C function `function` (api/c_vocabulary.h).
template <typename Body> tcjit_status guarded(const char *function, Body &&body) {
  try {
    body();
    last_error_message.clear();
    return TCJIT_OK;
  } catch (const tcjit::Error &e) {
    return fail(status_of(e.code()), tcjit::api::c_error_message(e, function));
  } catch (const std::bad_alloc &) {
    return fail(TCJIT_ERROR_INTERNAL, "tcjit: out of host memory");
  } catch (const std::exception &e) {
    return fail(TCJIT_ERROR_INTERNAL, std::string("tcjit: internal error: ") + e.what());
  } catch (...) {
    return fail(TCJIT_ERROR_INTERNAL, "tcjit: internal error: unknown exception");
  }
}

tcjit_status null_argument(const char *function, const char *argument) {
  return fail(TCJIT_ERROR_INVALID_ARGUMENT,
              std::string("tcjit: ") + function + ": " + argument + " is NULL");
}

// A launch's errors in the words of the C function `function`: its parameter names.
tcjit::api::LaunchVocabulary c_words(const char *function) {
  return tcjit::api::LaunchVocabulary{function, "", "tcjit_malloc"};
}

// The GemmArgs of a C call: its sizes (0: the prepared spec's) and pointers (none for a query).
tcjit::GemmArgs gemm_args(int64_t m, int64_t n, int64_t k, int64_t batch,
                          tcjit::GemmArgs pointers = {}) {
  pointers.m = m;
  pointers.n = n;
  pointers.k = k;
  pointers.batch = batch;
  return pointers;
}

// An estimate (or none: TCJIT_ERROR_NOT_FOUND) into the C outputs.
void put_estimate(const std::optional<tcjit::TimeEstimate> &estimate, const char *function,
                  double *time_us, int *measured) {
  if (!estimate)
    throw tcjit::Error(tcjit::ErrorCode::not_found,
                       "the cost model has no estimate for this kernel at these sizes", function,
                       "");
  *time_us = estimate->time_us;
  if (measured)
    *measured = estimate->measured ? 1 : 0;
}

} // namespace

extern "C" {

tcjit_status tcjit_runtime_open(const tcjit_runtime_options *options, tcjit_runtime **out) {
  return tcjit_runtime_open_with_backend(options, nullptr, out);
}

tcjit_status tcjit_runtime_open_with_backend(const tcjit_runtime_options *options,
                                             const char *backend, tcjit_runtime **out) {
  const char *where = backend ? "tcjit_runtime_open_with_backend" : "tcjit_runtime_open";
  if (!out)
    return null_argument(where, "out");
  *out = nullptr;
  return guarded(where, [&] {
    tcjit::RuntimeOptions o;
    if (options) {
      if (options->db_path)
        o.db_path = options->db_path;
      o.use_database = options->no_database == 0;
      if (options->device)
        o.device = options->device;
      switch (options->on_miss) {
      case TCJIT_MISS_HEURISTIC: o.on_miss = tcjit::MissPolicy::heuristic; break;
      case TCJIT_MISS_FAIL: o.on_miss = tcjit::MissPolicy::fail; break;
      case TCJIT_MISS_TUNE: o.on_miss = tcjit::MissPolicy::tune; break;
      case TCJIT_MISS_BACKGROUND: o.on_miss = tcjit::MissPolicy::background; break;
      default:
        throw tcjit::Error(tcjit::ErrorCode::invalid_argument,
                           "unknown on_miss value " + std::to_string(options->on_miss), where,
                           "use a tcjit_miss_policy constant");
      }
      if (options->arch)
        o.arch = options->arch;
    }
    if (backend && *backend)
      o.backend = backend; // checked by the Runtime
    *out = new tcjit_runtime{tcjit::Runtime(o)};
  });
}

void tcjit_runtime_close(tcjit_runtime *rt) {
  delete rt;
}

tcjit_status tcjit_prepare(tcjit_runtime *rt, const char *spec, tcjit_operation **out) {
  if (!out)
    return null_argument("tcjit_prepare", "out");
  *out = nullptr;
  if (!rt)
    return null_argument("tcjit_prepare", "rt");
  if (!spec)
    return null_argument("tcjit_prepare", "spec");
  return guarded("tcjit_prepare", [&] {
    tcjit::Operation op = rt->runtime.prepare(spec);
    // A symbolic spec's kernel may still be compiling (Operation::ready), or have failed to: its
    // config (or the compile's error) is asked when tcjit_operation_config is called. Only a kernel
    // already in hand is asked now (a compile that ended is not: it may have failed).
    std::string config = tcjit::OperationAccess::state(op).kernel.load() ? op.config() : "";
    std::string text = op.spec_text();
    auto *made = new tcjit_operation{std::move(op), std::move(config), std::move(text), {}, {}};
    *out = made;
  });
}

void tcjit_operation_release(tcjit_operation *op) {
  delete op;
}

const char *tcjit_operation_config(const tcjit_operation *op) {
  if (!op)
    return nullptr;
  if (!op->config.empty())
    return op->config.c_str();
  const char *config = nullptr; // waits for a background compile
  if (guarded("tcjit_operation_config", [&] { config = op->keep(op->operation.config()); }) !=
      TCJIT_OK)
    return nullptr;
  return config;
}

const char *tcjit_operation_spec(const tcjit_operation *op) {
  return op ? op->spec.c_str() : nullptr;
}

uint64_t tcjit_operation_key_hash(const tcjit_operation *op) {
  return op ? op->operation.key_hash() : 0;
}

tcjit_origin tcjit_operation_origin(const tcjit_operation *op) {
  if (!op)
    return TCJIT_ORIGIN_MEMORY;
  switch (op->operation.origin()) {
  case tcjit::Origin::memory: return TCJIT_ORIGIN_MEMORY;
  case tcjit::Origin::database: return TCJIT_ORIGIN_DATABASE;
  case tcjit::Origin::compiled_now: return TCJIT_ORIGIN_COMPILED_NOW;
  case tcjit::Origin::tuned_now: return TCJIT_ORIGIN_TUNED_NOW;
  }
  return TCJIT_ORIGIN_MEMORY;
}

const char *tcjit_origin_name(tcjit_origin origin) {
  switch (origin) {
  case TCJIT_ORIGIN_MEMORY: return "memory";
  case TCJIT_ORIGIN_DATABASE: return "database";
  case TCJIT_ORIGIN_COMPILED_NOW: return "compiled_now";
  case TCJIT_ORIGIN_TUNED_NOW: return "tuned_now";
  }
  return "unknown";
}

tcjit_status tcjit_malloc(tcjit_runtime *rt, size_t bytes, tcjit_device_ptr *out) {
  if (!rt)
    return null_argument("tcjit_malloc", "rt");
  if (!out)
    return null_argument("tcjit_malloc", "out");
  return guarded("tcjit_malloc", [&] { *out = rt->runtime.allocate(bytes); });
}

tcjit_status tcjit_free(tcjit_runtime *rt, tcjit_device_ptr ptr) {
  if (!rt)
    return null_argument("tcjit_free", "rt");
  return guarded("tcjit_free", [&] { rt->runtime.free(ptr); });
}

tcjit_status tcjit_memcpy_h2d(tcjit_runtime *rt, tcjit_device_ptr dst, const void *src,
                              size_t bytes) {
  if (!rt)
    return null_argument("tcjit_memcpy_h2d", "rt");
  if (!src && bytes > 0)
    return null_argument("tcjit_memcpy_h2d", "src");
  return guarded("tcjit_memcpy_h2d", [&] { rt->runtime.copy_to_device(dst, src, bytes); });
}

tcjit_status tcjit_memcpy_d2h(tcjit_runtime *rt, void *dst, tcjit_device_ptr src, size_t bytes) {
  if (!rt)
    return null_argument("tcjit_memcpy_d2h", "rt");
  if (!dst && bytes > 0)
    return null_argument("tcjit_memcpy_d2h", "dst");
  return guarded("tcjit_memcpy_d2h", [&] { rt->runtime.copy_to_host(dst, src, bytes); });
}

tcjit_status tcjit_launch_gemm(const tcjit_operation *op, tcjit_device_ptr a, tcjit_device_ptr b,
                               tcjit_device_ptr c, tcjit_device_ptr d, tcjit_device_ptr bias,
                               void *stream) {
  if (!op)
    return null_argument("tcjit_launch_gemm", "op");
  return guarded("tcjit_launch_gemm", [&] {
    tcjit::api::launch_gemm(tcjit::OperationAccess::state(op->operation), {a, b, c, d, bias},
                            stream, c_words("tcjit_launch_gemm"));
  });
}

tcjit_status tcjit_launch_gemm_sized(const tcjit_operation *op, int64_t m, int64_t n, int64_t k,
                                     int64_t batch, tcjit_device_ptr a, tcjit_device_ptr b,
                                     tcjit_device_ptr c, tcjit_device_ptr d, tcjit_device_ptr bias,
                                     void *stream) {
  if (!op)
    return null_argument("tcjit_launch_gemm_sized", "op");
  const tcjit::GemmArgs args = gemm_args(m, n, k, batch, {a, b, c, d, bias});
  return guarded("tcjit_launch_gemm_sized", [&] {
    tcjit::api::launch_gemm(tcjit::OperationAccess::state(op->operation), args, stream,
                            c_words("tcjit_launch_gemm_sized"));
  });
}

tcjit_status tcjit_launch_conv(const tcjit_operation *op, int64_t n, tcjit_device_ptr x,
                               tcjit_device_ptr filter, tcjit_device_ptr y, tcjit_device_ptr bias,
                               void *stream) {
  if (!op)
    return null_argument("tcjit_launch_conv", "op");
  tcjit::ConvArgs args{x, filter, y, bias};
  args.n = n;
  return guarded("tcjit_launch_conv", [&] {
    tcjit::api::launch_conv(tcjit::OperationAccess::state(op->operation), args, stream,
                            c_words("tcjit_launch_conv"));
  });
}

/* --- workspaces --- */

tcjit_status tcjit_operation_workspace_bytes(const tcjit_operation *op, int64_t m, int64_t n,
                                             int64_t k, int64_t batch, size_t *out) {
  if (!op)
    return null_argument("tcjit_operation_workspace_bytes", "op");
  if (!out)
    return null_argument("tcjit_operation_workspace_bytes", "out");
  const tcjit::GemmArgs sizes = gemm_args(m, n, k, batch);
  return guarded("tcjit_operation_workspace_bytes", [&] {
    *out = tcjit::api::gemm_workspace_bytes(tcjit::OperationAccess::state(op->operation), sizes,
                                            c_words("tcjit_operation_workspace_bytes"));
  });
}

tcjit_status tcjit_operation_workspace_bytes_conv(const tcjit_operation *op, int64_t n,
                                                  size_t *out) {
  if (!op)
    return null_argument("tcjit_operation_workspace_bytes_conv", "op");
  if (!out)
    return null_argument("tcjit_operation_workspace_bytes_conv", "out");
  return guarded("tcjit_operation_workspace_bytes_conv", [&] {
    *out = tcjit::api::conv_workspace_bytes(tcjit::OperationAccess::state(op->operation), n,
                                            c_words("tcjit_operation_workspace_bytes_conv"));
  });
}

tcjit_status tcjit_launch_gemm_ex(const tcjit_operation *op, int64_t m, int64_t n, int64_t k,
                                  int64_t batch, tcjit_device_ptr a, tcjit_device_ptr b,
                                  tcjit_device_ptr c, tcjit_device_ptr d, tcjit_device_ptr bias,
                                  void *stream, tcjit_device_ptr workspace,
                                  size_t workspace_bytes) {
  if (!op)
    return null_argument("tcjit_launch_gemm_ex", "op");
  const tcjit::GemmArgs args = gemm_args(m, n, k, batch, {a, b, c, d, bias});
  return guarded("tcjit_launch_gemm_ex", [&] {
    tcjit::api::launch_gemm(tcjit::OperationAccess::state(op->operation), args, stream,
                            c_words("tcjit_launch_gemm_ex"), {workspace, workspace_bytes});
  });
}

tcjit_status tcjit_launch_conv_ex(const tcjit_operation *op, int64_t n, tcjit_device_ptr x,
                                  tcjit_device_ptr filter, tcjit_device_ptr y,
                                  tcjit_device_ptr bias, void *stream, tcjit_device_ptr workspace,
                                  size_t workspace_bytes) {
  if (!op)
    return null_argument("tcjit_launch_conv_ex", "op");
  tcjit::ConvArgs args{x, filter, y, bias};
  args.n = n;
  return guarded("tcjit_launch_conv_ex", [&] {
    tcjit::api::launch_conv(tcjit::OperationAccess::state(op->operation), args, stream,
                            c_words("tcjit_launch_conv_ex"), {workspace, workspace_bytes});
  });
}

/* --- version, config per size, kernel identity, predicted time --- */

const char *tcjit_version(void) {
  return TCJIT_VERSION_TEXT;
}

void tcjit_version_numbers(int *major, int *minor, int *patch) {
  if (major)
    *major = TCJIT_VERSION_MAJOR;
  if (minor)
    *minor = TCJIT_VERSION_MINOR;
  if (patch)
    *patch = TCJIT_VERSION_PATCH;
}

const char *tcjit_operation_config_for(const tcjit_operation *op, int64_t m, int64_t n, int64_t k,
                                       int64_t batch) {
  if (!op) {
    null_argument("tcjit_operation_config_for", "op");
    return nullptr;
  }
  const char *config = nullptr;
  const tcjit::GemmArgs sizes = gemm_args(m, n, k, batch);
  const tcjit_status status = guarded("tcjit_operation_config_for", [&] {
    config = op->keep(tcjit::api::config_for(tcjit::OperationAccess::state(op->operation), sizes,
                                             c_words("tcjit_operation_config_for")));
  });
  return status == TCJIT_OK ? config : nullptr;
}

const char *tcjit_operation_kernel_id(const tcjit_operation *op) {
  if (!op) {
    null_argument("tcjit_operation_kernel_id", "op");
    return nullptr;
  }
  const char *id = nullptr;
  const tcjit_status status =
      guarded("tcjit_operation_kernel_id", [&] { id = op->keep(op->operation.kernel_id()); });
  return status == TCJIT_OK ? id : nullptr;
}

tcjit_status tcjit_operation_predicted_time(const tcjit_operation *op, int64_t m, int64_t n,
                                            int64_t k, int64_t batch, double *time_us,
                                            int *measured) {
  const char *where = "tcjit_operation_predicted_time";
  if (!op)
    return null_argument(where, "op");
  if (!time_us)
    return null_argument(where, "time_us");
  const tcjit::GemmArgs sizes = gemm_args(m, n, k, batch);
  return guarded(where, [&] {
    put_estimate(tcjit::api::predicted_time(tcjit::OperationAccess::state(op->operation), sizes,
                                            c_words(where)),
                 where, time_us, measured);
  });
}

tcjit_status tcjit_operation_predicted_time_conv(const tcjit_operation *op, int64_t n,
                                                 double *time_us, int *measured) {
  const char *where = "tcjit_operation_predicted_time_conv";
  if (!op)
    return null_argument(where, "op");
  if (!time_us)
    return null_argument(where, "time_us");
  tcjit::ConvArgs sizes;
  sizes.n = n;
  return guarded(where, [&] {
    put_estimate(tcjit::api::predicted_time_conv(tcjit::OperationAccess::state(op->operation),
                                                 sizes, c_words(where)),
                 where, time_us, measured);
  });
}

const char *tcjit_last_error_message(void) {
  return last_error_message.c_str();
}

const char *tcjit_status_name(tcjit_status status) {
  switch (status) {
  case TCJIT_OK: return "TCJIT_OK";
  case TCJIT_ERROR_INVALID_ARGUMENT: return "TCJIT_ERROR_INVALID_ARGUMENT";
  case TCJIT_ERROR_BAD_SPEC: return "TCJIT_ERROR_BAD_SPEC";
  case TCJIT_ERROR_NOT_FOUND: return "TCJIT_ERROR_NOT_FOUND";
  case TCJIT_ERROR_UNSUPPORTED: return "TCJIT_ERROR_UNSUPPORTED";
  case TCJIT_ERROR_DEVICE: return "TCJIT_ERROR_DEVICE";
  case TCJIT_ERROR_DATABASE: return "TCJIT_ERROR_DATABASE";
  case TCJIT_ERROR_INTERNAL: return "TCJIT_ERROR_INTERNAL";
  }
  return "TCJIT_ERROR_UNKNOWN";
}

} // extern "C"
