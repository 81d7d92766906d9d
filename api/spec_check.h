// The one check of a spec the API is given (validate_spec): every rule it breaks, as an Error.
#pragma once

#include "tcjit/tcjit.hpp"

namespace tcjit::api {

// Throws Error(bad_spec) at `where` ("prepare", "verify", ...) naming each field `spec` breaks
// and the rule; returns when the spec is valid.
void throw_if_invalid(const OpSpec &spec, const char *where);

} // namespace tcjit::api
