// escape_controls of include/tcjit/tools.hpp: support's one escaping of a file's text, for the CLI
// (which sees only include/tcjit/).
#include "tcjit/tools.hpp"

#include "support/escape_controls.h"

namespace tcjit {

std::string escape_controls(std::string_view text) {
  return support::escape_controls(text);
}

std::string escape_controls_keep_lines(std::string_view text) {
  return support::escape_controls_keep_lines(text);
}

} // namespace tcjit
