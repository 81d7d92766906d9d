// parse_ops, canonical_text and the arch names of include/tcjit/tools.hpp: the DSL front end as
// the API offers it.
#include "tcjit/tools.hpp"

#include "compiler/dsl/parser.h"
#include "compiler/spec/printer.h"
#include "compiler/target/arch.h"

#include <filesystem>

namespace tcjit {

std::string entry_label(const WorkloadEntry &entry) {
  return entry.name.empty() ? "line " + std::to_string(entry.line) : entry.name;
}

std::vector<WorkloadEntry> parse_ops(std::string_view text, std::string_view source_name) {
  const ParseResult parsed = parse_workload(text, source_name);
  if (!parsed.ok()) {
    std::string rendered;
    for (const Diagnostic &d : parsed.errors)
      rendered += d.render();
    throw Error(ErrorCode::bad_spec, rendered, "parse",
                "correct the text as the diagnostics say (the DSL: docs/dsl.md)");
  }
  if (parsed.entries.empty())
    throw Error(ErrorCode::bad_spec, std::string(source_name) + " holds no operation", "parse",
                "write one spec (\"gemm m=... n=... k=...\") or a workload of them");
  // act=custom files: relative to the workload file's folder, or to the current directory.
  std::error_code ec;
  const std::filesystem::path source(source_name);
  const std::string base_dir =
      std::filesystem::is_regular_file(source, ec) ? source.parent_path().string() : "";
  std::vector<WorkloadEntry> entries = parsed.entries;
  for (WorkloadEntry &entry : entries)
    load_custom_activation(entry.spec, base_dir);
  return entries;
}

std::string canonical_text(const OpSpec &spec) {
  return print_spec(spec);
}

std::string target_arch_names() {
  return std::string(known_arch_list());
}

bool is_target_arch(std::string_view arch) {
  return find_arch(arch).has_value();
}

} // namespace tcjit
