/* The embedding API of tcjit in C: opaque handles and status codes, so C, Python, Rust or Go can
 * embed tcjit without C++. The same essentials as include/tcjit/tcjit.hpp (see there for what
 * preparing and launching do). No call throws or aborts: failures return a status, and
 * tcjit_last_error_message() (per thread) says what went wrong and how to fix it. */
#ifndef TCJIT_TCJIT_H
#define TCJIT_TCJIT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum tcjit_status {
  TCJIT_OK = 0,
  TCJIT_ERROR_INVALID_ARGUMENT = 1, /* a null handle or pointer, an unknown option */
  TCJIT_ERROR_BAD_SPEC = 2,         /* the DSL text does not parse or is not valid */
  TCJIT_ERROR_NOT_FOUND = 3,        /* a cache miss under TCJIT_MISS_FAIL */
  TCJIT_ERROR_UNSUPPORTED = 4,      /* e.g. no CUDA driver, an op the generator lacks */
  TCJIT_ERROR_DEVICE = 5,           /* the device failed (allocation, launch...) */
  TCJIT_ERROR_DATABASE = 6,         /* the kernel database failed */
  TCJIT_ERROR_INTERNAL = 7
} tcjit_status;

typedef enum tcjit_miss_policy {
  TCJIT_MISS_HEURISTIC = 0, /* compile the default config now */
  TCJIT_MISS_FAIL = 1,      /* a miss is TCJIT_ERROR_NOT_FOUND */
  TCJIT_MISS_TUNE = 2,      /* tune now (blocking), store and use the winner */
  TCJIT_MISS_BACKGROUND = 3 /* compile the default now, tune in the background */
} tcjit_miss_policy;

typedef enum tcjit_origin {
  TCJIT_ORIGIN_MEMORY = 0,
  TCJIT_ORIGIN_DATABASE = 1,
  TCJIT_ORIGIN_COMPILED_NOW = 2,
  TCJIT_ORIGIN_TUNED_NOW = 3
} tcjit_origin;

typedef struct tcjit_runtime_options {
  const char *db_path; /* NULL or "": $TCJIT_DB, else ~/.cache/tcjit/kernels.db */
  int no_database;     /* nonzero: neither read nor write a database */
  const char *device;  /* NULL = "auto"; "emu", "cuda" */
  tcjit_miss_policy on_miss;
  const char *arch; /* NULL or "": the device's own */
} tcjit_runtime_options;

typedef struct tcjit_runtime tcjit_runtime;
typedef struct tcjit_operation tcjit_operation;
typedef uint64_t tcjit_device_ptr;

/* options may be NULL (all defaults). */
tcjit_status tcjit_runtime_open(const tcjit_runtime_options *options, tcjit_runtime **out);
/* As tcjit_runtime_open, with the code generator's backend (RuntimeOptions::backend): NULL or
 * "llvm" (the default), or "nvrtc" (CUDA C++ compiled by NVRTC; the one that compiles a spec's
 * act=custom:FILE, read from the current directory when relative). A function of its own rather
 * than a field of tcjit_runtime_options, whose size applications built earlier rely on. */
tcjit_status tcjit_runtime_open_with_backend(const tcjit_runtime_options *options,
                                             const char *backend, tcjit_runtime **out);
/* Operations prepared by the runtime stay usable after it is closed. NULL is ignored. */
void tcjit_runtime_close(tcjit_runtime *rt);

/* A spec with symbolic sizes whose kernel must be compiled returns at once: the kernel is compiled
 * on a background thread, and the first call that needs it (a launch, tcjit_operation_config,
 * _config_for, _kernel_id, _predicted_time) waits for it, failing with the compile's error. */
tcjit_status tcjit_prepare(tcjit_runtime *rt, const char *spec, tcjit_operation **out);
void tcjit_operation_release(tcjit_operation *op); /* NULL is ignored */
/* Strings live as long as the operation; NULL for a NULL operation (tcjit_operation_config: also
 * when the operation's background compile failed, tcjit_last_error_message() saying why). */
const char *tcjit_operation_config(const tcjit_operation *op);
const char *tcjit_operation_spec(const tcjit_operation *op);
uint64_t tcjit_operation_key_hash(const tcjit_operation *op);
tcjit_origin tcjit_operation_origin(const tcjit_operation *op);
const char *tcjit_origin_name(tcjit_origin origin);

tcjit_status tcjit_malloc(tcjit_runtime *rt, size_t bytes, tcjit_device_ptr *out);
tcjit_status tcjit_free(tcjit_runtime *rt, tcjit_device_ptr ptr);
tcjit_status tcjit_memcpy_h2d(tcjit_runtime *rt, tcjit_device_ptr dst, const void *src,
                              size_t bytes);
tcjit_status tcjit_memcpy_d2h(tcjit_runtime *rt, void *dst, tcjit_device_ptr src, size_t bytes);

/* Every launch first checks its sizes against the spec, refuses a null pointer of an operand the
 * spec uses and a pointer not aligned to its elements, and serves a pointer less aligned than the
 * kernel's vectors by a kernel for its alignment (compiled once; refused under TCJIT_MISS_FAIL and
 * for convolutions): TCJIT_ERROR_INVALID_ARGUMENT, the message naming the parameter.
 * D = act(alpha*A*B + beta*C + bias) on the runtime's device. bias may be 0 without a bias;
 * stream: an opaque CUstream of the CUDA device's context (NULL: the device's own stream; the
 * emulator ignores it). On the CUDA device a launch is asynchronous: its kernels are enqueued on
 * the stream and the call returns without waiting (no allocation, copy or synchronization once
 * the runtime's workspace pool is warm: capturable in a CUDA graph); the emulator runs it before
 * returning. A launch that needs a workspace takes the runtime's pool (one buffer per stream,
 * grown when a launch needs more, freed when the runtime and its operations are gone), or the
 * caller's: tcjit_launch_gemm_ex. */
tcjit_status tcjit_launch_gemm(const tcjit_operation *op, tcjit_device_ptr a, tcjit_device_ptr b,
                               tcjit_device_ptr c, tcjit_device_ptr d, tcjit_device_ptr bias,
                               void *stream);

/* The same at sizes given now: 0 takes the prepared spec's; a size the spec leaves symbolic
 * (m=?, m=1..8192) must be given. One prepared operation serves every size. */
tcjit_status tcjit_launch_gemm_sized(const tcjit_operation *op, int64_t m, int64_t n, int64_t k,
                                     int64_t batch, tcjit_device_ptr a, tcjit_device_ptr b,
                                     tcjit_device_ptr c, tcjit_device_ptr d, tcjit_device_ptr bias,
                                     void *stream);

/* A convolution (conv2d/conv3d operation): fprop reads x and filter and writes y, dgrad reads y
 * (dy) and filter and writes x (dx), wgrad reads x and y (dy) and writes filter (dw); the written
 * tensor is also C (beta). NHWC/NDHWC activations, KRSC/KTRSC filter. n: the batch size of this
 * launch, any n >= 1 whatever n the spec was prepared with; 0 for the prepared spec's (needed when
 * the spec says n=? or a range). Asynchronous on the CUDA device, as tcjit_launch_gemm. */
tcjit_status tcjit_launch_conv(const tcjit_operation *op, int64_t n, tcjit_device_ptr x,
                               tcjit_device_ptr filter, tcjit_device_ptr y, tcjit_device_ptr bias,
                               void *stream);

/* Workspaces (split-K's partial sums, channel padding's copies). *out: the bytes of workspace a
 * GEMM launch at sizes m, n, k, batch (0: the prepared spec's, as for tcjit_launch_gemm_sized)
 * needs, of the kernel that launch runs (its sizes' dispatch bucket), for pointers aligned as
 * tcjit_malloc returns them; 0 when it needs none. A launch with less-aligned pointers may run
 * another kernel: tcjit_launch_gemm_ex then says the bytes it needs. */
tcjit_status tcjit_operation_workspace_bytes(const tcjit_operation *op, int64_t m, int64_t n,
                                             int64_t k, int64_t batch, size_t *out);
/* The same for a convolution launched with batch size n (0: the prepared spec's). */
tcjit_status tcjit_operation_workspace_bytes_conv(const tcjit_operation *op, int64_t n,
                                                  size_t *out);
/* tcjit_launch_gemm_sized and tcjit_launch_conv with the caller's workspace: workspace_bytes at
 * workspace (aligned to 16 bytes), at least what the query says for the launch, else
 * TCJIT_ERROR_INVALID_ARGUMENT naming the bytes needed. workspace 0 (and workspace_bytes 0): the
 * runtime's pool. The kernels use it until they have finished on the stream. */
tcjit_status tcjit_launch_gemm_ex(const tcjit_operation *op, int64_t m, int64_t n, int64_t k,
                                  int64_t batch, tcjit_device_ptr a, tcjit_device_ptr b,
                                  tcjit_device_ptr c, tcjit_device_ptr d, tcjit_device_ptr bias,
                                  void *stream, tcjit_device_ptr workspace, size_t workspace_bytes);
tcjit_status tcjit_launch_conv_ex(const tcjit_operation *op, int64_t n, tcjit_device_ptr x,
                                  tcjit_device_ptr filter, tcjit_device_ptr y,
                                  tcjit_device_ptr bias, void *stream, tcjit_device_ptr workspace,
                                  size_t workspace_bytes);

/* --- version, config per size, kernel identity, predicted time --- */

/* The library's version: "MAJOR.MINOR.PATCH" (static storage), and its numbers (NULL outputs are
 * skipped). */
const char *tcjit_version(void);
void tcjit_version_numbers(int *major, int *minor, int *patch);

/* The config of the kernel a launch with these sizes runs (sizes as tcjit_launch_gemm_sized: 0
 * takes the prepared spec's): the operation's, or its size bucket's when the spec has ranges tuned
 * by `tcjit tune`. A convolution's one kernel serves every size (its config). The string lives as
 * long as the operation. NULL for sizes the operation does not accept (and a NULL op):
 * tcjit_last_error_message() says why. */
const char *tcjit_operation_config_for(const tcjit_operation *op, int64_t m, int64_t n, int64_t k,
                                       int64_t batch);
/* The compiled kernel's identity: operations sharing one kernel return the same text. Lives as
 * long as the operation; NULL on failure (a background compile that failed, a NULL op). */
const char *tcjit_operation_kernel_id(const tcjit_operation *op);

/* The time in microseconds a launch at these sizes (as tcjit_launch_gemm_sized's) is expected to
 * take, into *time_us; *measured (may be NULL) is 1 when it is the kernel database's measured time
 * of this problem's decision (a concrete spec at its own sizes), 0 when the cost model predicts it
 * for the kernel's config at these sizes. TCJIT_ERROR_NOT_FOUND when the model has no estimate;
 * TCJIT_ERROR_INVALID_ARGUMENT for sizes the operation does not accept. */
tcjit_status tcjit_operation_predicted_time(const tcjit_operation *op, int64_t m, int64_t n,
                                            int64_t k, int64_t batch, double *time_us,
                                            int *measured);
/* The same for a convolution launched with batch size n (0: the prepared spec's). */
tcjit_status tcjit_operation_predicted_time_conv(const tcjit_operation *op, int64_t n,
                                                 double *time_us, int *measured);

/* The message of this thread's last failed call ("" when none); valid until its next call. */
const char *tcjit_last_error_message(void);
const char *tcjit_status_name(tcjit_status status);

#ifdef __cplusplus
}
#endif

#endif /* TCJIT_TCJIT_H */
