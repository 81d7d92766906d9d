// The time left of an emulator launch, as the progress line shows it: from the blocks done and
// when the latest of them finished. Honest when the launch stops progressing (a kernel or an
// act=custom function that loops): once the time is past the estimate it says so, and for how
// long no block has finished, instead of an "about 19s left" that never comes.
#pragma once

#include "tcjit/tools.hpp"

#include <cstdint>
#include <string>

namespace tcjit::cli {

// What the reports of one launch said so far.
struct LaunchProgressTrack {
  uint64_t done = 0;    // blocks done at the latest report
  double done_at = 0;   // the launch's elapsed seconds when `done` was first reported
  bool started = false; // a report of this launch was seen
};

// Folds a report into `track`. After a report of all blocks done, or one with fewer blocks done or
// an earlier time than the last, the report is of a new launch.
void note_progress(LaunchProgressTrack &track, const Progress &report);

// ", about 19s left"; ", past the estimate of 11s: no block finished for 5m04s (time limit
// 10m00s)"; ", no block finished yet (time limit 10m00s)" after 10 s without one; "" when there is
// nothing to say. `timeout_seconds`: the launch's wall-clock limit, 0 for none.
std::string time_left_text(const Progress &report, const LaunchProgressTrack &track,
                           double timeout_seconds);

} // namespace tcjit::cli
