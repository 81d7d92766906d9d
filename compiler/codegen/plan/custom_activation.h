// The user's activation (`act=custom:FILE`, CustomActivation in tcjit/op_spec.h) as CUDA C++: the
// checks its text must pass before a compiler sees it, how the CUDA C++ backend embeds it in a
// kernel, and the one-element-per-thread kernel that checks and evaluates it alone.
//
// The text goes into namespace tcjit_user (its helpers cannot clash with the kernel's), preceded by
// `#line 1 "FILE"`, so that NVRTC reports its errors at the user's own file and lines; after it,
// an `#undef` of each macro it defines (they cannot reach the kernel's code) and a `#line` back to
// the generated file's numbering. Its contract: define
//   __device__ float act(float x)        (f16, bf16, tf32, f32, s8 epilogues compute in f32)
//   __device__ double act(double x)      (f64 GEMMs; a float-only act is called with a double)
// using only what NVRTC knows without headers (expf, tanhf, __expf, fmaxf, ...).
#pragma once

#include "tcjit/op_spec.h"

#include <cstddef>
#include <string>
#include <string_view>

namespace tcjit::codegen {

inline constexpr size_t kMaxCustomActivationBytes = 64 * 1024;
inline constexpr const char *kCustomActivationNamespace = "tcjit_user";
// The file name of the check kernel in NVRTC's messages.
inline constexpr const char *kCustomActivationCheckFile = "tcjit_custom_activation_check.cu";
// The check kernel: (const T *x, T *y, int n), y[i] = tcjit_user::act(x[i]) for i < n; 1-D grid.
inline constexpr const char *kCustomActivationKernel = "tcjit_custom_activation";
inline constexpr int kCustomActivationThreads = 128;

// What is wrong with the text before any compiler sees it, as "FILE:LINE: what (fix)" lines; ""
// when nothing: not loaded (empty), over 64 KiB, a byte that is not text, an #include (the kernel
// is compiled without headers).
std::string custom_activation_problem(const CustomActivation &custom);

// The text as it goes into a source file whose next line after it is `next_line` of `file_name`:
// the namespace, the #line directives, the user's text.
std::string embed_custom_activation(const CustomActivation &custom, int next_line,
                                    std::string_view file_name);

// The check kernel's full source for an epilogue computing in `epi` (f32 or f64).
std::string custom_activation_kernel_source(const CustomActivation &custom, DType epi);

} // namespace tcjit::codegen
