#include "runtime/device/npy_file.h"

#include <cstring>
#include <fstream>
#include <stdexcept>

namespace tcjit::device {

namespace {

[[noreturn]] void bad(const std::string &path, const std::string &what) {
  throw std::runtime_error(path + ": " + what);
}

// The value of 'key' in the header dict, as raw text up to the next top-level ',' or '}'.
std::string dict_value(const std::string &header, const std::string &key, const std::string &path) {
  size_t k = header.find("'" + key + "'");
  if (k == std::string::npos)
    bad(path, "the .npy header has no '" + key + "'");
  size_t colon = header.find(':', k);
  size_t i = colon + 1;
  while (i < header.size() && header[i] == ' ')
    ++i;
  int depth = 0;
  size_t start = i;
  for (; i < header.size(); ++i) {
    char c = header[i];
    if (c == '(' || c == '[')
      ++depth;
    else if (c == ')' || c == ']')
      --depth;
    else if ((c == ',' || c == '}') && depth == 0)
      break;
  }
  return header.substr(start, i - start);
}

} // namespace

NpyArray read_npy(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    bad(path, "cannot open the file");
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  if (bytes.size() < 10 || std::memcmp(bytes.data(), "\x93NUMPY", 6) != 0)
    bad(path, "not a NumPy .npy file (missing the \\x93NUMPY magic)");
  const uint8_t major = bytes[6];
  size_t header_len, prefix;
  if (major == 1) {
    header_len = bytes[8] | (bytes[9] << 8);
    prefix = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      bad(path, "truncated .npy header");
    header_len = bytes[8] | (bytes[9] << 8) | (bytes[10] << 16) | (size_t{bytes[11]} << 24);
    prefix = 12;
  } else {
    bad(path, "unsupported .npy format version " + std::to_string(major));
  }
  if (bytes.size() < prefix + header_len)
    bad(path, "truncated .npy header");
  NpyArray a;
  std::string dict(bytes.begin() + static_cast<long>(prefix),
                   bytes.begin() + static_cast<long>(prefix + header_len));
  a.header.assign(bytes.begin(), bytes.begin() + static_cast<long>(prefix + header_len));
  std::string descr = dict_value(dict, "descr", path);
  if (descr.size() < 3 || (descr.front() != '\'' && descr.front() != '"'))
    bad(path, "unsupported descr " + descr);
  a.descr = descr.substr(1, descr.size() - 2);
  static const char *const kSupported[] = {"f2", "f4", "f8", "i1", "u1", "i2",
                                           "u2", "i4", "u4", "i8", "u8"};
  bool ok = false;
  if (a.descr.size() == 3 && (a.descr[0] == '<' || a.descr[0] == '|' || a.descr[0] == '=')) {
    for (const char *s : kSupported)
      ok |= a.descr.substr(1) == s;
  }
  if (!ok)
    bad(path, "unsupported dtype '" + a.descr +
                  "' (supported: little-endian f2 f4 f8 i1 u1 i2 u2 i4 u4 i8 u8)");
  a.item_bytes = static_cast<uint32_t>(a.descr[2] - '0');
  if (dict_value(dict, "fortran_order", path).find("False") == std::string::npos)
    bad(path, "Fortran-order arrays are not supported; save a C-order array "
              "(numpy.ascontiguousarray)");
  std::string shape = dict_value(dict, "shape", path);
  uint64_t count = 1;
  for (size_t i = 0; i < shape.size();) {
    if (shape[i] >= '0' && shape[i] <= '9') {
      size_t j = i;
      while (j < shape.size() && shape[j] >= '0' && shape[j] <= '9')
        ++j;
      uint64_t d = std::stoull(shape.substr(i, j - i));
      a.shape.push_back(d);
      count *= d;
      i = j;
    } else {
      ++i;
    }
  }
  const size_t data_bytes = count * a.item_bytes;
  if (bytes.size() - prefix - header_len < data_bytes)
    bad(path,
        "the file holds fewer bytes than its shape needs (" + std::to_string(data_bytes) + ")");
  a.data.assign(bytes.begin() + static_cast<long>(prefix + header_len),
                bytes.begin() + static_cast<long>(prefix + header_len + data_bytes));
  return a;
}

void write_npy_data(const std::string &path, const NpyArray &array) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    bad(path, "cannot write the file");
  out.write(array.header.data(), static_cast<std::streamsize>(array.header.size()));
  out.write(reinterpret_cast<const char *>(array.data.data()),
            static_cast<std::streamsize>(array.data.size()));
  if (!out)
    bad(path, "writing the file failed");
}

} // namespace tcjit::device
