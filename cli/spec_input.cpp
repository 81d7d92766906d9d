#include "cli/spec_input.h"
#include "cli/exit_codes.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>

namespace tcjit::cli {

namespace {

bool looks_like_spec(const std::string &s) {
  if (s.find('=') != std::string::npos)
    return true;
  for (const char *op : {"gemm", "conv2d", "conv3d"})
    if (s.rfind(op, 0) == 0)
      return true;
  return false;
}

} // namespace

SpecInput read_spec_input(const std::string &arg) {
  SpecInput in;
  if (arg == "-") {
    in.source_name = "<stdin>";
    in.text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    if (std::cin.bad())
      in.error = "could not read standard input";
    return in;
  }
  std::error_code ec;
  if (std::filesystem::is_regular_file(arg, ec)) {
    in.source_name = arg;
    std::ifstream f(arg, std::ios::binary);
    if (!f) {
      in.error = "cannot open '" + arg + "' for reading";
      return in;
    }
    std::ostringstream ss;
    ss << f.rdbuf();
    in.text = ss.str();
    return in;
  }
  if (looks_like_spec(arg)) {
    in.source_name = "<command line>";
    in.text = arg;
    return in;
  }
  in.error = "'" + arg +
             "' is neither a readable file nor a spec (a spec looks like \"gemm m=128 n=128 k=64 "
             "a=f16:row b=f16:col\"; use - to read standard input)";
  return in;
}

int load_workload(const std::string &arg, std::vector<WorkloadEntry> &out) {
  const SpecInput in = read_spec_input(arg);
  if (!in.error.empty()) {
    std::cerr << "tcjit: error: " << escape_controls(in.error) << "\n";
    return kExitBadSpec;
  }
  try {
    out = parse_ops(in.text, in.source_name);
  } catch (const Error &e) {
    // the rendered diagnostics as they are, or the one sentence
    if (e.where() == "parse" && e.problem().find('\n') != std::string::npos) {
      std::cerr << escape_controls_keep_lines(e.problem());
      return kExitBadSpec;
    }
    print_error("tcjit", e);
    return e.code() == ErrorCode::invalid_argument ? kExitUsage : kExitBadSpec;
  }
  return kExitOk;
}

void print_error(const char *command, const Error &error, bool with_fix) {
  std::istringstream lines(error.problem());
  for (std::string line; std::getline(lines, line);)
    std::cerr << command << ": error: " << escape_controls(line) << "\n";
  if (with_fix && !error.how_to_fix().empty())
    std::cerr << command << ": how to fix: " << escape_controls(error.how_to_fix()) << "\n";
}

int exit_status_of(const Error &error) {
  switch (error.code()) {
  case ErrorCode::bad_spec: return kExitBadSpec;
  case ErrorCode::invalid_argument: return kExitUsage;
  case ErrorCode::not_found:
  case ErrorCode::unsupported:
  case ErrorCode::device:
  case ErrorCode::database:
  case ErrorCode::internal: return kExitFailure;
  }
  return kExitFailure;
}

} // namespace tcjit::cli
