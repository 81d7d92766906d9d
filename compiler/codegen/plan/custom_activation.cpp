#include "compiler/codegen/plan/custom_activation.h"

#include <cctype>
#include <cstdio>
#include <sstream>

namespace tcjit::codegen {

namespace {

// `path` as a C string literal's contents (for #line).
std::string escaped(std::string_view path) {
  std::string out;
  for (const char ch : path) {
    if (ch == '"' || ch == '\\')
      out += '\\';
    out += ch;
  }
  return out;
}

int count_lines(std::string_view text) {
  int n = 0;
  for (const char ch : text)
    n += ch == '\n';
  return n;
}

// The first non-blank characters of a line, past a '#' and blanks: "include" for "  #  include".
bool is_include_line(std::string_view line) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string_view::npos || line[i] != '#')
    return false;
  i = line.find_first_not_of(" \t", i + 1);
  return i != std::string_view::npos && line.substr(i).starts_with("include");
}

// NAME of a line "#define NAME..." (blanks allowed around '#'), else "".
std::string defined_macro(std::string_view line) {
  size_t i = line.find_first_not_of(" \t");
  if (i == std::string_view::npos || line[i] != '#')
    return "";
  i = line.find_first_not_of(" \t", i + 1);
  if (i == std::string_view::npos || !line.substr(i).starts_with("define"))
    return "";
  i = line.find_first_not_of(" \t", i + 6);
  if (i == std::string_view::npos)
    return "";
  size_t end = i;
  while (end < line.size() &&
         (std::isalnum(static_cast<unsigned char>(line[end])) || line[end] == '_'))
    ++end;
  return std::string(line.substr(i, end - i));
}

} // namespace

std::string custom_activation_problem(const CustomActivation &custom) {
  const std::string &file = custom.path.empty() ? std::string("act=custom") : custom.path;
  if (custom.source.empty())
    return file +
           ": the file is empty or was not read: it must define __device__ float act(float x)";
  if (custom.source.size() > kMaxCustomActivationBytes)
    return file + ": " + std::to_string(custom.source.size()) + " bytes, over the limit of " +
           std::to_string(kMaxCustomActivationBytes) +
           " for a custom activation: keep it to the function act and its helpers";
  std::string problems;
  int line = 1;
  size_t start = 0;
  for (size_t i = 0; i <= custom.source.size(); ++i) {
    if (i < custom.source.size() && custom.source[i] != '\n') {
      const auto byte = static_cast<unsigned char>(custom.source[i]);
      if ((byte < 0x20 && byte != '\t' && byte != '\r' && byte != '\f') || byte == 0x7f) {
        char hex[8];
        std::snprintf(hex, sizeof hex, "0x%02x", byte);
        return file + ":" + std::to_string(line) + ": byte " + hex +
               " is not text: a custom activation is CUDA C++ source";
      }
      continue;
    }
    const std::string_view text(custom.source.data() + start, i - start);
    if (is_include_line(text))
      problems += file + ":" + std::to_string(line) +
                  ": #include is not available: the kernel is compiled without headers (math "
                  "functions such as expf, tanhf, __expf and fmaxf are built in)\n";
    ++line;
    start = i + 1;
  }
  if (!problems.empty())
    problems.pop_back();
  return problems;
}

std::string embed_custom_activation(const CustomActivation &custom, int next_line,
                                    std::string_view file_name) {
  std::string out = "// act=custom:" + custom.path + " (the user's text, lines as in the file)\n";
  out += "namespace " + std::string(kCustomActivationNamespace) + " {\n";
  out += "#line 1 \"" + escaped(custom.path) + "\"\n";
  out += custom.source;
  if (!custom.source.ends_with('\n'))
    out += '\n';
  // A blank line ends a trailing backslash continuation; the user's macros end with the text, so
  // that `#define K 4` cannot rename the kernel's parameter K.
  out += '\n';
  std::istringstream lines(custom.source);
  for (std::string line; std::getline(lines, line);)
    if (const std::string name = defined_macro(line); !name.empty())
      out += "#undef " + name + "\n";
  // The lines above take next_line .. next_line + n - 1 of the generated file: resume after them.
  const int resume = next_line + count_lines(out) + 1;
  out += "#line " + std::to_string(resume) + " \"" + escaped(file_name) + "\"\n";
  out += "} // namespace " + std::string(kCustomActivationNamespace) + "\n";
  return out;
}

std::string custom_activation_kernel_source(const CustomActivation &custom, DType epi) {
  const std::string T = epi == DType::f64 ? "double" : "float";
  std::string out = "// The custom activation alone: y[i] = act(x[i]) (tcjit's check and reference "
                    "of act=custom:" +
                    custom.path + ")\n";
  out += embed_custom_activation(custom, count_lines(out) + 1, kCustomActivationCheckFile);
  out += "extern \"C\" __global__ void " + std::string(kCustomActivationKernel) + "(const " + T +
         " *x, " + T + " *y, int n) {\n" + "  const int i = blockIdx.x * " +
         std::to_string(kCustomActivationThreads) + " + threadIdx.x;\n" + "  if (i < n)\n" +
         "    y[i] = " + kCustomActivationNamespace + "::act(x[i]);\n}\n";
  return out;
}

} // namespace tcjit::codegen
