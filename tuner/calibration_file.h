// The side file in which tcjit before schema 6 kept a database's calibrations
// (<db>.calibration.json, "tcjit-calibrations 1"). Calibrations live in the database now
// (kernels_db calibrations table); this reader is only for importing such a file once
// (`tcjit calibrate` does, then renames it <db>.calibration.json.imported). The file is untrusted
// input: every value is validated on read (calibration_problems), and a file that fails is
// refused with what is wrong and how to fix it, never half-used.
#pragma once

#include "tuner/calibration.h"

#include <filesystem>
#include <vector>

namespace tcjit::tuner {

// "<db>.calibration.json".
std::filesystem::path calibration_path(const std::filesystem::path &db);

// The file's calibrations; none when it does not exist. Throws std::runtime_error
// ("calibration file PATH: ...; how to fix") for a file that cannot be read, is over 1 MiB, is not
// the format or holds a calibration that calibration_problems refuses.
std::vector<Calibration> read_calibrations(const std::filesystem::path &file);

} // namespace tcjit::tuner
