// NumPy .npy files (format versions 1-3, little-endian, C order) as host buffers for device
// arguments: read, then written back in place after a launch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tcjit::device {

struct NpyArray {
  std::string descr; // "<f4", "|u1", ...
  uint32_t item_bytes = 0;
  std::vector<uint64_t> shape;
  std::string header; // the file's bytes before the data (kept for writing back)
  std::vector<uint8_t> data;
};

// Throws std::runtime_error naming the file and the problem (big-endian, Fortran order, an
// unsupported dtype, a truncated file...).
NpyArray read_npy(const std::string &path);
void write_npy_data(const std::string &path, const NpyArray &array); // same header, new data

} // namespace tcjit::device
