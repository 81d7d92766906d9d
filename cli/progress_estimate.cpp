#include "cli/progress_estimate.h"

#include "cli/progress_line.h"

namespace tcjit::cli {

void note_progress(LaunchProgressTrack &track, const Progress &report) {
  // a new launch: the first report, fewer blocks done, or its clock started again
  if (!track.started || report.done < track.done || report.elapsed_seconds < track.done_at) {
    track = {report.done, report.elapsed_seconds, true};
  } else if (report.done > track.done) {
    track.done = report.done;
    track.done_at = report.elapsed_seconds;
  }
  if (report.total > 0 && report.done >= report.total)
    track.started = false; // the launch ended: the next report is another's
}

std::string time_left_text(const Progress &report, const LaunchProgressTrack &track,
                           double timeout_seconds) {
  if (report.total == 0 || report.done >= report.total)
    return "";
  const std::string limit =
      timeout_seconds > 0 ? " (time limit " + short_duration(timeout_seconds) + ")" : "";
  const double elapsed = report.elapsed_seconds;
  // Blocks done as of the latest that finished: the rate measured then, not diluted by a stall.
  const uint64_t done = track.started ? track.done : report.done;
  const double done_at = track.started ? track.done_at : elapsed;
  if (done == 0)
    return elapsed >= 10 ? ", no block finished yet" + limit : "";
  const double predicted_total = done_at / double(done) * double(report.total);
  const double left = predicted_total - elapsed;
  if (left > 0)
    return ", about " + short_duration(left) + " left";
  std::string text = ", past the estimate of " + short_duration(predicted_total);
  const double stalled = elapsed - done_at;
  if (stalled >= 1)
    text += ": no block finished for " + short_duration(stalled);
  return text + limit;
}

} // namespace tcjit::cli
