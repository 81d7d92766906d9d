// The time left that `tcjit run`'s progress line shows for an emulator launch.
#include "cli/progress_estimate.h"

#include <gtest/gtest.h>

namespace tcjit::cli {
namespace {

Progress report(uint64_t done, uint64_t total, double elapsed) {
  Progress p;
  p.what = "blocks";
  p.done = done;
  p.total = total;
  p.elapsed_seconds = elapsed;
  return p;
}

// Steady progress: the time left from the rate measured, counting down between blocks.
TEST(ProgressEstimate, SteadyLaunchCountsDown) {
  LaunchProgressTrack track;
  Progress p = report(4, 16, 10);
  note_progress(track, p);
  EXPECT_EQ(time_left_text(p, track, 600), ", about 30s left");
  p = report(4, 16, 20); // no block finished since: 10 s less left, not more
  note_progress(track, p);
  EXPECT_EQ(time_left_text(p, track, 600), ", about 20s left");
}

// 15 of 16 blocks in 10 s, then one that never finishes (an act=custom function that loops): the
// line says the estimate is past and for how long no block finished, with the time limit; it never
// goes on promising "about 19s left".
TEST(ProgressEstimate, AStalledLaunchSaysItIsPastTheEstimate) {
  LaunchProgressTrack track;
  note_progress(track, report(15, 16, 10));
  Progress p = report(15, 16, 315);
  note_progress(track, p);
  const std::string text = time_left_text(p, track, 600);
  EXPECT_EQ(text, ", past the estimate of 11s: no block finished for 5m05s (time limit 10m00s)");
  EXPECT_EQ(text.find("left"), std::string::npos) << text;
  EXPECT_EQ(time_left_text(p, track, 0), ", past the estimate of 11s: no block finished for 5m05s");
}

TEST(ProgressEstimate, NoBlockYetAndANewLaunch) {
  LaunchProgressTrack track;
  Progress p = report(0, 8, 3);
  note_progress(track, p);
  EXPECT_EQ(time_left_text(p, track, 600), "");
  p = report(0, 8, 42);
  note_progress(track, p);
  EXPECT_EQ(time_left_text(p, track, 600), ", no block finished yet (time limit 10m00s)");
  note_progress(track, report(8, 8, 50));
  EXPECT_EQ(time_left_text(report(8, 8, 50), track, 600), "");
  // the next launch (fewer blocks done) starts its own measure
  p = report(1, 4, 2);
  note_progress(track, p);
  EXPECT_EQ(time_left_text(p, track, 600), ", about 6s left");
  // and after it ends, one whose first report has as many blocks done does too
  note_progress(track, report(4, 4, 8));
  p = report(4, 100, 1);
  note_progress(track, p);
  EXPECT_EQ(time_left_text(p, track, 600), ", about 24s left");
}

} // namespace
} // namespace tcjit::cli
