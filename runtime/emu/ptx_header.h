// The module header of a PTX file: `.version`, `.target` and `.address_size`, judged the way
// ptxas (CUDA 13) judges them. The parser collects the header (ptx_parser.cpp: where each
// directive may stand); check_ptx_header() checks the values: a PTX ISA version ptxas knows, each
// target a known architecture (or option) that the version supports, an address size of 64.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tcjit::emu {

struct PtxHeader {
  std::string version; // "8.0"
  int version_line = 0;
  struct TargetItem {
    std::string text; // "sm_80", "compute_90a", "texmode_unified"
    int line = 0;
    bool first_of_directive = false; // the first name after a `.target`
  };
  std::vector<TargetItem> targets; // every name of every `.target`, in order
};

// Throws DeviceError (ModuleLoad) "file:line: <ptxas's words>: <what the emulator found, how to
// fix it>" for a header ptxas refuses, or one whose architecture the emulator does not model
// (older than sm_80). Returns the architecture the module is compiled for, normalised to
// "sm_<N>[a|f]": the last architecture the `.target` directives name (as with ptxas).
std::string check_ptx_header(const PtxHeader &header, std::string_view source_name);

// 75 for "7.5", 0 when `version` is not MAJOR.MINOR or not a PTX ISA version ptxas (CUDA 13)
// knows.
int known_ptx_version(std::string_view version);

} // namespace tcjit::emu
