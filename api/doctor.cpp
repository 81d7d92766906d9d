// include/tcjit/doctor.hpp: what `tcjit doctor` reports, looked up in the toolkit search, the CUDA
// driver and the database (read-only).
#include "tcjit/doctor.hpp"

#include "engine/kernel_records.h"
#include "kernels_db/default_path.h"
#include "kernels_db/kernels_db.h"
#include "runtime/cuda/cuda_device.h"
#include "runtime/cuda/vendor_libraries.h"
#include "runtime/jit/cuda_toolkit.h"
#include "runtime/jit/nvjitlink_library.h"
#include "support/run_process.h"
#include "support/shared_library.h"

#include <array>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <memory>
#include <regex>

namespace tcjit {
namespace {

// "13.0" from `ptxas --version` ("Cuda compilation tools, release 13.0, V13.0.48"); "" if it fails.
std::string ptxas_release(const std::string &ptxas) {
  const support::ProcessResult run = support::run_process({ptxas, "--version"});
  if (!run.started || run.exit_code != 0)
    return "";
  const std::string &out = run.output;
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

std::string nvjitlink_version(const std::string &path) {
  const jit::NvJitLinkLibrary lib = jit::load_nvjitlink_library({path});
  return lib.loaded ? std::to_string(lib.major) + "." + std::to_string(lib.minor) : "";
}

// `what` names the piece in the message of a piece not found ("ptxas", "libdevice.10.bc", ...).
DoctorToolkitPiece piece_of(const jit::ToolkitPiece &piece, const char *what,
                            std::string (*version_of)(const std::string &)) {
  DoctorToolkitPiece report;
  report.path = piece.path;
  report.source = piece.source;
  report.tried = piece.tried;
  if (!piece.found()) {
    report.missing = piece.missing_message(what);
    return report;
  }
  if (version_of)
    report.version = version_of(piece.path);
  return report;
}

// cuBLASLt or cuDNN: where it opened and its version, or every folder and candidate tried.
DoctorToolkitPiece vendor_library(cuda::VendorLibrary library) {
  const cuda::LoadedVendorLibrary loaded = cuda::load_vendor_library(library);
  DoctorToolkitPiece report;
  report.tried = loaded.tried;
  if (!loaded.loaded()) {
    report.missing = loaded.error;
    return report;
  }
  report.path = loaded.path;
  report.source = loaded.source;
  report.version = loaded.version;
  return report;
}

void find_gpus(DoctorReport &report) {
  if (!cuda::cuda_device_available()) {
    report.driver_problem = cuda::cuda_unavailable_reason();
    report.driver_found = report.driver_problem.empty();
    return;
  }
  report.driver_found = true;
  for (int ordinal = 0;; ++ordinal) {
    try {
      cuda::CudaDeviceOptions options;
      options.ordinal = ordinal;
      cuda::CudaDevice device(options);
      const device::DeviceInfo info = device.info();
      report.driver_version = device.properties().driver_version;
      report.gpus.push_back({ordinal, info.name, "sm_" + std::to_string(info.sm_arch),
                             info.sm_count, info.global_memory_bytes});
    } catch (const device::DeviceError &) {
      return; // past the last ordinal
    }
  }
}

DoctorDatabase database_of(const std::string &db_path) {
  DoctorDatabase database;
  try {
    const std::filesystem::path path =
        db_path.empty() ? kernels_db::default_db_path() : std::filesystem::path(db_path);
    database.path = path.string();
    if (!std::filesystem::exists(path))
      return database;
    kernels_db::OpenOptions read_only;
    read_only.read_only = true;
    read_only.create_if_missing = false;
    kernels_db::KernelsDb db = kernels_db::KernelsDb::open(path, read_only);
    const kernels_db::DbStats stats =
        db.stats({engine::toolkit_version(), engine::compiler_version()});
    database.exists = true;
    database.schema_version = stats.schema_version;
    database.problems = stats.problems;
    database.binaries = stats.binaries;
    database.results = stats.results;
  } catch (const std::exception &e) {
    database.error = e.what();
  }
  return database;
}

} // namespace

DoctorReport doctor(const std::string &db_path) {
  const jit::CudaToolkit toolkit = jit::current_cuda_toolkit();
  DoctorReport report;
  report.compiler_version = engine::compiler_version();
  report.ptxas = piece_of(toolkit.ptxas, "ptxas", ptxas_release);
  report.libdevice = piece_of(toolkit.libdevice, "libdevice.10.bc", nullptr);
  report.nvjitlink = piece_of(toolkit.nvjitlink, "libnvJitLink", nvjitlink_version);
  report.nvrtc = piece_of(toolkit.nvrtc, "libnvrtc", nvrtc_version);
  report.cublaslt = vendor_library(cuda::VendorLibrary::cublaslt);
  report.cudnn = vendor_library(cuda::VendorLibrary::cudnn);
  find_gpus(report);
  report.database = database_of(db_path);
  return report;
}

} // namespace tcjit
