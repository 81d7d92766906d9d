#include "api/c_vocabulary.h"

#include <string_view>
#include <utility>

namespace tcjit::api {

namespace {

// C++ name -> C name. Longer names first where one is a prefix of another.
constexpr std::pair<std::string_view, std::string_view> kCWords[] = {
    {"RuntimeOptions::db_path", "tcjit_runtime_options.db_path"},
    {"RuntimeOptions::device", "tcjit_runtime_options.device"},
    {"RuntimeOptions::arch", "tcjit_runtime_options.arch"},
    {"RuntimeOptions::on_miss", "tcjit_runtime_options.on_miss"},
    {"RuntimeOptions::backend", "the backend of tcjit_runtime_open_with_backend"},
    {"set use_database = false", "set tcjit_runtime_options.no_database = 1"},
    {"MissPolicy::heuristic", "TCJIT_MISS_HEURISTIC"},
    {"MissPolicy::fail", "TCJIT_MISS_FAIL"},
    {"MissPolicy::tune", "TCJIT_MISS_TUNE"},
    {"MissPolicy::background", "TCJIT_MISS_BACKGROUND"},
    {"a MissPolicy other than fail", "an on_miss other than TCJIT_MISS_FAIL"},
    {"Runtime::allocate", "tcjit_malloc"},
    {"Operation::config_for", "tcjit_operation_config_for"},
    {"with GemmArgs", "with tcjit_launch_gemm or tcjit_launch_gemm_sized"},
    {"with ConvArgs", "with tcjit_launch_conv"},
};

// What the C++ API calls the place of an error (Error::where) -> the C function, when the C
// caller did not call a function of that name (tcjit_prepare's errors are "prepare"'s).
bool is_cxx_place(std::string_view where) {
  return where == "Runtime" || where == "prepare" || where == "allocate" || where == "free" ||
         where == "copy_to_device" || where == "copy_to_host" || where == "launch" ||
         where == "config_for";
}

} // namespace

std::string in_c_words(std::string text) {
  for (const auto &[cxx, c] : kCWords)
    for (size_t at = text.find(cxx); at != std::string::npos; at = text.find(cxx, at + c.size()))
      text.replace(at, cxx.size(), c);
  return text;
}

std::string c_error_message(const Error &e, const char *function) {
  const std::string where = is_cxx_place(e.where()) ? std::string(function) : e.where();
  std::string text = "tcjit: " + where + ": " + in_c_words(e.problem());
  if (!e.how_to_fix().empty())
    text += "\nhow to fix: " + in_c_words(e.how_to_fix());
  return text;
}

} // namespace tcjit::api
