// Compiled only by the architecture tests (tests/architecture/CMakeLists.txt), as a source of the
// layer its target links: an include of a higher layer must not be found.
#if defined(PLANTED_compiler_sees_tuner)
#include "tuner/tune.h" // layer 4, from layer 1
#elif defined(PLANTED_runtime_sees_compiler)
#include "compiler/spec/shape.h" // layer 1, from layer 2 (the runtime never sees an OpSpec)
#elif defined(PLANTED_compiler_sees_its_own)
#include "compiler/spec/shape.h" // allowed: the control case
#elif defined(PLANTED_cli_sees_engine)
#include "engine/kernel_records.h" // layer 3, from layer 6 (the CLI is a client of include/tcjit/)
#elif defined(PLANTED_cli_sees_public_api)
#include "cli/exit_codes.h" // allowed: the CLI's own headers
#include "tcjit/db.hpp"     // and the public API: the control case
#include "tcjit/tools.hpp"
#elif defined(PLANTED_python_sees_engine)
#include "engine/kernel_records.h" // layer 3, from layer 7 (the module is a client of libtcjit.so)
#elif defined(PLANTED_python_sees_public_api)
#include "cli/db_json.h"   // allowed: the CLI's JSON documents of the database
#include "tcjit/tcjit.hpp" // and the public API: the control case
#endif

int planted_include_marker() {
  return 0;
}
