// Parses PTX text into an AstModule. Syntax errors and unsupported directives throw DeviceError
// (ModuleLoad) with "source:line: what".
#pragma once

#include <string_view>

#include "runtime/emu/ptx_ast.h"

namespace tcjit::emu {

AstModule parse_ptx(std::string_view text, std::string_view source_name);

} // namespace tcjit::emu
