// Summary statistics of repeated timings.
#pragma once

#include <vector>

#include "gpu_clocks.hpp"

namespace ladder {

struct TimingStats {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  int reps = 0;
  ClockSample clocks_start, clocks_end;  // at the first and the last timed repetition
  int hold_timeouts = 0;                 // repetitions not held to the end (a hold timed out; see GpuTimer::time)
};

// Median (the mean of the two middle samples for an even count), minimum and maximum. Empty -> zeros.
TimingStats summarize(std::vector<double> samples_ms);

}  // namespace ladder
