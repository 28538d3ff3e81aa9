// The constants of a reduce stage's run (reduce_harness.cpp says what a run does; docs/method.md quotes them).
#pragma once

#include <cstdint>

namespace ladder::reduce_run {
constexpr unsigned kMaxGrid = 2147483647u;  // gridDim.x limit
constexpr unsigned kMinBlock = 64;
constexpr unsigned kSelfTestMaxOffset = 3;
constexpr std::uint64_t kStudySeeds = 8;  // --error-study: inputs; random sizes below 2^kStudyMaxLog2
constexpr int kStudyMaxLog2 = 24;
constexpr int kStudyLargeLog2[] = {26, 28};  // and these, the published sizes' neighbourhood
// Launches of the exact input per configuration. A launcher or kernel that depends on what an earlier launch left
// behind (a counter not reset, a memset skipped after the first calls) goes wrong from the second or the third launch
// on; every warm-up and timed launch is checked too.
constexpr int kCheckedLaunches = 3;
}  // namespace ladder::reduce_run
