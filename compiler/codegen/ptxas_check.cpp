#include "compiler/codegen/ptxas_check.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <regex>
#include <stdexcept>
#include <unistd.h>

namespace tcjit::codegen {

std::string ptxas_path() {
  if (const char *env = std::getenv("TCJIT_PTXAS"); env && *env)
    return env;
  return TCJIT_PTXAS;
}

void parse_ptxas_log(std::string_view log, PtxasResult &r) {
  const std::string s(log);
  std::smatch m;
  if (std::regex_search(s, m, std::regex(R"(Used (\d+) registers)")))
    r.registers = std::stoi(m[1]);
  if (std::regex_search(s, m, std::regex(R"((\d+) bytes spill stores, (\d+) bytes spill loads)"))) {
    r.spill_stores = std::stoi(m[1]);
    r.spill_loads = std::stoi(m[2]);
  }
  if (std::regex_search(s, m, std::regex(R"((\d+) bytes stack frame)")))
    r.stack_frame = std::stoi(m[1]);
  if (std::regex_search(s, m, std::regex(R"((\d+) bytes smem)")))
    r.shared_bytes = std::stoi(m[1]);
  if (std::regex_search(s, m, std::regex(R"((\d+) bytes cmem\[0\])")))
    r.constant_bytes = std::stoi(m[1]);
}

PtxasResult run_ptxas(std::string_view ptx, std::string_view arch) {
  // A directory of its own per call (mkdtemp), so that concurrent calls never share a file.
  char dir_template[] = "/tmp/tcjit_ptxas_XXXXXX";
  if (!mkdtemp(dir_template))
    throw std::runtime_error("run_ptxas: cannot create a scratch directory in /tmp");
  const std::string dir = dir_template;
  const std::string in = dir + "/kernel.ptx", out = dir + "/kernel.cubin";
  {
    std::ofstream f(in, std::ios::binary);
    f << ptx;
    f.close();
    if (!f) {
      std::remove(in.c_str());
      rmdir(dir.c_str());
      throw std::runtime_error("run_ptxas: cannot write the scratch file " + in);
    }
  }
  const std::string cmd = "'" + ptxas_path() + "' -v -arch=" + std::string(arch) + " '" + in +
                          "' -o '" + out + "' 2>&1";
  PtxasResult r;
  FILE *p = popen(cmd.c_str(), "r");
  if (!p)
    throw std::runtime_error("run_ptxas: cannot run " + ptxas_path());
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0)
    r.log.append(buf, n);
  const int status = pclose(p);
  std::remove(in.c_str());
  std::remove(out.c_str());
  rmdir(dir.c_str());
  if (status == -1 || (WIFEXITED(status) && WEXITSTATUS(status) == 127))
    throw std::runtime_error("run_ptxas: cannot run " + ptxas_path() + " (set TCJIT_PTXAS)");
  r.ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
  parse_ptxas_log(r.log, r);
  return r;
}

} // namespace tcjit::codegen
