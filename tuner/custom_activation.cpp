#include "tuner/custom_activation.h"

#include "compiler/codegen/custom_activation.h"
#include "runtime/jit/nvrtc_compiler.h"
#include "tuner/device_buffer.h"

#include <cstring>
#include <sstream>
#include <stdexcept>

namespace tcjit::tuner {

namespace {

std::string type_name(DType epi) {
  return epi == DType::f64 ? "double" : "float";
}

jit::CudaCompileResult compile_check_kernel(const CustomActivation &custom, DType epi, int sm) {
  return jit::compile_cuda_source(codegen::custom_activation_kernel_source(custom, epi),
                                  codegen::kCustomActivationCheckFile, sm);
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
  if (log.find(custom.path + ":") != std::string::npos)
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
  std::vector<std::byte> host(xs.size() * esize);
  for (size_t i = 0; i < xs.size(); ++i) {
    if (f64) {
      std::memcpy(host.data() + i * 8, &xs[i], 8);
    } else {
      const auto x = static_cast<float>(xs[i]);
      std::memcpy(host.data() + i * 4, &x, 4);
    }
  }
  DeviceBuffer in(dev, host), result(dev, host.size());
  const device::ModuleHandle module = dev.load_module(r.ptx, codegen::kCustomActivationCheckFile);
  const device::FunctionHandle f = dev.get_function(module, codegen::kCustomActivationKernel);
  device::ParamBuffer params(dev.kernel_info(f));
  params.set(0, in.ptr());
  params.set(1, result.ptr());
  params.set(2, static_cast<int32_t>(xs.size()));
  device::LaunchConfig launch;
  const auto threads = static_cast<uint32_t>(codegen::kCustomActivationThreads);
  launch.grid.x = static_cast<uint32_t>((xs.size() + threads - 1) / threads);
  launch.block.x = threads;
  dev.launch(f, launch, params.bytes());
  dev.synchronize();
  dev.copy_to_host(host.data(), result.ptr(), host.size());
  dev.unload_module(module);
  for (size_t i = 0; i < xs.size(); ++i) {
    if (f64) {
      std::memcpy(&out[i], host.data() + i * 8, 8);
    } else {
      float y;
      std::memcpy(&y, host.data() + i * 4, 4);
      out[i] = y;
    }
  }
  return out;
}

} // namespace tcjit::tuner
