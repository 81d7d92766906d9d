// `tcjit resolve`: a client of tcjit::resolve_op (include/tcjit/tools.hpp), for each operation of
// a workload: what an application preparing it gets. Read-only.
#include "cli/resolve_command.h"
#include "cli/json_text.h"

#include "cli/db_path_option.h"
#include "cli/exit_codes.h"
#include "cli/spec_input.h"
#include "tcjit/db.hpp"
#include "tcjit/tools.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

namespace tcjit::cli {

namespace {

struct ResolveOptions {
  std::string spec;
  std::string db_path; // "" = default
  std::string arch = "sm_80";
  std::string backend = "llvm";
  bool json = false;
};

int run_resolve(const ResolveOptions &opt) {
  if (!is_target_arch(opt.arch)) {
    std::cerr << "tcjit resolve: error: unknown arch '" << opt.arch << "' (tcjit targets "
              << target_arch_names() << ")\n";
    return kExitUsage;
  }
  std::vector<WorkloadEntry> entries;
  if (const int status = load_workload(opt.spec, entries); status != kExitOk)
    return status;
  ResolveRequest request;
  request.db_path = opt.db_path;
  // A calibration file of an older tcjit beside the database is no longer read: said once.
  if (const std::string note = db_calibration_side_file_note(opt.db_path); !note.empty())
    std::cerr << "tcjit resolve: note: " << escape_controls(note) << "\n";
  request.arch = opt.arch;
  request.backend = opt.backend;
  nlohmann::json all = nlohmann::json::array();
  bool first = true;
  for (const WorkloadEntry &entry : entries) {
    Resolution r;
    try {
      r = resolve_op(entry.spec, request);
    } catch (const Error &error) {
      print_error("tcjit resolve", error);
      return exit_status_of(error);
    }
    if (opt.json) {
      nlohmann::json j = nlohmann::json::parse(r.json);
      if (!entry.name.empty())
        j["name"] = entry.name;
      all.push_back(std::move(j));
      continue;
    }
    if (!first)
      std::cout << "\n";
    first = false;
    if (!entry.name.empty() || entries.size() > 1)
      std::cout << "== " << entry_label(entry) << "\n";
    std::cout << escape_controls_keep_lines(r.text);
  }
  if (opt.json)
    std::cout << json_text(all, 2) << "\n"; // any bytes: invalid UTF-8 replaced
  return kExitOk;
}

} // namespace

void add_resolve_command(CLI::App &app) {
  auto opt = std::make_shared<ResolveOptions>();
  CLI::App *cmd = app.add_subcommand(
      "resolve", "Say what an application preparing a spec gets from the kernel database: the "
                 "config (per size bucket for ranges), tuned or heuristic, its time, the kernel's "
                 "identity and whether its binary is stored. Read-only: compiles nothing");
  cmd->add_option("spec", opt->spec,
                  "DSL text (\"gemm m=... \"), a workload file, or - for standard input")
      ->required();
  cmd->add_option("--db", opt->db_path,
                  "kernel database (default: $TCJIT_DB, else $XDG_CACHE_HOME/tcjit/kernels.db)")
      ->check(non_empty_db_path());
  cmd->add_option("--arch", opt->arch,
                  "the arch the application's runtime compiles for: " + target_arch_names())
      ->capture_default_str();
  cmd->add_option("--backend", opt->backend, "llvm or nvrtc: the runtime's backend")
      ->check(CLI::IsMember({"llvm", "nvrtc"}))
      ->capture_default_str();
  cmd->add_flag("--json", opt->json, "print JSON for scripts");
  cmd->footer("Example: tcjit resolve \"gemm m=? n=512 k=512 a=f16 b=f16:col\" --db kernels.db");
  cmd->callback([opt]() { throw CLI::RuntimeError(run_resolve(*opt)); });
}

} // namespace tcjit::cli
