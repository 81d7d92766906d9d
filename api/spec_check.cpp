#include "api/spec_check.h"

#include "compiler/codegen/plan/tile_config.h"
#include "compiler/spec/validate.h"

namespace tcjit::api {

void throw_if_invalid(const OpSpec &spec, const char *where) {
  if (spec.epilogue.act == Activation::custom && spec.epilogue.custom.source.empty())
    throw Error(ErrorCode::bad_spec,
                "act=custom:" + spec.epilogue.custom.path + ": the spec holds no source text",
                where,
                "read the file into the spec with tcjit::load_custom_activation (parse_ops does)");
  const std::vector<SpecError> errors = validate_spec(spec);
  if (errors.empty())
    return;
  std::string text;
  for (const SpecError &e : errors)
    text += "\n  " + (e.key.empty() ? std::string("operation") : e.key) + ": " + e.message;
  throw Error(ErrorCode::bad_spec, "the spec is not valid:" + text, where,
              "correct the fields named");
}

void throw_if_unsupported(const OpSpec &spec, const std::string &arch, bool tf32_off,
                          const char *where) {
  std::string text;
  for (const codegen::ConfigError &e : codegen::check_codegen_support(spec, arch, tf32_off))
    if (e.field != "act")
      text += "\n  " + e.field + ": " + e.message;
  if (text.empty())
    return;
  throw Error(ErrorCode::unsupported, "tcjit has no kernel for this spec on " + arch + ":" + text,
              where, "change the spec as the message says");
}

} // namespace tcjit::api
