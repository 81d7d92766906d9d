// Errors raised while loading PTX: "kernel.ptx:123: unsupported instruction 'tex.2d'".
#pragma once

#include <string>
#include <string_view>

#include "runtime/device/device.h"

namespace tcjit::emu {

[[noreturn]] void throw_load_error(std::string_view source_name, int line, const std::string &what);

} // namespace tcjit::emu
