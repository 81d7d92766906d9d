// `tcjit doctor`: a read-only report of the environment tcjit runs in (writes nothing: the
// database is opened read-only and only when it exists).
#include "cli/doctor_command.h"
#include "kernels_db/record_json.h"

#include "cli/db_path_option.h"
#include "cli/exit_codes.h"
#include "engine/kernel_records.h"
#include "kernels_db/default_path.h"
#include "kernels_db/kernels_db.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/jit/cuda_toolkit.h"
#include "runtime/jit/nvjitlink_library.h"
#include "support/shared_library.h"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <regex>

namespace tcjit::cli {

namespace {

struct DoctorOptions {
  std::string db_path; // "" = the default
  bool json = false;
};

// "13.0" from `ptxas --version` ("Cuda compilation tools, release 13.0, V13.0.48"); "" if it fails.
std::string ptxas_release(const std::string &ptxas) {
  // Single-quoted for the shell, with any ' in the path (it may come from the environment) closed,
  // escaped and reopened.
  std::string quoted = "'";
  for (char c : ptxas)
    quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  const std::string command = quoted + "' --version 2>/dev/null";
  std::unique_ptr<FILE, int (*)(FILE *)> pipe(::popen(command.c_str(), "r"), ::pclose);
  if (!pipe)
    return "";
  std::string out;
  std::array<char, 256> buf{};
  while (std::fgets(buf.data(), buf.size(), pipe.get()))
    out += buf.data();
  std::smatch m;
  return std::regex_search(out, m, std::regex("release ([0-9]+\\.[0-9]+)")) ? m[1].str() : "";
}

// NVRTC's version through its own nvrtcVersion (dlopen, as every toolkit library tcjit uses).
std::string nvrtc_version(const std::string &path) {
  const support::OpenedLibrary lib = support::open_first_library({path});
  if (!lib.handle)
    return "";
  using Version = int (*)(int *, int *);
  const auto version =
      reinterpret_cast<Version>(support::find_library_symbol(lib.handle, "nvrtcVersion"));
  int major = 0, minor = 0;
  if (!version || version(&major, &minor) != 0)
    return "";
  return std::to_string(major) + "." + std::to_string(minor);
}

nlohmann::json piece_json(const jit::ToolkitPiece &p, const std::string &version) {
  nlohmann::json j = {{"found", p.found()}, {"tried", p.tried}};
  if (p.found()) {
    j["path"] = p.path;
    j["source"] = p.source;
    if (!version.empty())
      j["version"] = version;
  }
  return j;
}

int run_doctor(const DoctorOptions &opt) {
  const jit::CudaToolkit tk = jit::current_cuda_toolkit();
  const std::string ptxas_version = tk.ptxas.found() ? ptxas_release(tk.ptxas.path) : "";
  std::string nvjitlink_version;
  if (tk.nvjitlink.found()) {
    const jit::NvJitLinkLibrary lib = jit::load_nvjitlink_library({tk.nvjitlink.path});
    if (lib.loaded)
      nvjitlink_version = std::to_string(lib.major) + "." + std::to_string(lib.minor);
  }
  const std::string nvrtc = tk.nvrtc.found() ? nvrtc_version(tk.nvrtc.path) : "";

  // The driver and its GPUs.
  nlohmann::json gpus = nlohmann::json::array();
  std::string driver_problem;
  int driver_version = 0;
  if (cuda::cuda_device_available()) {
    for (int ordinal = 0;; ++ordinal) {
      try {
        cuda::CudaDeviceOptions o;
        o.ordinal = ordinal;
        cuda::CudaDevice dev(o);
        const device::DeviceInfo info = dev.info();
        driver_version = dev.properties().driver_version;
        gpus.push_back({{"ordinal", ordinal},
                        {"name", info.name},
                        {"arch", "sm_" + std::to_string(info.sm_arch)},
                        {"sms", info.sm_count},
                        {"memory_bytes", info.global_memory_bytes}});
      } catch (const device::DeviceError &) {
        break; // past the last ordinal
      }
    }
  } else {
    driver_problem = cuda::cuda_unavailable_reason();
  }

  // The database, read-only, only if it exists.
  nlohmann::json db = nlohmann::json::object();
  std::string db_text;
  try {
    const std::filesystem::path path =
        opt.db_path.empty() ? kernels_db::default_db_path() : std::filesystem::path(opt.db_path);
    db["path"] = path.string();
    if (!std::filesystem::exists(path)) {
      db["exists"] = false;
      db_text = path.string() + " (not created yet: the first compile creates it)";
    } else {
      kernels_db::OpenOptions ro;
      ro.read_only = true;
      ro.create_if_missing = false;
      kernels_db::KernelsDb k = kernels_db::KernelsDb::open(path, ro);
      const kernels_db::DbStats s =
          k.stats({engine::toolkit_version(), engine::compiler_version()});
      db["exists"] = true;
      db["schema_version"] = s.schema_version;
      db["problems"] = s.problems;
      db["binaries"] = s.binaries;
      db["results"] = s.results;
      db_text = path.string() + " (schema " + std::to_string(s.schema_version) + ", " +
                std::to_string(s.problems) + " problems, " + std::to_string(s.binaries) +
                " binaries, " + std::to_string(s.results) + " results)";
    }
  } catch (const std::exception &e) {
    db["error"] = e.what();
    db_text = std::string("cannot be read: ") + e.what();
  }

  if (opt.json) {
    nlohmann::json j = {
        {"tcjit", TCJIT_VERSION},
        {"compiler_version", engine::compiler_version()},
        {"toolkit",
         {{"ptxas", piece_json(tk.ptxas, ptxas_version)},
          {"libdevice", piece_json(tk.libdevice, "")},
          {"nvjitlink", piece_json(tk.nvjitlink, nvjitlink_version)},
          {"nvrtc", piece_json(tk.nvrtc, nvrtc)}}},
        {"driver",
         driver_problem.empty()
             ? nlohmann::json{{"found", true}, {"version", driver_version}, {"gpus", gpus}}
             : nlohmann::json{{"found", false}, {"problem", driver_problem}}},
        {"database", db}};
    std::cout << kernels_db::dump_json(j, 2) << "\n"; // any bytes: invalid UTF-8 replaced
    return kExitOk;
  }
  auto piece = [](const char *label, const jit::ToolkitPiece &p, const std::string &version,
                  const char *what) {
    std::cout << label;
    if (p.found())
      std::cout << p.path << (version.empty() ? "" : " (" + version + ")") << "  [from " << p.source
                << "]\n";
    else
      std::cout << "NOT FOUND: " << p.missing_message(what) << "\n";
  };
  std::cout << "tcjit:       " << TCJIT_VERSION << " (compiler " << engine::compiler_version()
            << ")\n";
  piece("ptxas:       ", tk.ptxas, ptxas_version.empty() ? "" : "CUDA " + ptxas_version, "ptxas");
  piece("libdevice:   ", tk.libdevice, "", "libdevice.10.bc");
  piece("nvJitLink:   ", tk.nvjitlink, nvjitlink_version, "libnvJitLink");
  piece("NVRTC:       ", tk.nvrtc, nvrtc, "libnvrtc");
  if (driver_problem.empty()) {
    std::cout << "driver:      CUDA " << driver_version / 1000 << "." << driver_version % 1000 / 10
              << ", " << gpus.size() << " GPU(s)\n";
    for (const auto &g : gpus)
      std::cout << "  GPU " << g["ordinal"].get<int>() << ":     " << g["name"].get<std::string>()
                << " (" << g["arch"].get<std::string>() << ", " << g["sms"].get<int>() << " SMs)\n";
  } else {
    std::cout << "driver:      none — " << driver_problem << " (kernels run on the PTX emulator)\n";
  }
  std::cout << "database:    " << db_text << "\n";
  return kExitOk;
}

} // namespace

void add_doctor_command(CLI::App &app) {
  auto opt = std::make_shared<DoctorOptions>();
  CLI::App *cmd = app.add_subcommand(
      "doctor", "Report what tcjit finds where it runs: the CUDA toolkit's pieces (ptxas, "
                "libdevice, nvJitLink, NVRTC: path, version, and where each was found, or every "
                "path tried), the CUDA driver and its GPUs (or none), and the kernel database with "
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
