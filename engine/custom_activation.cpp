#include "engine/custom_activation.h"

#include "compiler/codegen/plan/custom_activation.h"
#include "engine/device_buffer.h"
#include "runtime/jit/nvrtc_compiler.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <mutex>
#include <sstream>
#include <stdexcept>

namespace tcjit::engine {

namespace {

std::string type_name(DType epi) {
  return epi == DType::f64 ? "double" : "float";
}

// The check kernel compiled for (text, path, epi, sm), once per process: the tuner checks every
// candidate and evaluates the function for every verification. Kept for the last 64 texts.
jit::CudaCompileResult compile_check_kernel(const CustomActivation &custom, DType epi, int sm) {
  static std::mutex mutex;
  static std::map<std::string, jit::CudaCompileResult> cache;
  const std::string key =
      custom.path + '\0' + custom.source + '\0' + type_name(epi) + '\0' + std::to_string(sm);
  {
    std::lock_guard lock(mutex);
    if (const auto it = cache.find(key); it != cache.end())
      return it->second;
  }
  jit::CudaCompileResult r =
      jit::compile_cuda_source(codegen::custom_activation_kernel_source(custom, epi),
                               codegen::kCustomActivationCheckFile, sm);
  std::lock_guard lock(mutex);
  if (cache.size() >= 64)
    cache.clear();
  return cache.emplace(key, std::move(r)).first->second;
}

} // namespace

std::string user_compile_log(const std::string &log, const CustomActivation &custom) {
  std::istringstream in(log);
  std::string out;
  const std::string prefix = custom.path + "(";
  for (std::string line; std::getline(in, line);) {
    if (line.starts_with(prefix)) {
      const size_t close = line.find("): ", prefix.size());
      if (close != std::string::npos)
        line = custom.path + ":" + line.substr(prefix.size(), close - prefix.size()) + ": " +
               line.substr(close + 3);
    }
    const bool summary = line.find(" detected in the compilation of ") != std::string::npos;
    if (!summary && line.find_first_not_of(' ') != std::string::npos)
      out += line + "\n";
  }
  return out;
}

bool has_error_at_user_lines(const std::string &user_log, const CustomActivation &custom) {
  const std::string prefix = custom.path + ":";
  for (size_t at = user_log.find(prefix); at != std::string::npos;
       at = user_log.find(prefix, at + 1)) {
    if (at != 0 && user_log[at - 1] != '\n')
      continue; // not at the start of a line
    size_t i = at + prefix.size();
    const size_t digits = i;
    while (i < user_log.size() && std::isdigit(static_cast<unsigned char>(user_log[i])))
      ++i;
    if (i > digits && user_log.compare(i, 9, ": error: ") == 0)
      return true;
  }
  return false;
}

std::vector<codegen::ConfigError> check_custom_activation(const CustomActivation &custom, DType epi,
                                                          int sm) {
  if (std::string problem = codegen::custom_activation_problem(custom); !problem.empty())
    return {{"act", std::move(problem)}};
  const jit::CudaCompileResult r = compile_check_kernel(custom, epi, sm);
  if (r.ok)
    return {};
  const std::string log = user_compile_log(r.log, custom);
  // Errors at the user's lines say enough; an error only in the call means act is missing or has
  // the wrong shape.
  if (has_error_at_user_lines(log, custom))
    return {{"act",
             "act=custom:" + custom.path + " does not compile:\n" + log.substr(0, log.size() - 1)}};
  return {{"act", "act=custom:" + custom.path + " must define __device__ " + type_name(epi) +
                      " act(" + type_name(epi) + " x) (NVRTC: " + log.substr(0, log.find('\n')) +
                      ")"}};
}

std::vector<double> evaluate_custom_activation(device::Device &dev, const CustomActivation &custom,
                                               DType epi, std::span<const double> xs) {
  std::vector<double> out(xs.size());
  if (xs.empty())
    return out;
  const jit::CudaCompileResult r = compile_check_kernel(custom, epi, dev.info().sm_arch);
  if (!r.ok)
    throw std::invalid_argument("act=custom:" + custom.path + " does not compile:\n" +
                                user_compile_log(r.log, custom));
  const bool f64 = epi == DType::f64;
  const size_t esize = f64 ? 8 : 4;
  const device::ModuleHandle module = dev.load_module(r.ptx, codegen::kCustomActivationCheckFile);
  const device::FunctionHandle f = dev.get_function(module, codegen::kCustomActivationKernel);
  // Launches of at most 2^24 points: the kernel's index is an int, and the buffers stay small.
  constexpr size_t kChunk = size_t(1) << 24;
  std::vector<std::byte> host(std::min(xs.size(), kChunk) * esize);
  DeviceBuffer in(dev, host.size()), result(dev, host.size());
  for (size_t begin = 0; begin < xs.size(); begin += kChunk) {
    const size_t count = std::min(kChunk, xs.size() - begin);
    for (size_t i = 0; i < count; ++i) {
      if (f64) {
        std::memcpy(host.data() + i * 8, &xs[begin + i], 8);
      } else {
        const auto x = static_cast<float>(xs[begin + i]);
        std::memcpy(host.data() + i * 4, &x, 4);
      }
    }
    dev.copy_to_device(in.ptr(), host.data(), count * esize);
    device::ParamBuffer params(dev.kernel_info(f));
    params.set(0, in.ptr());
    params.set(1, result.ptr());
    params.set(2, static_cast<int32_t>(count));
    device::LaunchConfig launch;
    const auto threads = static_cast<uint32_t>(codegen::kCustomActivationThreads);
    launch.grid.x = static_cast<uint32_t>((count + threads - 1) / threads);
    launch.block.x = threads;
    dev.launch(f, launch, params.bytes());
    dev.synchronize();
    dev.copy_to_host(host.data(), result.ptr(), count * esize);
    for (size_t i = 0; i < count; ++i) {
      if (f64) {
        std::memcpy(&out[begin + i], host.data() + i * 8, 8);
      } else {
        float y;
        std::memcpy(&y, host.data() + i * 4, 4);
        out[begin + i] = y;
      }
    }
  }
  dev.unload_module(module);
  return out;
}

} // namespace tcjit::engine
