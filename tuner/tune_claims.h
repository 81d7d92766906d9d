// Claims: which process is tuning a problem now, so that concurrent tunes of one database do not
// measure the same configs twice.
//
// A claim is an exclusive flock(2) on a small file in a directory beside the database
// (`<db>.claims/<hash>.lock`, the hash of the problem key, arch and tuner version). The kernel
// releases the lock when its holder exits, however it exits (kill -9 included), so a claim never
// outlives its process. The holder writes its pid into the file (for messages) and removes the
// file when it lets go; a taker that finds the file it locked removed or replaced tries again.
//
// Nothing is followed through a symbolic link: the directory and each file are opened with
// O_NOFOLLOW, and anything but a directory (a regular file) is refused. Claims are advisory: a
// claim that cannot be taken safely leaves the problem to be tuned unclaimed (with a note), as
// before claims existed; it never fails a tune.
#pragma once

#include <atomic>
#include <optional>
#include <string>

namespace tcjit::tuner {

// An open claims directory (a file descriptor; the process's, closed on destruction).
class ClaimDir {
public:
  // Opens `dir`, creating it (mode 0700) when missing. nullopt and `why` (what and where) when it
  // cannot be created or opened, or is a symbolic link or not a directory.
  static std::optional<ClaimDir> open(const std::string &dir, std::string &why);
  ClaimDir(ClaimDir &&other) noexcept;
  ClaimDir &operator=(ClaimDir &&other) noexcept;
  ClaimDir(const ClaimDir &) = delete;
  ClaimDir &operator=(const ClaimDir &) = delete;
  ~ClaimDir();

  const std::string &path() const { return path_; }
  int fd() const { return fd_; }

private:
  ClaimDir(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}
  std::string path_;
  int fd_ = -1;
};

// The claims directory of a database file: "<db>.claims".
std::string claims_dir_of(const std::string &db_path);

// The claim file's name for one problem tuned under one tuner version ("<32 hex>.lock").
std::string claim_name(const std::string &problem_key, const std::string &arch,
                       const std::string &tuner_version);

// A claim held by this process: released (the file removed, the lock dropped) on destruction.
class Claim {
public:
  Claim() = default;
  Claim(Claim &&other) noexcept;
  Claim &operator=(Claim &&other) noexcept;
  Claim(const Claim &) = delete;
  Claim &operator=(const Claim &) = delete;
  ~Claim();

  bool held() const { return fd_ >= 0; }
  void release();

private:
  friend struct ClaimTaker;
  int dir_fd_ = -1; // not owned: the ClaimDir outlives its claims
  int fd_ = -1;
  std::string name_;
};

enum class ClaimState {
  taken,   // `claim` is held
  busy,    // another process holds it (`holder`: its pid, when it wrote one)
  refused, // the file is not a regular file, or cannot be created (`why`): tune unclaimed
  stopped, // wait_for_claim: `stop` was set while waiting
};

struct ClaimAttempt {
  ClaimState state = ClaimState::refused;
  Claim claim;
  std::string holder; // busy: the holder's pid ("" when unknown)
  std::string why;    // refused: what and where, in a sentence
};

// Takes the claim `name` in `dir` if no other process holds it; does not wait.
ClaimAttempt try_claim(const ClaimDir &dir, const std::string &name);

// Takes the claim `name` in `dir`, waiting while another process holds it; checks `stop` (may be
// null) every few milliseconds and gives up (stopped) when it is set, so that Ctrl-C still stops.
ClaimAttempt wait_for_claim(const ClaimDir &dir, const std::string &name,
                            const std::atomic<bool> *stop);

} // namespace tcjit::tuner
