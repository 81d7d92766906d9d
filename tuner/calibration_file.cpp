#include "tuner/calibration_file.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tcjit::tuner {

namespace {

constexpr std::string_view kFormat = "tcjit-calibrations 1";
constexpr std::uintmax_t kMaxBytes = 1 << 20;

// Throws std::invalid_argument naming the field when it is missing or of the wrong type.
template <class T> T field(const nlohmann::json &j, const char *name) {
  if (!j.contains(name))
    throw std::invalid_argument(std::string("'") + name + "' is missing");
  const nlohmann::json &v = j.at(name);
  if constexpr (std::is_same_v<T, std::string>) {
    if (!v.is_string())
      throw std::invalid_argument(std::string("'") + name + "' is not a string");
  } else if constexpr (std::is_integral_v<T>) {
    if (!v.is_number_integer())
      throw std::invalid_argument(std::string("'") + name + "' is not an integer");
  } else {
    if (!v.is_number())
      throw std::invalid_argument(std::string("'") + name + "' is not a number");
  }
  return v.get<T>();
}

Calibration from_json(const nlohmann::json &j) {
  if (!j.is_object())
    throw std::invalid_argument("not an object");
  Calibration c;
  c.gpu = field<std::string>(j, "gpu");
  c.arch = field<std::string>(j, "arch");
  c.results = field<int64_t>(j, "results");
  c.residual_before = field<double>(j, "residual_before");
  c.residual = field<double>(j, "residual");
  c.created_ms = field<int64_t>(j, "created_ms");
  c.tcjit_version = field<std::string>(j, "tcjit_version");
  c.model_version = field<std::string>(j, "model_version");
  if (!j.contains("constants") || !j.at("constants").is_object())
    throw std::invalid_argument("'constants' is not an object");
  const nlohmann::json &k = j.at("constants");
  for (const auto &[name, value] : k.items())
    if (name != "dram_bytes_per_s" && name != "prologue_cycles" && name != "launch_seconds" &&
        name != "mma_efficiency")
      throw std::invalid_argument("unknown constant '" + name + "'");
  if (k.contains("dram_bytes_per_s"))
    c.constants.dram_bytes_per_s = field<double>(k, "dram_bytes_per_s");
  if (k.contains("prologue_cycles"))
    c.constants.prologue_cycles = field<double>(k, "prologue_cycles");
  if (k.contains("launch_seconds"))
    c.constants.launch_seconds = field<double>(k, "launch_seconds");
  if (k.contains("mma_efficiency")) {
    if (!k.at("mma_efficiency").is_object())
      throw std::invalid_argument("'mma_efficiency' is not an object");
    for (const auto &[name, value] : k.at("mma_efficiency").items()) {
      const std::optional<MathKind> unit = parse_math_kind(name);
      if (!unit || !value.is_number())
        throw std::invalid_argument("mma_efficiency '" + name + "': not a math unit with a number");
      c.constants.mma_efficiency[static_cast<int>(*unit)] = value.get<double>();
    }
  }
  const std::vector<std::string> problems = calibration_problems(c);
  if (!problems.empty()) {
    std::string all;
    for (const std::string &p : problems)
      all += (all.empty() ? "" : "; ") + p;
    throw std::invalid_argument(all);
  }
  return c;
}

} // namespace

std::filesystem::path calibration_path(const std::filesystem::path &db) {
  return std::filesystem::path(db.string() + ".calibration.json");
}

std::vector<Calibration> read_calibrations(const std::filesystem::path &file) {
  const std::string where = "calibration file " + file.string() + ": ";
  const std::string fix = "; how to fix: move it away (it is no longer read: calibrations are "
                          "kept in the database, and `tcjit calibrate` fits a new one)";
  std::error_code ec;
  if (!std::filesystem::exists(file, ec))
    return {};
  if (!std::filesystem::is_regular_file(file, ec))
    throw std::runtime_error(where + "not a regular file" + fix);
  const std::uintmax_t size = std::filesystem::file_size(file, ec);
  if (ec || size > kMaxBytes)
    throw std::runtime_error(where + "larger than 1 MiB or unreadable" + fix);
  std::ifstream in(file, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in)
    throw std::runtime_error(where + "cannot be read" + fix);
  const nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object())
    throw std::runtime_error(where + "not JSON" + fix);
  if (!j.contains("format") || j.at("format") != kFormat)
    throw std::runtime_error(where + "not a \"" + std::string(kFormat) + "\" file" + fix);
  if (!j.contains("calibrations") || !j.at("calibrations").is_array())
    throw std::runtime_error(where + "'calibrations' is not an array" + fix);
  std::vector<Calibration> out;
  for (size_t i = 0; i < j.at("calibrations").size(); ++i) {
    try {
      out.push_back(from_json(j.at("calibrations").at(i)));
    } catch (const std::exception &e) {
      throw std::runtime_error(where + "calibration " + std::to_string(i + 1) + ": " + e.what() +
                               fix);
    }
  }
  return out;
}

} // namespace tcjit::tuner
