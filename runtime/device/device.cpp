#include "runtime/device/device.h"

#include <chrono>
#include <cstring>

namespace tcjit::device {

const char *error_kind_name(ErrorKind kind) {
  switch (kind) {
  case ErrorKind::InvalidArgument: return "invalid argument";
  case ErrorKind::OutOfMemory: return "out of memory";
  case ErrorKind::ModuleLoad: return "module load failed";
  case ErrorKind::NotFound: return "not found";
  case ErrorKind::LaunchFailed: return "launch failed";
  case ErrorKind::Unsupported: return "unsupported";
  }
  return "unknown";
}

DeviceError::DeviceError(ErrorKind kind, const std::string &message)
    : std::runtime_error(message), kind_(kind) {}

ParamBuffer::ParamBuffer(const KernelInfo &kernel)
    : kernel_(&kernel), bytes_(kernel.param_bytes, std::byte{0}) {}

void ParamBuffer::set_bytes(size_t index, const void *data, size_t size) {
  if (index >= kernel_->params.size()) {
    throw DeviceError(ErrorKind::InvalidArgument, "kernel '" + kernel_->name + "' has " +
                                                      std::to_string(kernel_->params.size()) +
                                                      " parameters; index " +
                                                      std::to_string(index) + " is out of range");
  }
  const ParamInfo &p = kernel_->params[index];
  if (size != p.size) {
    throw DeviceError(ErrorKind::InvalidArgument,
                      "parameter " + std::to_string(index) + " ('" + p.name + "') of kernel '" +
                          kernel_->name + "' is " + std::to_string(p.size) + " bytes, got " +
                          std::to_string(size) + " bytes; pass a value of the declared type");
  }
  std::memcpy(bytes_.data() + p.offset, data, size);
}

double Device::time_ms(const std::function<void()> &enqueue) {
  const auto start = std::chrono::steady_clock::now();
  enqueue();
  synchronize();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

} // namespace tcjit::device
