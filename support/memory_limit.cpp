#include "support/memory_limit.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <sys/resource.h>
#include <unistd.h>

namespace tcjit::support {

namespace {

std::string first_line(const std::string &path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

double page_bytes() {
  const long page = sysconf(_SC_PAGE_SIZE);
  return page > 0 ? static_cast<double>(page) : 4096.0;
}

// /proc/self/statm: size resident shared text lib data dt, in pages.
void memory_in_use(double &address_space, double &data) {
  std::istringstream in(first_line("/proc/self/statm"));
  double size = 0, resident = 0, shared = 0, text = 0, lib = 0, data_pages = 0;
  if (in >> size >> resident >> shared >> text >> lib >> data_pages) {
    address_space = size * page_bytes();
    data = data_pages * page_bytes();
  }
}

// The rlimit's soft limit less what is in use; 0 when unlimited.
double rlimit_left(int resource, double in_use) {
  struct rlimit limit {};
  if (getrlimit(resource, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY)
    return 0;
  const double left = static_cast<double>(limit.rlim_cur) - in_use;
  return left > 1 ? left : 1; // set but exhausted: one byte, so the check refuses
}

// The least limit in `file` of the cgroup folder `dir` (under `root`) and its parents.
double cgroup_tree_limit(const std::string &root, std::string dir, const char *file) {
  double least = 0;
  for (;;) {
    const double limit = cgroup_limit_from_text(first_line(root + dir + "/" + file));
    if (limit > 0 && (least == 0 || limit < least))
      least = limit;
    if (dir.empty() || dir == "/")
      break;
    const size_t slash = dir.find_last_of('/');
    dir = slash == std::string::npos ? "" : dir.substr(0, slash);
  }
  return least;
}

// From /proc/self/cgroup: "0::/PATH" (v2) or "N:memory:/PATH" (v1).
double cgroup_memory_limit() {
  std::ifstream in("/proc/self/cgroup");
  double least = 0;
  const auto take = [&](double limit) {
    if (limit > 0 && (least == 0 || limit < least))
      least = limit;
  };
  for (std::string line; std::getline(in, line);) {
    const size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos)
      continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (line.compare(0, first, "0") == 0 && controllers.empty()) {
      take(cgroup_tree_limit("/sys/fs/cgroup", path, "memory.max"));
      take(cgroup_tree_limit("/sys/fs/cgroup/unified", path, "memory.max"));
    }
    std::istringstream names(controllers);
    for (std::string name; std::getline(names, name, ',');)
      if (name == "memory")
        take(cgroup_tree_limit("/sys/fs/cgroup/memory", path, "memory.limit_in_bytes"));
  }
  return least;
}

} // namespace

double cgroup_limit_from_text(const std::string &text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    return 0; // "max", or not a number
  const double value = std::stod(text);
  return value > 0 && value < 0x1p62 ? value : 0; // v1's "no limit" is about 2^63
}

EffectiveMemoryLimit effective_memory_limit(const MemoryLimits &limits) {
  EffectiveMemoryLimit least;
  const auto take = [&](double bytes, const char *source) {
    if (bytes > 0 && (least.bytes == 0 || bytes < least.bytes))
      least = {bytes, source};
  };
  take(limits.physical, "this machine's physical memory");
  take(limits.cgroup, "the memory limit of this process's cgroup (memory.max or "
                      "memory.limit_in_bytes: a container's or a job's limit)");
  take(limits.address_space, "what is left of this process's address-space limit (RLIMIT_AS: "
                             "ulimit -v, prlimit --as)");
  take(limits.data, "what is left of this process's data limit (RLIMIT_DATA: ulimit -d, prlimit "
                    "--data)");
  return least;
}

MemoryLimits current_memory_limits() {
  MemoryLimits limits;
  const long pages = sysconf(_SC_PHYS_PAGES);
  if (pages > 0)
    limits.physical = static_cast<double>(pages) * page_bytes();
  double address_space_used = 0, data_used = 0;
  memory_in_use(address_space_used, data_used);
  limits.address_space = rlimit_left(RLIMIT_AS, address_space_used);
  limits.data = rlimit_left(RLIMIT_DATA, data_used);
  limits.cgroup = cgroup_memory_limit();
  return limits;
}

} // namespace tcjit::support
