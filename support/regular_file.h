// Reading a whole file that a user names (a PTX file, an act=custom file) without hanging or
// exhausting memory: anything but a regular file (a FIFO, a device such as /dev/zero, a socket, a
// directory) is refused by stat() before it is opened, and a file over a size limit before any
// byte is read.
#pragma once

#include <cstdint>
#include <string>

namespace tcjit::support {

enum class FileReadStatus { ok, missing, not_regular, too_large, unreadable };

struct FileRead {
  FileReadStatus status = FileReadStatus::ok;
  std::string text;    // the contents (status ok)
  std::string problem; // a sentence naming the path and what is wrong (status not ok)
  uint64_t size = 0;   // the file's size (ok, too_large)
};

// What `path` is, for messages: "a FIFO", "a directory", "a character device", ...
std::string file_kind_name(unsigned st_mode);

// "'PATH' is not a regular file (it is a FIFO)" when stat() finds `path` (links followed) is
// something else; "" for a regular file or one that stat() cannot see (its reader says why). For
// files another reader opens (a .npy buffer).
std::string not_regular_file_problem(const std::string &path);

// Reads `path` when it is a regular file (symbolic links followed) of at most `max_bytes`. The
// checks are made by stat() before opening and again by fstat() on the opened descriptor (opened
// non-blocking, so a FIFO swapped in between never blocks). Problems, e.g.:
//   "'x.ptx' is not a regular file (it is a FIFO)"
//   "'big.ptx' is 1073741824 bytes, over the limit of 67108864 bytes (64 MiB)"
FileRead read_regular_file(const std::string &path, uint64_t max_bytes);

} // namespace tcjit::support
