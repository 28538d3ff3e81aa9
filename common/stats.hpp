// Summary statistics of repeated timings.
#pragma once

#include <vector>

namespace ladder {

struct TimingStats {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  int reps = 0;
};

// Median (the mean of the two middle samples for an even count), minimum and maximum. Empty -> zeros.
TimingStats summarize(std::vector<double> samples_ms);

}  // namespace ladder
