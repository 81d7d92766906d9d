// The one check of a spec the API is given (validate_spec): every rule it breaks, as an Error.
#pragma once

#include "tcjit/tcjit.hpp"

#include <string>

namespace tcjit::api {

// Throws Error(bad_spec) at `where` ("prepare", "verify", ...) naming each field `spec` breaks
// and the rule; returns when the spec is valid.
void throw_if_invalid(const OpSpec &spec, const char *where);

// Throws Error(unsupported) at `where` when `spec` is valid but tcjit's code generator has no
// kernel for it on `arch` (a channels-first layout, a math the arch lacks...): what
// codegen::check_codegen_support says, but for act=custom's own problems (the user's code: the
// compile reports them as bad_spec).
void throw_if_unsupported(const OpSpec &spec, const std::string &arch, bool tf32_off,
                          const char *where);

} // namespace tcjit::api
