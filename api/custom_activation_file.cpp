// load_custom_activation of include/tcjit/tools.hpp: the file of an act=custom spec, read once
// into the spec (what the kernel and its cache keys depend on is the text, not the path).
#include "tcjit/tools.hpp"

#include "compiler/codegen/plan/custom_activation.h"

#include <filesystem>
#include <fstream>
#include <iterator>

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
  const fs::file_status status = fs::status(path, ec);
  if (ec || !fs::exists(status))
    throw Error(ErrorCode::bad_spec,
                "act=custom:" + custom.path + ": no such file (looked for " +
                    fs::absolute(path, ec).string() + ")",
                "act", fix);
  if (!fs::is_regular_file(status))
    throw Error(ErrorCode::bad_spec,
                "act=custom:" + custom.path + ": " + path.string() + " is not a regular file",
                "act", fix);
  const uintmax_t size = fs::file_size(path, ec);
  if (!ec && size > codegen::kMaxCustomActivationBytes)
    throw Error(ErrorCode::bad_spec,
                "act=custom:" + custom.path + ": " + std::to_string(size) +
                    " bytes, over the limit of " +
                    std::to_string(codegen::kMaxCustomActivationBytes),
                "act", "keep the file to the function act and its helpers");
  std::ifstream in(path, std::ios::binary);
  std::string text;
  if (in)
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (!in && !in.eof())
    throw Error(ErrorCode::bad_spec,
                "act=custom:" + custom.path + ": " + path.string() + " cannot be read", "act",
                "check the file's permissions");
  CustomActivation loaded{custom.path, std::move(text)};
  if (std::string problem = codegen::custom_activation_problem(loaded); !problem.empty())
    throw Error(ErrorCode::bad_spec, problem, "act", fix);
  custom = std::move(loaded);
}

} // namespace tcjit
