#include "tuner/tune_claims.h"

#include "kernels_db/sha256.h"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace tcjit::tuner {

namespace {

std::string errno_text(int error) {
  if (error == EROFS)
    return "read-only file system";
  if (error == EACCES)
    return "permission denied (read-only to this user)";
  return std::strerror(error);
}

// The pid the holder wrote into its claim file ("" when none yet).
std::string holder_of(int fd) {
  char buf[32] = {};
  const ssize_t n = ::pread(fd, buf, sizeof buf - 1, 0);
  std::string pid;
  for (ssize_t i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; ++i)
    pid += buf[i];
  return pid;
}

void close_fd(int &fd) {
  if (fd >= 0)
    ::close(fd);
  fd = -1;
}

} // namespace

// Builds a Claim from a locked file (Claim's fields are private to everyone else).
struct ClaimTaker {
  static Claim make(int dir_fd, int fd, const std::string &name) {
    Claim c;
    c.dir_fd_ = dir_fd;
    c.fd_ = fd;
    c.name_ = name;
    return c;
  }
};

std::optional<ClaimDir> ClaimDir::open(const std::string &dir, std::string &why) {
  if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
    why = "cannot create the claims directory '" + dir + "': " + errno_text(errno);
    return std::nullopt;
  }
  // (O_DIRECTORY | O_NOFOLLOW refuses a link as "not a directory": lstat says which it is.)
  struct stat st {};
  const bool link = ::lstat(dir.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    const int error = link ? ELOOP : errno;
    why = "the claims directory '" + dir + "' " +
          (error == ELOOP     ? std::string("is a symbolic link (not followed)")
           : error == ENOTDIR ? std::string("is not a directory")
                              : "cannot be opened: " + errno_text(error));
    return std::nullopt;
  }
  return ClaimDir(dir, fd);
}

ClaimDir::ClaimDir(ClaimDir &&other) noexcept : path_(std::move(other.path_)), fd_(other.fd_) {
  other.fd_ = -1;
}

ClaimDir &ClaimDir::operator=(ClaimDir &&other) noexcept {
  if (this != &other) {
    close_fd(fd_);
    path_ = std::move(other.path_);
    fd_ = other.fd_;
    other.fd_ = -1;
  }
  return *this;
}

ClaimDir::~ClaimDir() {
  close_fd(fd_);
}

std::string claims_dir_of(const std::string &db_path) {
  return db_path + ".claims";
}

std::string claim_name(const std::string &problem_key, const std::string &arch,
                       const std::string &tuner_version) {
  const std::string text = problem_key + '\n' + arch + '\n' + tuner_version;
  return kernels_db::sha256_hex(std::string_view(text)).substr(0, 32) + ".lock";
}

Claim::Claim(Claim &&other) noexcept
    : dir_fd_(other.dir_fd_), fd_(other.fd_), name_(std::move(other.name_)) {
  other.fd_ = -1;
}

Claim &Claim::operator=(Claim &&other) noexcept {
  if (this != &other) {
    release();
    dir_fd_ = other.dir_fd_;
    fd_ = other.fd_;
    name_ = std::move(other.name_);
    other.fd_ = -1;
  }
  return *this;
}

Claim::~Claim() {
  release();
}

void Claim::release() {
  if (fd_ < 0)
    return;
  // Removed while still locked: a process waiting on this file finds it gone and starts over on
  // a new one, so no two processes ever hold locks on different files of one name.
  ::unlinkat(dir_fd_, name_.c_str(), 0);
  close_fd(fd_);
}

ClaimAttempt try_claim(const ClaimDir &dir, const std::string &name) {
  ClaimAttempt attempt;
  const std::string where = "claim file '" + dir.path() + "/" + name + "'";
  // A file that was removed or replaced between open and lock (its holder let go): try again.
  for (int round = 0; round < 100; ++round) {
    struct stat before {};
    if (::fstatat(dir.fd(), name.c_str(), &before, AT_SYMLINK_NOFOLLOW) == 0 &&
        !S_ISREG(before.st_mode)) {
      attempt.why =
          "the " + where + " is " +
          (S_ISLNK(before.st_mode) ? "a symbolic link (not followed)" : "not a regular file") +
          "; remove it";
      return attempt;
    }
    int fd = ::openat(dir.fd(), name.c_str(),
                      O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0600);
    if (fd < 0) {
      const int error = errno;
      attempt.why = "the " + where + " " +
                    (error == ELOOP ? std::string("is a symbolic link (not followed); remove it")
                                    : "cannot be created: " + errno_text(error));
      return attempt;
    }
    struct stat opened {};
    if (::fstat(fd, &opened) != 0 || !S_ISREG(opened.st_mode)) {
      close_fd(fd);
      attempt.why = "the " + where + " is not a regular file; remove it";
      return attempt;
    }
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int error = errno;
      if (error == EWOULDBLOCK || error == EINTR) {
        attempt.state = ClaimState::busy;
        attempt.holder = holder_of(fd);
        close_fd(fd);
        return attempt;
      }
      close_fd(fd);
      attempt.why = "the " + where + " cannot be locked: " + errno_text(error);
      return attempt;
    }
    struct stat now {};
    if (::fstatat(dir.fd(), name.c_str(), &now, AT_SYMLINK_NOFOLLOW) != 0 ||
        now.st_ino != opened.st_ino || now.st_dev != opened.st_dev) {
      close_fd(fd); // locked a file its holder removed as it let go
      continue;
    }
    const std::string pid = std::to_string(::getpid()) + "\n";
    if (::ftruncate(fd, 0) != 0 || ::pwrite(fd, pid.data(), pid.size(), 0) < 0) {
      // (the pid is for messages only: the lock is what claims)
    }
    attempt.state = ClaimState::taken;
    attempt.claim = ClaimTaker::make(dir.fd(), fd, name);
    return attempt;
  }
  attempt.why = "the " + where + " kept being replaced while it was taken";
  return attempt;
}

ClaimAttempt wait_for_claim(const ClaimDir &dir, const std::string &name,
                            const std::atomic<bool> *stop) {
  // Polled rather than a blocking flock: SIGINT's handler is installed with SA_RESTART, which
  // would restart a blocking flock and leave Ctrl-C waiting for the other process.
  auto pause = std::chrono::milliseconds(5);
  while (true) {
    ClaimAttempt attempt = try_claim(dir, name);
    if (attempt.state != ClaimState::busy)
      return attempt;
    if (stop && stop->load()) {
      attempt.state = ClaimState::stopped;
      return attempt;
    }
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(100));
  }
}

} // namespace tcjit::tuner
