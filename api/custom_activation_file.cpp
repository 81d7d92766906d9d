// load_custom_activation of include/tcjit/tools.hpp: the file of an act=custom spec, read once
// into the spec (what the kernel and its cache keys depend on is the text, not the path).
#include "tcjit/tools.hpp"

#include "compiler/codegen/plan/custom_activation.h"
#include "support/regular_file.h"

#include <filesystem>

namespace tcjit {

void load_custom_activation(OpSpec &spec, std::string_view base_dir) {
  CustomActivation &custom = spec.epilogue.custom;
  if (spec.epilogue.act != Activation::custom || !custom.source.empty())
    return;
  const std::string fix = "act=custom:FILE names a CUDA C++ file defining __device__ float "
                          "act(float x); a relative path is read from the workload's folder (a "
                          "spec given as text: the current directory)";
  if (custom.path.empty())
    throw Error(ErrorCode::bad_spec, "act=custom names no file", "act", fix);
  namespace fs = std::filesystem;
  fs::path path(custom.path);
  if (path.is_relative() && !base_dir.empty())
    path = fs::path(base_dir) / path;
  std::error_code ec;
  // stat() before opening: a FIFO, device, socket or directory is refused, never read
  support::FileRead file =
      support::read_regular_file(path.string(), codegen::kMaxCustomActivationBytes);
  switch (file.status) {
  case support::FileReadStatus::ok: break;
  case support::FileReadStatus::missing:
    throw Error(ErrorCode::bad_spec,
                "act=custom:" + custom.path + ": no such file (looked for " +
                    fs::absolute(path, ec).string() + ")",
                "act", fix);
  case support::FileReadStatus::not_regular:
    throw Error(ErrorCode::invalid_argument, "act=custom:" + custom.path + ": " + file.problem,
                "act", fix);
  case support::FileReadStatus::too_large:
    throw Error(ErrorCode::bad_spec,
                "act=custom:" + custom.path + ": " + std::to_string(file.size) +
                    " bytes, over the limit of " +
                    std::to_string(codegen::kMaxCustomActivationBytes),
                "act", "keep the file to the function act and its helpers");
  case support::FileReadStatus::unreadable:
    throw Error(ErrorCode::bad_spec, "act=custom:" + custom.path + ": " + file.problem, "act",
                "check the file's permissions");
  }
  std::string text = std::move(file.text);
  CustomActivation loaded{custom.path, std::move(text)};
  if (std::string problem = codegen::custom_activation_problem(loaded); !problem.empty())
    throw Error(ErrorCode::bad_spec, problem, "act", fix);
  custom = std::move(loaded);
}

} // namespace tcjit
