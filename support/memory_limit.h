// The memory this process may use: the least of the machine's physical memory, the process's
// rlimits (RLIMIT_AS, RLIMIT_DATA, less what the process already uses of them) and its cgroup's
// memory limit (v2 memory.max, v1 memory.limit_in_bytes, the least over the cgroup and its
// parents). Checks that refuse work too large for the machine compare against this, and say
// which limit applied.
#pragma once

#include <string>

namespace tcjit::support {

// Each limit in bytes; 0 where there is none or it is unknown.
struct MemoryLimits {
  double physical = 0;
  double address_space = 0; // RLIMIT_AS (ulimit -v, prlimit --as) less the address space in use
  double data = 0;          // RLIMIT_DATA (prlimit --data) less the data segment in use
  double cgroup = 0;        // the cgroup's limit
};

struct EffectiveMemoryLimit {
  double bytes = 0;   // 0: no limit known
  std::string source; // e.g. "this machine's physical memory", "the process's address-space
                      // limit (RLIMIT_AS: ulimit -v, prlimit --as)"
};

// The least of the limits that are set, and its name.
EffectiveMemoryLimit effective_memory_limit(const MemoryLimits &limits);

// The limits of this process now.
MemoryLimits current_memory_limits();

// The limit in a cgroup file's text: memory.max's "max" or memory.limit_in_bytes's huge
// "9223372036854771712" is none (0); a number of bytes is that number. 0 for anything else.
double cgroup_limit_from_text(const std::string &text);

} // namespace tcjit::support
