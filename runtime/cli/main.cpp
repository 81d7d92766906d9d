// `tcjit`: one tool, git-style subcommands. Each subcommand lives in its own file and registers
// itself here; `tcjit <cmd> --help` works for all of them.
#include "runtime/cli/compile_command.h"
#include "runtime/cli/db_command.h"
#include "runtime/cli/emu_command.h"
#include "runtime/cli/exit_codes.h"
#include "runtime/cli/explain_command.h"
#include "runtime/cli/run_command.h"
#include "runtime/cli/tune_command.h"
#include "tuner/kernel_records.h"

#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>

int main(int argc, char **argv) {
  CLI::App app{"tcjit: JIT kernel generator and autotuner for NVIDIA tensor cores", "tcjit"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("tcjit ") + TCJIT_VERSION);
  tcjit::cli::add_explain_command(app);
  tcjit::cli::add_compile_command(app);
  tcjit::cli::add_run_command(app);
  tcjit::cli::add_tune_command(app);
  tcjit::cli::add_emu_command(app);
  tcjit::cli::add_db_command(app,
                             {tcjit::tuner::toolkit_version(), tcjit::tuner::compiler_version()});
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError &e) {
    return e.get_exit_code(); // a subcommand finished with this status
  } catch (const CLI::ParseError &e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : tcjit::cli::kExitUsage;
  } catch (const std::exception &e) {
    std::cerr << "tcjit: internal error: " << e.what()
              << "\n(this is a bug in tcjit; please report it with the command line)\n";
    return tcjit::cli::kExitFailure;
  }
  return tcjit::cli::kExitOk;
}
