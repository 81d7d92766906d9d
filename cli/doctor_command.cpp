// `tcjit doctor`: a client of tcjit::doctor (include/tcjit/doctor.hpp), printed as text or JSON.
// Read-only: the database is opened read-only and only when it exists.
#include "cli/doctor_command.h"

#include "cli/db_path_option.h"
#include "cli/exit_codes.h"
#include "cli/json_text.h"
#include "tcjit/doctor.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

namespace tcjit::cli {

namespace {

struct DoctorOptions {
  std::string db_path; // "" = the default
  bool json = false;
};

nlohmann::json piece_json(const DoctorToolkitPiece &p) {
  nlohmann::json j = {{"found", p.found()}, {"tried", p.tried}};
  if (p.found()) {
    j["path"] = p.path;
    j["source"] = p.source;
    if (!p.version.empty())
      j["version"] = p.version;
  } else if (!p.missing.empty()) {
    j["problem"] = p.missing;
  }
  return j;
}

nlohmann::json gpus_json(const DoctorReport &report) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const DoctorGpu &g : report.gpus)
    gpus.push_back({{"ordinal", g.ordinal},
                    {"name", g.name},
                    {"arch", g.arch},
                    {"sms", g.sms},
                    {"memory_bytes", g.memory_bytes}});
  return gpus;
}

nlohmann::json database_json(const DoctorDatabase &database) {
  nlohmann::json db = nlohmann::json::object();
  if (!database.path.empty())
    db["path"] = database.path;
  if (!database.error.empty()) {
    db["error"] = database.error;
    return db;
  }
  db["exists"] = database.exists;
  if (!database.exists)
    return db;
  db["schema_version"] = database.schema_version;
  db["problems"] = database.problems;
  db["binaries"] = database.binaries;
  db["results"] = database.results;
  return db;
}

std::string database_text(const DoctorDatabase &database) {
  if (!database.error.empty())
    return "cannot be read: " + database.error;
  if (!database.exists)
    return database.path + " (not created yet: the first compile creates it)";
  return database.path + " (schema " + std::to_string(database.schema_version) + ", " +
         std::to_string(database.problems) + " problems, " + std::to_string(database.binaries) +
         " binaries, " + std::to_string(database.results) + " results)";
}

void print_piece(const char *label, const DoctorToolkitPiece &p, const std::string &version) {
  std::cout << label;
  if (p.found())
    std::cout << p.path << (version.empty() ? "" : " (" + version + ")") << "  [from " << p.source
              << "]\n";
  else
    std::cout << "NOT FOUND: " << p.missing << "\n";
}

// cuBLASLt and cuDNN are optional: only the GPU bench compares with them.
void print_library(const char *label, const DoctorToolkitPiece &p) {
  std::cout << label;
  if (p.found())
    std::cout << p.path << (p.version.empty() ? "" : " (" + p.version + ")") << "  [from "
              << p.source << "]\n";
  else
    std::cout << "not found (optional: only the GPU bench uses it) — " << p.missing << "\n";
}

int run_doctor(const DoctorOptions &opt) {
  const DoctorReport report = doctor(opt.db_path);
  if (opt.json) {
    nlohmann::json j = {
        {"tcjit", TCJIT_VERSION},
        {"compiler_version", report.compiler_version},
        {"toolkit",
         {{"ptxas", piece_json(report.ptxas)},
          {"libdevice", piece_json(report.libdevice)},
          {"nvjitlink", piece_json(report.nvjitlink)},
          {"nvrtc", piece_json(report.nvrtc)}}},
        {"libraries",
         {{"cublaslt", piece_json(report.cublaslt)}, {"cudnn", piece_json(report.cudnn)}}},
        {"driver", report.driver_found
                       ? nlohmann::json{{"found", true},
                                        {"version", report.driver_version},
                                        {"gpus", gpus_json(report)}}
                       : nlohmann::json{{"found", false}, {"problem", report.driver_problem}}},
        {"database", database_json(report.database)}};
    std::cout << json_text(j, 2) << "\n"; // any bytes: invalid UTF-8 replaced
    return kExitOk;
  }
  std::cout << "tcjit:       " << TCJIT_VERSION << " (compiler " << report.compiler_version
            << ")\n";
  print_piece("ptxas:       ", report.ptxas,
              report.ptxas.version.empty() ? "" : "CUDA " + report.ptxas.version);
  print_piece("libdevice:   ", report.libdevice, "");
  print_piece("nvJitLink:   ", report.nvjitlink, report.nvjitlink.version);
  print_piece("NVRTC:       ", report.nvrtc, report.nvrtc.version);
  print_library("cuBLASLt:    ", report.cublaslt);
  print_library("cuDNN:       ", report.cudnn);
  if (report.driver_found) {
    std::cout << "driver:      CUDA " << report.driver_version / 1000 << "."
              << report.driver_version % 1000 / 10 << ", " << report.gpus.size() << " GPU(s)\n";
    for (const DoctorGpu &g : report.gpus)
      std::cout << "  GPU " << g.ordinal << ":     " << g.name << " (" << g.arch << ", " << g.sms
                << " SMs)\n";
  } else {
    std::cout << "driver:      none — " << report.driver_problem
              << " (kernels run on the PTX emulator)\n";
  }
  std::cout << "database:    " << database_text(report.database) << "\n";
  return kExitOk;
}

} // namespace

void add_doctor_command(CLI::App &app) {
  auto opt = std::make_shared<DoctorOptions>();
  CLI::App *cmd = app.add_subcommand(
      "doctor", "Report what tcjit finds where it runs: the CUDA toolkit's pieces (ptxas, "
                "libdevice, nvJitLink, NVRTC: path, version, and where each was found, or every "
                "path tried), cuBLASLt and cuDNN (optional: the GPU bench compares with them), "
                "the CUDA driver and its GPUs (or none), and the kernel database with "
                "its schema version. Read-only.");
  cmd->footer("Example: tcjit doctor --json");
  cmd->add_option("--db", opt->db_path, "kernel database (default: $TCJIT_DB or the cache)")
      ->check(non_empty_db_path());
  cmd->add_flag("--json", opt->json, "one JSON object instead of text");
  cmd->callback([opt]() {
    const int status = run_doctor(*opt);
    if (status != kExitOk)
      throw CLI::RuntimeError(status);
  });
}

} // namespace tcjit::cli
