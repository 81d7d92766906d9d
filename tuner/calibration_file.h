// The calibrations of a kernel database, kept in a JSON file beside it (<db>.calibration.json):
// one calibration per measured GPU. The file is untrusted input (it may come from another machine
// or be edited): every value is validated on read (calibration_problems), and a file that fails is
// refused with what is wrong and how to fix it, never half-used. Written atomically (a temporary
// file renamed over it).
#pragma once

#include "tuner/calibration.h"

#include <filesystem>
#include <optional>
#include <string_view>
#include <vector>

namespace tcjit::tuner {

// "<db>.calibration.json".
std::filesystem::path calibration_path(const std::filesystem::path &db);

// The file's calibrations; none when it does not exist. Throws std::runtime_error
// ("calibration file PATH: ...; how to fix") for a file that cannot be read, is over 1 MiB, is not
// the format or holds a calibration that calibration_problems refuses.
std::vector<Calibration> read_calibrations(const std::filesystem::path &file);

// Writes the file (a temporary file renamed over it). Throws std::runtime_error on failure.
void write_calibrations(const std::filesystem::path &file,
                        const std::vector<Calibration> &calibrations);

// `calibrations` with `c` added, replacing the one of the same GPU.
std::vector<Calibration> with_calibration(std::vector<Calibration> calibrations,
                                          const Calibration &c);

// The calibration for a prediction on `arch`: with `device` named, that GPU's only (another GPU of
// the same arch is not it); else the newest one of the arch. nullopt when there is none.
std::optional<Calibration> find_calibration(const std::vector<Calibration> &calibrations,
                                            std::string_view arch, std::string_view device = {});

} // namespace tcjit::tuner
