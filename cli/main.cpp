// `tcjit`: one tool, git-style subcommands. Each subcommand lives in its own file and registers
// itself here; `tcjit <cmd> --help` works for all of them.
#include "cli/calibrate_command.h"
#include "cli/compile_command.h"
#include "cli/db_command.h"
#include "cli/doctor_command.h"
#include "cli/emu_command.h"
#include "cli/exit_codes.h"
#include "cli/explain_command.h"
#include "cli/resolve_command.h"
#include "cli/run_command.h"
#include "cli/tune_command.h"
#include "tcjit/db.hpp"

#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>
#include <new>
#include <string>

namespace {

// `tcjit WORD` / `tcjit db WORD` where WORD names no command: CLI11 would say "A subcommand is
// required". Walks the leading non-option words down the command tree and, at the first one that
// is not a command of an app that needs one, names it and lists the commands. True when reported.
bool report_unknown_command(CLI::App &app, int argc, char **argv) {
  CLI::App *current = &app;
  std::string path = "tcjit";
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.empty() || word[0] == '-')
      return false;
    const auto named = current->get_subcommands([&](CLI::App *a) { return a->check_name(word); });
    if (!named.empty()) {
      current = named.front();
      path += " " + word;
      continue;
    }
    const bool has_positionals =
        !current->get_options([](const CLI::Option *o) { return o->get_positional(); }).empty();
    if (current->get_require_subcommand_min() == 0 || has_positionals)
      return false;
    std::string list;
    for (const CLI::App *sub : current->get_subcommands([](const CLI::App *) { return true; }))
      list += (list.empty() ? "" : ", ") + sub->get_name();
    std::cerr << path << ": unknown command '" << word << "'; the commands are: " << list
              << " (see " << path << " --help)\n";
    return true;
  }
  return false;
}

} // namespace

int main(int argc, char **argv) {
  CLI::App app{"tcjit: JIT kernel generator and autotuner for NVIDIA tensor cores", "tcjit"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("tcjit ") + TCJIT_VERSION);
  tcjit::cli::add_explain_command(app);
  tcjit::cli::add_compile_command(app);
  tcjit::cli::add_run_command(app);
  tcjit::cli::add_tune_command(app);
  tcjit::cli::add_resolve_command(app);
  tcjit::cli::add_emu_command(app);
  tcjit::cli::add_db_command(app, tcjit::current_db_versions());
  tcjit::cli::add_doctor_command(app);
  tcjit::cli::add_calibrate_command(app);
  if (report_unknown_command(app, argc, argv))
    return tcjit::cli::kExitUsage;
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError &e) {
    return e.get_exit_code(); // a subcommand finished with this status
  } catch (const CLI::ParseError &e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : tcjit::cli::kExitUsage;
  } catch (const std::bad_alloc &) { // past the memory checks (a limit they could not see)
    std::cerr << "tcjit: error: out of memory: an allocation failed (a limit on this process's "
                 "memory: ulimit -v, a cgroup, or the machine's memory); make the problem smaller "
                 "or raise the limit\n";
    return tcjit::cli::kExitFailure;
  } catch (const std::exception &e) {
    std::cerr << "tcjit: internal error: " << e.what()
              << "\n(this is a bug in tcjit; please report it with the command line)\n";
    return tcjit::cli::kExitFailure;
  }
  return tcjit::cli::kExitOk;
}
