// The user's activation (`act=custom:FILE`) outside a kernel: compiled alone by NVRTC to check it
// before the kernel is built (its errors at the user's file and lines), and evaluated on a device
// for the reference of a verification (the CPU reference cannot run CUDA C++).
#pragma once

#include "compiler/codegen/plan/tile_config.h"
#include "runtime/device/device.h"
#include "tcjit/op_spec.h"

#include <span>
#include <vector>

namespace tcjit::engine {

// The problems of `custom` for an epilogue computing in `epi` (f32, or f64): the text's own
// (codegen::custom_activation_problem), then NVRTC's errors in compiling it for sm_<sm> with the
// call act(x), each as "FILE:LINE: error: ..." lines under field "act". Empty when it compiles.
// The compile is kept per (text, path, epi, sm) for the process: the tuner asks per candidate.
// Throws std::runtime_error when NVRTC cannot be loaded.
std::vector<codegen::ConfigError> check_custom_activation(const CustomActivation &custom, DType epi,
                                                          int sm);

// NVRTC's log of a source holding the user's text, made the user's: "FILE(LINE): " becomes
// "FILE:LINE: "; lines of the generated code are kept.
std::string user_compile_log(const std::string &log, const CustomActivation &custom);

// True when `user_log` (user_compile_log's) has an error at a line of the user's file.
bool has_error_at_user_lines(const std::string &user_log, const CustomActivation &custom);

// act(x) for each x, computed by the check kernel on `dev` in the epilogue type (each x rounded to
// it first). Throws std::invalid_argument when the function does not compile (check first),
// device::DeviceError when the device fails.
std::vector<double> evaluate_custom_activation(device::Device &dev, const CustomActivation &custom,
                                               DType epi, std::span<const double> xs);

} // namespace tcjit::engine
