#include "cli/progress_line.h"

#include <cmath>
#include <cstdio>
#include <iostream>
#include <unistd.h>

namespace tcjit::cli {

ProgressLine::ProgressLine(bool quiet, double plain_interval_seconds)
    : tty_(!quiet && ::isatty(STDERR_FILENO)), quiet_(quiet),
      plain_interval_(plain_interval_seconds), last_plain_(std::chrono::steady_clock::now()) {}

void ProgressLine::show(const std::string &text) {
  if (quiet_)
    return;
  if (tty_) {
    std::cerr << "\r\033[K" << (text.size() > 160 ? text.substr(0, 160) : text) << std::flush;
    shown_ = true;
    return;
  }
  const auto now = std::chrono::steady_clock::now();
  if (std::chrono::duration<double>(now - last_plain_).count() < plain_interval_)
    return;
  last_plain_ = now;
  std::cerr << text << "\n";
}

void ProgressLine::print(const std::string &text) {
  if (quiet_)
    return;
  clear();
  std::cerr << text << "\n";
}

void ProgressLine::clear() {
  if (tty_ && shown_)
    std::cerr << "\r\033[K" << std::flush;
  shown_ = false;
}

std::string short_duration(double seconds) {
  char buf[32];
  if (seconds < 60)
    std::snprintf(buf, sizeof buf, "%.0fs", seconds);
  else if (seconds < 3600)
    std::snprintf(buf, sizeof buf, "%.0fm%02.0fs", std::floor(seconds / 60),
                  std::fmod(seconds, 60));
  else
    std::snprintf(buf, sizeof buf, "%.0fh%02.0fm", std::floor(seconds / 3600),
                  std::fmod(seconds / 60, 60));
  return buf;
}

} // namespace tcjit::cli
