// The progress of long work on standard error: on a terminal one line redrawn in place (at most
// every 0.2 s by the caller's rate); elsewhere (a log, a pipe) plain lines, at most one every
// `plain_interval` seconds (the first after that long), so logs stay short. Silent when `quiet`
// (e.g. with --json).
#pragma once

#include <chrono>
#include <string>

namespace tcjit::cli {

class ProgressLine {
public:
  explicit ProgressLine(bool quiet, double plain_interval_seconds = 10);
  ProgressLine(const ProgressLine &) = delete;
  ProgressLine &operator=(const ProgressLine &) = delete;
  ~ProgressLine() { clear(); }

  bool on_terminal() const { return tty_; }
  bool quiet() const { return quiet_; }
  // Shows `text` as the current state (truncated to 160 columns on a terminal).
  void show(const std::string &text);
  // Prints `text` as a line of its own (after clearing the live line on a terminal).
  void print(const std::string &text);
  // Removes the live line (a terminal); nothing elsewhere.
  void clear();

private:
  bool tty_, quiet_;
  bool shown_ = false;
  double plain_interval_;
  std::chrono::steady_clock::time_point last_plain_;
};

// "12s", "3m05s", "1h02m".
std::string short_duration(double seconds);

} // namespace tcjit::cli
