#include "api/spec_check.h"

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

} // namespace tcjit::api
