#include "runtime/jit/entry_resources.h"

#include <algorithm>
#include <charconv>

namespace tcjit::jit {

namespace {

// The quoted name after `prefix` in `line` ("Compiling entry function 'k' for 'sm_80'").
std::string_view quoted_after(std::string_view line, std::string_view prefix) {
  const size_t at = line.find(prefix);
  if (at == std::string_view::npos)
    return {};
  const size_t open = line.find('\'', at + prefix.size());
  const size_t close = open == std::string_view::npos ? open : line.find('\'', open + 1);
  if (close == std::string_view::npos)
    return {};
  return line.substr(open + 1, close - open - 1);
}

// The number right before `suffix` in `line` ("224 registers" -> 224), or -1.
int number_before(std::string_view line, std::string_view suffix) {
  const size_t at = line.find(suffix);
  if (at == std::string_view::npos || at == 0)
    return -1;
  size_t end = at;
  while (end > 0 && line[end - 1] == ' ')
    --end;
  size_t begin = end;
  while (begin > 0 && line[begin - 1] >= '0' && line[begin - 1] <= '9')
    --begin;
  int value = -1;
  if (begin == end ||
      std::from_chars(line.data() + begin, line.data() + end, value).ec != std::errc{})
    return -1;
  return value;
}

} // namespace

std::vector<EntryResources> parse_ptxas_resources(std::string_view log) {
  std::vector<EntryResources> entries;
  std::string properties_for;
  EntryResources *compiling = nullptr;
  while (!log.empty()) {
    const size_t nl = log.find('\n');
    const std::string_view line = log.substr(0, nl);
    log = nl == std::string_view::npos ? std::string_view{} : log.substr(nl + 1);

    if (std::string_view name = quoted_after(line, "Compiling entry function"); !name.empty()) {
      entries.push_back({});
      entries.back().kernel = std::string(name);
      compiling = &entries.back();
      continue;
    }
    if (const size_t at = line.find("Function properties for "); at != std::string_view::npos) {
      properties_for = std::string(line.substr(at + 24));
      while (!properties_for.empty() &&
             (properties_for.back() == ' ' || properties_for.back() == '\r'))
        properties_for.pop_back();
      continue;
    }
    if (line.find("bytes stack frame") != std::string_view::npos) {
      for (EntryResources &e : entries) {
        if (e.kernel == properties_for) {
          e.stack_frame = std::max(0, number_before(line, "bytes stack frame"));
          e.spill_stores = std::max(0, number_before(line, "bytes spill stores"));
          e.spill_loads = std::max(0, number_before(line, "bytes spill loads"));
        }
      }
      continue;
    }
    if (compiling && line.find("Used ") != std::string_view::npos &&
        line.find(" registers") != std::string_view::npos) {
      compiling->registers = number_before(line, "registers");
      compiling->barriers = std::max(0, number_before(line, "barriers"));
      compiling->static_shared_bytes = std::max(0, number_before(line, "bytes smem"));
      compiling->constant_bytes = std::max(0, number_before(line, "bytes cmem[0]"));
    }
  }
  return entries;
}

const EntryResources *find_entry_resources(const std::vector<EntryResources> &all,
                                           std::string_view kernel) {
  for (const EntryResources &r : all)
    if (r.kernel == kernel)
      return &r;
  return nullptr;
}

} // namespace tcjit::jit
