#include "runtime/cuda/ptx_entry_params.h"

#include <cctype>
#include <charconv>

namespace tcjit::cuda {

namespace {

using device::DeviceError;
using device::ErrorKind;

// One token of a signature and the 1-based line it starts on.
struct Token {
  std::string_view text;
  int line = 1;
};

bool is_word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.' ||
         c == '%';
}

// Splits `ptx` into words and single punctuation characters, dropping comments.
std::vector<Token> tokenize(std::string_view ptx) {
  std::vector<Token> tokens;
  int line = 1;
  size_t i = 0;
  while (i < ptx.size()) {
    char c = ptx[i];
    if (c == '\n') {
      ++line;
      ++i;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
    } else if (ptx.compare(i, 2, "//") == 0) {
      while (i < ptx.size() && ptx[i] != '\n') {
        ++i;
      }
    } else if (ptx.compare(i, 2, "/*") == 0) {
      size_t end = ptx.find("*/", i + 2);
      end = end == std::string_view::npos ? ptx.size() : end + 2;
      for (size_t j = i; j < end; ++j) {
        line += ptx[j] == '\n';
      }
      i = end;
    } else if (c == '"') {
      size_t end = ptx.find('"', i + 1);
      end = end == std::string_view::npos ? ptx.size() : end + 1;
      tokens.push_back({ptx.substr(i, end - i), line});
      i = end;
    } else if (is_word_char(c)) {
      size_t end = i;
      while (end < ptx.size() && is_word_char(ptx[end])) {
        ++end;
      }
      tokens.push_back({ptx.substr(i, end - i), line});
      i = end;
    } else {
      tokens.push_back({ptx.substr(i, 1), line});
      ++i;
    }
  }
  return tokens;
}

// Size in bytes of a PTX fundamental type (".u64" → 8), 0 when `word` is not one.
uint32_t fundamental_type_size(std::string_view word) {
  if (word.size() < 3 || word[0] != '.') {
    return 0;
  }
  const char kind = word[1];
  if (kind != 'u' && kind != 's' && kind != 'b' && kind != 'f') {
    return 0;
  }
  std::string_view bits = word.substr(2);
  if (bits == "8")
    return 1;
  if (bits == "16")
    return 2;
  if (bits == "32")
    return 4;
  if (bits == "64")
    return 8;
  if (bits == "128" && kind == 'b')
    return 16;
  return 0;
}

std::optional<uint64_t> parse_number(std::string_view text) {
  uint64_t value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

uint32_t align_up(uint32_t value, uint32_t align) {
  return (value + align - 1) / align * align;
}

struct SignatureReader {
  const std::vector<Token> &tokens;
  size_t position;
  std::string_view source_name;

  [[noreturn]] void fail(const std::string &what) const {
    fail_at(position < tokens.size() ? tokens[position].line
                                     : (tokens.empty() ? 1 : tokens.back().line),
            what);
  }
  [[noreturn]] void fail_at(int line, const std::string &what) const {
    throw DeviceError(ErrorKind::ModuleLoad,
                      std::string(source_name) + ":" + std::to_string(line) + ": " + what);
  }
  bool at_end() const { return position >= tokens.size(); }
  std::string_view peek() const { return at_end() ? std::string_view() : tokens[position].text; }
  std::string_view next(const char *expected) {
    if (at_end()) {
      fail(std::string("unexpected end of PTX; expected ") + expected);
    }
    return tokens[position++].text;
  }

  // `.param <type> [.ptr .space .align N] name[M]`, after the `.param` token.
  device::ParamInfo read_param(const std::string &entry) {
    uint32_t element_size = 0;
    uint32_t declared_align = 0;
    bool pointer_attributes = false; // after .ptr, .space and .align describe the pointee
    std::string_view name;
    int name_line = 1;
    while (name.empty()) {
      std::string_view word = next("a parameter type or name");
      if (word == ".ptr") {
        pointer_attributes = true;
      } else if (word == ".align" && pointer_attributes) {
        next("an alignment");
      } else if (word == ".align") {
        std::optional<uint64_t> align = parse_number(next("an alignment"));
        if (!align || *align == 0 || (*align & (*align - 1)) != 0 || *align > 4096) {
          fail("bad .align in the parameters of '" + entry + "'");
        }
        declared_align = static_cast<uint32_t>(*align);
      } else if (uint32_t size = fundamental_type_size(word)) {
        element_size = size;
      } else if (word.starts_with(".")) {
        // .global/.shared/.const/.local after .ptr and other attributes: no effect on layout
      } else {
        name = word;
        name_line = tokens[position - 1].line;
      }
    }
    if (element_size == 0) {
      fail_at(name_line, "parameter '" + std::string(name) + "' of '" + entry + "' has no type");
    }
    uint64_t count = 1;
    if (peek() == "[") {
      ++position;
      std::optional<uint64_t> parsed = parse_number(next("an array size"));
      if (!parsed || *parsed == 0 || *parsed > (1u << 20)) {
        fail("bad array size for parameter '" + std::string(name) + "' of '" + entry + "'");
      }
      count = *parsed;
      if (next("']'") != "]") {
        fail("expected ']' after the array size of '" + std::string(name) + "'");
      }
    }
    device::ParamInfo param;
    param.name = std::string(name);
    param.size = static_cast<uint32_t>(element_size * count);
    param.align = declared_align ? declared_align : element_size;
    return param;
  }

  device::KernelInfo read_entry() {
    device::KernelInfo kernel;
    kernel.name = std::string(next("the kernel name"));
    if (peek() != "(") {
      return kernel; // `.entry name {` : no parameters
    }
    ++position;
    while (true) {
      std::string_view word = next("')'");
      if (word == ")") {
        break;
      }
      if (word == ",") {
        continue;
      }
      if (word != ".param") {
        fail("expected '.param' in the parameters of '" + kernel.name + "', found '" +
             std::string(word) + "'");
      }
      device::ParamInfo param = read_param(kernel.name);
      param.offset = align_up(kernel.param_bytes, param.align);
      kernel.param_bytes = param.offset + param.size;
      kernel.params.push_back(std::move(param));
    }
    return kernel;
  }
};

} // namespace

std::vector<device::KernelInfo> parse_ptx_entries(std::string_view ptx,
                                                  std::string_view source_name) {
  std::vector<Token> tokens = tokenize(ptx);
  std::vector<device::KernelInfo> kernels;
  int brace_depth = 0;
  for (size_t i = 0; i < tokens.size(); ++i) {
    std::string_view text = tokens[i].text;
    if (text == "{") {
      ++brace_depth;
    } else if (text == "}") {
      --brace_depth;
    } else if (text == ".entry" && brace_depth == 0) {
      SignatureReader reader{tokens, i + 1, source_name};
      kernels.push_back(reader.read_entry());
      i = reader.position - 1;
    }
  }
  return kernels;
}

std::optional<PtxVersion> parse_ptx_version(std::string_view ptx) {
  std::vector<Token> tokens = tokenize(ptx);
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    if (tokens[i].text != ".version") {
      continue;
    }
    std::string_view number = tokens[i + 1].text; // "8.0" is one word (dots are word chars)
    size_t dot = number.find('.');
    if (dot == std::string_view::npos) {
      return std::nullopt;
    }
    std::optional<uint64_t> major = parse_number(number.substr(0, dot));
    std::optional<uint64_t> minor = parse_number(number.substr(dot + 1));
    if (!major || !minor) {
      return std::nullopt;
    }
    return PtxVersion{static_cast<int>(*major), static_cast<int>(*minor)};
  }
  return std::nullopt;
}

std::optional<std::string> parse_ptx_target(std::string_view ptx) {
  std::vector<Token> tokens = tokenize(ptx);
  for (size_t i = 0; i + 1 < tokens.size(); ++i) {
    if (tokens[i].text == ".target") {
      return std::string(tokens[i + 1].text);
    }
  }
  return std::nullopt;
}

int minimum_driver_for_ptx_isa(PtxVersion version) {
  // PTX ISA → first CUDA release that reads it (PTX ISA manual, "PTX ISA release history").
  struct Row {
    int major, minor, driver;
  };
  static constexpr Row rows[] = {
      {7, 0, 11000}, {7, 1, 11010}, {7, 2, 11020}, {7, 3, 11030}, {7, 4, 11040},
      {7, 5, 11050}, {7, 6, 11060}, {7, 7, 11070}, {7, 8, 11080}, {8, 0, 12000},
      {8, 1, 12010}, {8, 2, 12020}, {8, 3, 12030}, {8, 4, 12040}, {8, 5, 12050},
      {8, 6, 12070}, {8, 7, 12080}, {8, 8, 12090}, {9, 0, 13000},
  };
  for (const Row &row : rows) {
    if (row.major == version.major && row.minor == version.minor) {
      return row.driver;
    }
  }
  return 0;
}

} // namespace tcjit::cuda
