#include "runtime/emu/ptx_header.h"

#include <cstdint>

#include "runtime/emu/ptx_error.h"

namespace tcjit::emu {

namespace {

// The PTX ISA versions ptxas (CUDA 13) reads, as MAJOR*10+MINOR (found by running it on each
// MAJOR.MINOR: the others are "Unsupported .version").
constexpr int kKnownVersions[] = {10, 11, 12, 13, 14, 15, 20, 21, 22, 23, 30, 31, 32, 40, 41,
                                  42, 43, 50, 51, 60, 61, 62, 63, 64, 65, 70, 71, 72, 73, 74,
                                  75, 76, 77, 78, 80, 81, 82, 83, 84, 85, 86, 87, 88, 90};
constexpr int kNewestVersion = 90;

// The architectures ptxas (CUDA 13) knows as a .target, with the oldest PTX ISA version that
// supports each ("PTX .version X does not support .target Y" below it), and whether ptxas can
// generate code for it (-arch): the emulator models those of sm_80 and newer.
struct KnownTarget {
  int sm;
  char suffix; // 0, 'a' or 'f'
  int min_version;
  bool has_arch;
};
constexpr KnownTarget kKnownTargets[] = {
    {10, 0, 10, false},    {11, 0, 10, false},   {12, 0, 12, false},   {13, 0, 12, false},
    {20, 0, 20, false},    {21, 0, 20, false},   {30, 0, 30, false},   {32, 0, 40, false},
    {35, 0, 31, false},    {37, 0, 41, false},   {50, 0, 40, false},   {52, 0, 41, false},
    {53, 0, 42, false},    {60, 0, 50, false},   {61, 0, 50, false},   {62, 0, 50, false},
    {70, 0, 51, false},    {72, 0, 61, false},   {75, 0, 63, true},    {80, 0, 70, true},
    {82, 0, 62, false},    {86, 0, 71, true},    {87, 0, 74, true},    {88, 0, 73, true},
    {89, 0, 78, true},     {90, 0, 78, true},    {90, 'a', 80, true},  {100, 0, 86, true},
    {100, 'a', 86, true},  {100, 'f', 88, true}, {101, 0, 86, false},  {101, 'a', 86, false},
    {101, 'f', 88, false}, {103, 0, 88, true},   {103, 'a', 88, true}, {103, 'f', 88, true},
    {110, 0, 90, true},    {110, 'a', 90, true}, {110, 'f', 90, true}, {120, 0, 87, true},
    {120, 'a', 87, true},  {120, 'f', 88, true}, {121, 0, 88, true},   {121, 'a', 88, true},
    {121, 'f', 88, true},
};

std::string version_text(int v) {
  return std::to_string(v / 10) + "." + std::to_string(v % 10);
}

struct ParsedTarget {
  bool arch_like = false; // sm_... or compute_...
  const KnownTarget *known = nullptr;
  std::string normalised; // "sm_90a"
};

ParsedTarget parse_target(std::string_view t) {
  ParsedTarget p;
  std::string_view rest;
  if (t.substr(0, 3) == "sm_") {
    rest = t.substr(3);
  } else if (t.substr(0, 8) == "compute_") {
    rest = t.substr(8);
  } else {
    return p;
  }
  p.arch_like = true;
  size_t digits = 0;
  uint64_t sm = 0;
  while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9') {
    sm = sm > 100000 ? sm : sm * 10 + static_cast<uint64_t>(rest[digits] - '0');
    ++digits;
  }
  const std::string_view suffix = rest.substr(digits);
  if (digits == 0 || suffix.size() > 1 || (suffix.size() == 1 && suffix != "a" && suffix != "f"))
    return p;
  const char s = suffix.empty() ? 0 : suffix[0];
  for (const KnownTarget &k : kKnownTargets) {
    if (static_cast<uint64_t>(k.sm) == sm && k.suffix == s) {
      p.known = &k;
      p.normalised = "sm_" + std::to_string(k.sm) + (s ? std::string(1, s) : std::string());
    }
  }
  return p;
}

bool is_target_option(const std::string &t) {
  return t == "texmode_unified" || t == "texmode_independent" || t == "debug" ||
         t == "map_f64_to_f32";
}

const char *kKnownArchList = "sm_75, sm_80, sm_86, sm_87, sm_88, sm_89, sm_90, sm_90a, sm_100, "
                             "sm_103, sm_110, sm_120, sm_121 (and their a/f variants)";

} // namespace

int known_ptx_version(std::string_view version) {
  const size_t dot = version.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == version.size())
    return 0;
  int major = 0, minor = 0;
  for (size_t i = 0; i < version.size(); ++i) {
    if (i == dot)
      continue;
    const char c = version[i];
    if (c < '0' || c > '9')
      return 0;
    int &part = i < dot ? major : minor;
    part = part > 1000 ? part : part * 10 + (c - '0');
  }
  if (minor > 9)
    return 0;
  for (int v : kKnownVersions) {
    if (v == major * 10 + minor)
      return v;
  }
  return 0;
}

std::string check_ptx_header(const PtxHeader &h, std::string_view source_name) {
  const int version = known_ptx_version(h.version);
  if (version == 0)
    throw_load_error(source_name, h.version_line,
                     "Unsupported .version " + h.version + "; current version is '" +
                         version_text(kNewestVersion) + "': ptxas (CUDA 13) reads PTX ISA 1.0 to " +
                         version_text(kNewestVersion) +
                         "; write a version it knows (sm_80 needs .version 7.0 or later)");
  std::string arch;
  int arch_line = 0;
  std::string texmode; // texmode_unified or texmode_independent, once named
  for (const PtxHeader::TargetItem &item : h.targets) {
    const ParsedTarget p = parse_target(item.text);
    if (item.first_of_directive && !p.arch_like)
      throw_load_error(source_name, item.line,
                       "Target architecture not defined at start of file: '.target " + item.text +
                           "' names no architecture first; write the GPU architecture first, "
                           "e.g. '.target sm_80'");
    if (!p.arch_like && is_target_option(item.text)) {
      if (item.text == "debug")
        continue; // the parser checks that the module has its debug sections
      if (item.text == "map_f64_to_f32")
        throw_load_error(source_name, item.line,
                         "Directive map_f64_to_f32 is not supported with SM 1.3 or higher: "
                         "remove it from the .target");
      if (!texmode.empty() && texmode != item.text)
        throw_load_error(source_name, item.line,
                         "Conflicting .target option '" + item.text +
                             "': the .target already "
                             "says " +
                             texmode + "; keep one of them");
      texmode = item.text;
      continue;
    }
    if (!p.known)
      throw_load_error(source_name, item.line,
                       "Unsupported .target '" + item.text +
                           "': not an architecture ptxas (CUDA 13) knows; write one of " +
                           kKnownArchList + ", or a target option (texmode_unified)");
    if (version < p.known->min_version)
      throw_load_error(source_name, item.line,
                       "PTX .version " + h.version + " does not support .target " + item.text +
                           ": " + p.normalised + " needs .version " +
                           version_text(p.known->min_version) +
                           " or later; raise the .version or target an older architecture");
    arch = p.normalised;
    arch_line = item.line;
  }
  const ParsedTarget p = parse_target(arch);
  if (p.known && p.known->sm < 80)
    throw_load_error(source_name, arch_line,
                     "unsupported .target " + arch +
                         ": the emulator models sm_80 and newer architectures (the feature limits "
                         "of older ones are not checked); target sm_80 or newer");
  if (p.known && !p.known->has_arch)
    throw_load_error(source_name, arch_line,
                     "unsupported .target " + arch + ": ptxas has no -arch=" + arch +
                         ", so the emulator models no GPU of it; write one of " + kKnownArchList);
  return arch;
}

} // namespace tcjit::emu
