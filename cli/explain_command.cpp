// `tcjit explain`: a client of tcjit::explain_op (include/tcjit/tools.hpp), for each operation of
// a workload.
#include "cli/explain_command.h"
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

struct ExplainOptions {
  std::string spec;
  std::string arch = "sm_80";
  std::string db_path; // "" = default
  std::string config;  // "" = the default chooser's
  bool json = false;
};

int run_explain(const ExplainOptions &opt) {
  if (!is_target_arch(opt.arch)) {
    std::cerr << "tcjit explain: error: unknown arch '" << opt.arch << "' (tcjit targets "
              << target_arch_names() << ")\n";
    return kExitUsage;
  }
  std::vector<WorkloadEntry> entries;
  if (const int status = load_workload(opt.spec, entries); status != kExitOk)
    return status;
  ExplainRequest request;
  request.arch = opt.arch;
  request.db_path = opt.db_path;
  request.config = opt.config;
  // A calibration file of an older tcjit beside the database is no longer read: said once.
  if (const std::string note = db_calibration_side_file_note(opt.db_path); !note.empty())
    std::cerr << "tcjit explain: note: " << escape_controls(note) << "\n";
  nlohmann::json all = nlohmann::json::array();
  bool first = true;
  for (const WorkloadEntry &entry : entries) {
    OpExplanation e;
    try {
      e = explain_op(entry, request);
    } catch (const Error &error) {
      print_error("tcjit explain", error);
      return exit_status_of(error);
    }
    if (opt.json) {
      all.push_back(nlohmann::json::parse(e.json));
      continue;
    }
    if (!first)
      std::cout << "\n";
    first = false;
    if (!entry.name.empty() || entries.size() > 1)
      std::cout << "== " << entry_label(entry) << " (weight " << entry.weight << ")\n";
    std::cout << e.text;
  }
  if (opt.json)
    std::cout << json_text(all, 2) << "\n"; // any bytes: invalid UTF-8 replaced
  return kExitOk;
}

} // namespace

void add_explain_command(CLI::App &app) {
  auto opt = std::make_shared<ExplainOptions>();
  CLI::App *cmd = app.add_subcommand(
      "explain", "Explain a spec: implicit-GEMM shape, FLOPs and bytes, alignment, tensor-core "
                 "instruction, and the tensor-core rules it breaks with their fixes");
  cmd->add_option("spec", opt->spec,
                  "DSL text (\"gemm m=... \"), a workload file, or - for standard input")
      ->required();
  cmd->add_option("--arch", opt->arch, "target architecture: " + target_arch_names())
      ->capture_default_str();
  cmd->add_option("--db", opt->db_path,
                  "database whose calibration (tcjit calibrate) the prediction uses (default: "
                  "$TCJIT_DB, else ~/.cache/tcjit/kernels.db)")
      ->check(non_empty_db_path());
  cmd->add_option("--config", opt->config,
                  "predict this tile config (words over the defaults, as tcjit compile --config: "
                  "\"128x256x64 w64x64 s3\") instead of the default chooser's");
  cmd->add_flag("--json", opt->json, "print JSON for scripts");
  cmd->footer("Example: tcjit explain \"conv2d n=32 h=56 w=56 c=64 k=64 r=3 s=3 pad=1 x=f16\" "
              "--arch sm_90");
  cmd->callback([opt]() { throw CLI::RuntimeError(run_explain(*opt)); });
}

} // namespace tcjit::cli
