#include "api/served_kernel_error.h"

namespace tcjit::api {

Error served_kernel_error(const engine::ServedKernel &served, const std::string &where,
                          ErrorCode refused, const std::string &miss_fix) {
  std::string text;
  for (const std::string &e : served.errors)
    text += (text.empty() ? "" : "\n") + e;
  if (served.internal_error)
    return Error(ErrorCode::internal, text, where,
                 "report it with the spec (a bug in tcjit's code generator)");
  if (served.missed)
    return Error(ErrorCode::not_found, text, where, miss_fix);
  const char *spec_fix = "change the spec as the message says";
  if (served.user_code_error)
    return Error(ErrorCode::bad_spec, text, where, spec_fix);
  return Error(refused, text, where, spec_fix);
}

} // namespace tcjit::api
