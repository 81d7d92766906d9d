// Runs the `tcjit` binary in a shell for CLI tests and captures its exit code and output.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>

namespace tcjit::testing {

struct ToolResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string read_file(const std::filesystem::path &p) {
  std::ifstream f(p, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

constexpr uint16_t kElfMachineCuda = 190; // EM_CUDA

// e_machine of an ELF image (EM_CUDA for a cubin); 0 when `bytes` is not ELF.
inline uint16_t elf_machine(const std::string &bytes) {
  if (bytes.size() < 64 || bytes.compare(0, 4,
                                         "\x7f"
                                         "ELF") != 0)
    return 0;
  uint16_t value = 0;
  std::memcpy(&value, bytes.data() + 18, sizeof(value));
  return value;
}

// The SM of a cubin's ELF header (ABI version >= 8: e_flags bits 8-15, else bits 0-7).
inline int cubin_sm(const std::string &bytes) {
  uint32_t flags = 0;
  std::memcpy(&flags, bytes.data() + 48, sizeof(flags));
  return static_cast<uint8_t>(bytes[8]) >= 8 ? static_cast<int>((flags >> 8) & 0xff)
                                             : static_cast<int>(flags & 0xff);
}

// Single-quotes `s` for /bin/sh.
inline std::string shell_quote(const std::string &s) {
  std::string q = "'";
  for (char c : s)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs `TCJIT_TOOL <args>` (args already shell-quoted as needed), with `env` prefixed
// (e.g. "NVIDIA_TF32_OVERRIDE=0") and `stdin_text` fed to standard input.
inline ToolResult run_tool(const std::string &args, const std::string &env = "",
                           const std::string &stdin_text = "") {
  static int counter = 0;
  const auto dir =
      std::filesystem::temp_directory_path() /
      ("tcjit_cli_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
  std::filesystem::create_directories(dir);
  const auto in = dir / "stdin", out = dir / "stdout", err = dir / "stderr";
  std::ofstream(in, std::ios::binary) << stdin_text;
  const std::string cmd = env + (env.empty() ? "" : " ") + shell_quote(TCJIT_TOOL) + " " + args +
                          " <" + shell_quote(in) + " >" + shell_quote(out) + " 2>" +
                          shell_quote(err);
  const int status = std::system(cmd.c_str());
  ToolResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_file(out);
  r.err = read_file(err);
  std::filesystem::remove_all(dir);
  return r;
}

} // namespace tcjit::testing
