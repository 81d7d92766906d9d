#include "support/regular_file.h"

#include "support/escape_controls.h"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace tcjit::support {

namespace {

std::string quoted(const std::string &path) {
  return "'" + escape_controls(path) + "'";
}

std::string size_text(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 20) && bytes % (uint64_t{1} << 20) == 0)
    return std::to_string(bytes >> 20) + " MiB";
  if (bytes >= 1024 && bytes % 1024 == 0)
    return std::to_string(bytes >> 10) + " KiB";
  return std::to_string(bytes) + " bytes";
}

FileRead failure(FileReadStatus status, std::string problem, uint64_t size = 0) {
  FileRead r;
  r.status = status;
  r.problem = std::move(problem);
  r.size = size;
  return r;
}

// The problem of a file of this stat, or ok.
FileRead check_stat(const std::string &path, const struct stat &st, uint64_t max_bytes) {
  if (!S_ISREG(st.st_mode))
    return failure(FileReadStatus::not_regular, quoted(path) + " is not a regular file (it is " +
                                                    file_kind_name(st.st_mode) + ")");
  const auto size = static_cast<uint64_t>(st.st_size);
  if (size > max_bytes)
    return failure(FileReadStatus::too_large,
                   quoted(path) + " is " + std::to_string(size) + " bytes, over the limit of " +
                       std::to_string(max_bytes) + " bytes (" + size_text(max_bytes) + ")",
                   size);
  FileRead ok;
  ok.size = size;
  return ok;
}

} // namespace

std::string file_kind_name(unsigned st_mode) {
  if (S_ISREG(st_mode))
    return "a regular file";
  if (S_ISDIR(st_mode))
    return "a directory";
  if (S_ISFIFO(st_mode))
    return "a FIFO";
  if (S_ISCHR(st_mode))
    return "a character device";
  if (S_ISBLK(st_mode))
    return "a block device";
  if (S_ISSOCK(st_mode))
    return "a socket";
  return "not a file";
}

std::string not_regular_file_problem(const std::string &path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISREG(st.st_mode))
    return "";
  return quoted(path) + " is not a regular file (it is " + file_kind_name(st.st_mode) + ")";
}

FileRead read_regular_file(const std::string &path, uint64_t max_bytes) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int error = errno;
    return failure(error == ENOENT || error == ENOTDIR ? FileReadStatus::missing
                                                       : FileReadStatus::unreadable,
                   "cannot read " + quoted(path) + " (" + std::strerror(error) + ")");
  }
  if (FileRead r = check_stat(path, st, max_bytes); r.status != FileReadStatus::ok)
    return r;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    const int error = errno;
    return failure(FileReadStatus::unreadable,
                   "cannot read " + quoted(path) + " (" + std::strerror(error) + ")");
  }
  FileRead r;
  if (::fstat(fd, &st) != 0) {
    r = failure(FileReadStatus::unreadable, "cannot read " + quoted(path));
  } else {
    r = check_stat(path, st, max_bytes); // the file opened may not be the one stat() saw
  }
  if (r.status == FileReadStatus::ok) {
    // At most max_bytes: a file that grows while it is read is still refused.
    r.text.reserve(static_cast<size_t>(r.size));
    char chunk[1 << 16];
    for (;;) {
      const ssize_t got = ::read(fd, chunk, sizeof chunk);
      if (got < 0 && errno == EINTR)
        continue;
      if (got < 0) {
        r = failure(FileReadStatus::unreadable,
                    "cannot read " + quoted(path) + " (" + std::strerror(errno) + ")");
        break;
      }
      if (got == 0)
        break;
      if (r.text.size() + static_cast<size_t>(got) > max_bytes) {
        r = failure(FileReadStatus::too_large,
                    quoted(path) + " grew over the limit of " + std::to_string(max_bytes) +
                        " bytes (" + size_text(max_bytes) + ") while it was read",
                    r.text.size() + static_cast<size_t>(got));
        break;
      }
      r.text.append(chunk, static_cast<size_t>(got));
    }
  }
  ::close(fd);
  if (r.status == FileReadStatus::ok)
    r.size = r.text.size();
  return r;
}

} // namespace tcjit::support
