#include "stats.hpp"

#include <algorithm>

namespace ladder {

TimingStats summarize(std::vector<double> samples_ms) {
  TimingStats s;
  if (samples_ms.empty()) return s;
  std::sort(samples_ms.begin(), samples_ms.end());
  const std::size_t n = samples_ms.size();
  s.reps = static_cast<int>(n);
  s.min_ms = samples_ms.front();
  s.max_ms = samples_ms.back();
  s.median_ms = n % 2 ? samples_ms[n / 2] : 0.5 * (samples_ms[n / 2 - 1] + samples_ms[n / 2]);
  return s;
}

}  // namespace ladder
