// The C API's words for what the C++ API's messages name: an Error raised inside tcjit::Runtime or
// tcjit::Operation says RuntimeOptions::db_path or MissPolicy::fail; a C caller reads
// tcjit_runtime_options.db_path or TCJIT_MISS_FAIL (include/tcjit/tcjit.h). Launches name their
// parameters themselves (api::LaunchVocabulary).
#pragma once

#include "tcjit/tcjit.hpp"

#include <string>

namespace tcjit::api {

// `text` with every C++ API name replaced by its C counterpart.
std::string in_c_words(std::string text);

// The message of `e` as a C caller reads it: "tcjit: FUNCTION: WHAT" (plus "how to fix: ..."), in
// C words, `function` being the C function that was called.
std::string c_error_message(const Error &e, const char *function);

} // namespace tcjit::api
