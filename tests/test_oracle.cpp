// The sum oracle and its tolerance: exact in the int mode, derived and tight in the float mode, never
// fooled by NaN; and loose enough for the summation orders the kernels really use.
#include <cmath>
#include <limits>
#include <utility>
#include <algorithm>
#include <vector>

#include <gtest/gtest.h>

#include "input.hpp"
#include "oracle.hpp"

using ladder::Combine;
using ladder::InputMode;

namespace {

constexpr std::size_t kN = std::size_t{1} << 24;

std::vector<float> make(InputMode mode, std::size_t n = kN, std::uint64_t seed = 1) {
  std::vector<float> v(n);
  ladder::generate_input(seed, 0, mode, v.data(), n);
  return v;
}

// The float sum in the order 02..07 use: T threads each add a strided chain, then a pairwise tree.
float emulate_gpu_sum(const std::vector<float>& x, std::size_t threads) {
  std::vector<float> partial(threads, 0.0f);
  for (std::size_t t = 0; t < threads; ++t) {
    for (std::size_t i = t; i < x.size(); i += threads) partial[t] += x[i];
  }
  for (std::size_t width = 1; width < threads; width *= 2) {
    for (std::size_t t = 0; t + width < threads; t += 2 * width) partial[t] += partial[t + width];
  }
  return partial[0];
}

// A default stream launch on an H200: 132 SMs x 2 blocks of 1024 threads.
constexpr std::uint64_t kGrid = 264, kBlock = 1024;

}  // namespace

TEST(SumOracle, ExactModeIsExact) {
  const auto x = make(InputMode::kExact);
  long long quarters = 0;
  for (float v : x) quarters += static_cast<long long>(4 * v);
  const auto ref = ladder::reference_sum(x.data(), x.size());
  EXPECT_EQ(ref.sum, static_cast<double>(quarters) / 4);
  EXPECT_TRUE(ladder::check_sum(static_cast<float>(ref.sum), ref, InputMode::kExact, 1).pass);
}

// The default run's exact input at 2^28 has R = 128: a kernel that rounds its per-thread sums to integers
// (rintf) is wrong, while the float order of the additions never is.
TEST(SumOracle, ExactModeCatchesPartialSumsRoundedToIntegers) {
  const std::size_t n = std::size_t{1} << 22;
  std::vector<float> x(n);
  ladder::generate_input(1, 0, InputMode::kExact, x.data(), n, ladder::exact_range(std::uint64_t{1} << 28));
  const auto ref = ladder::reference_sum(x.data(), n);
  std::vector<float> partial(kGrid * kBlock, 0.0f);
  for (std::size_t i = 0; i < n; ++i) partial[i % partial.size()] += x[i];
  float exact = 0, rounded = 0;
  for (float p : partial) {
    exact += p;
    rounded += std::nearbyint(p);
  }
  EXPECT_TRUE(ladder::check_sum(exact, ref, InputMode::kExact, 1).pass);
  EXPECT_FALSE(ladder::check_sum(rounded, ref, InputMode::kExact, 1).pass);
}

TEST(SumOracle, ExactModeRejectsOneDroppedOrDoubledElement) {
  const auto x = make(InputMode::kExact);
  const auto ref = ladder::reference_sum(x.data(), x.size());
  const auto exact = static_cast<float>(ref.sum);
  for (std::size_t k : {std::size_t{0}, kN / 2, kN - 1}) {
    EXPECT_FALSE(ladder::check_sum(exact - x[k], ref, InputMode::kExact, 1).pass) << "dropped " << k;
    EXPECT_FALSE(ladder::check_sum(exact + x[k], ref, InputMode::kExact, 1).pass) << "doubled " << k;
  }
}

TEST(SumOracle, FloatToleranceAcceptsTheKernelsOrderAndRejectsADroppedBlock) {
  const auto x = make(InputMode::kFloat);
  const auto ref = ladder::reference_sum(x.data(), x.size());
  const std::uint64_t depth = ladder::summation_depth(kN, kGrid, kBlock, Combine::kRelaunch);
  const float gpu = emulate_gpu_sum(x, kGrid * kBlock);
  const auto ok = ladder::check_sum(gpu, ref, InputMode::kFloat, depth);
  EXPECT_TRUE(ok.pass) << ok.reason;
  // Drop any one block of 256 consecutive elements.
  for (std::size_t start : {std::size_t{0}, kN / 3, kN - 256}) {
    double block = 0;
    for (std::size_t i = start; i < start + 256; ++i) block += x[i];
    const auto bad = ladder::check_sum(static_cast<float>(ref.sum - block), ref, InputMode::kFloat, depth);
    EXPECT_FALSE(bad.pass) << "dropped block at " << start << ": error " << block << " tolerance " << bad.tolerance;
  }
}

TEST(SumOracle, FloatToleranceAcceptsTheTreeRegimeOrder) {
  const auto x = make(InputMode::kFloat, 1'000'003);
  const auto ref = ladder::reference_sum(x.data(), x.size());
  // One element per thread, then the tree: the pairwise order over all elements.
  const float gpu = emulate_gpu_sum(x, x.size());
  const auto grid = (x.size() + 255) / 256;
  EXPECT_TRUE(ladder::check_sum(gpu, ref, InputMode::kFloat, ladder::summation_depth(x.size(), grid, 256, Combine::kRelaunch)).pass);
}

// The order 07's atomic combine really uses: every thread of a grid x block launch adds its strided chain,
// each block adds its threads' sums in a tree, and the block sums reach *out one after another, in an order
// the hardware picks. Returns the result and the longest chain of additions any input went through.
std::pair<float, std::uint64_t> emulate_atomic_sum(const std::vector<float>& x, std::size_t grid, std::size_t block) {
  const std::size_t threads = grid * block;
  std::vector<float> partial(threads, 0.0f);
  std::uint64_t chain = 0;
  for (std::size_t t = 0; t < threads; ++t) {
    std::uint64_t len = 0;
    for (std::size_t i = t; i < x.size(); i += threads, ++len) partial[t] += x[i];
    chain = std::max(chain, len);
  }
  std::vector<float> blocks(grid);
  std::uint64_t tree = 0;
  for (std::size_t b = 0; b < grid; ++b) {
    float* p = &partial[b * block];
    tree = 0;
    for (std::size_t width = 1; width < block; width *= 2, ++tree) {
      for (std::size_t t = 0; t + width < block; t += 2 * width) p[t] += p[t + width];
    }
    blocks[b] = p[0];
  }
  float total = 0;
  for (std::size_t b = 0; b < grid; ++b) total += blocks[(b * 389) % grid];  // 389 is prime to grid: a permutation
  return {total, chain + tree + grid};
}

TEST(SumOracle, FloatBoundAcceptsTheAtomicOrderAndItsDepthCoversTheChains) {
  const auto x = make(InputMode::kFloat);
  const auto ref = ladder::reference_sum(x.data(), x.size());
  const auto [total, chain] = emulate_atomic_sum(x, kGrid, kBlock);
  const std::uint64_t depth = ladder::summation_depth(kN, kGrid, kBlock, Combine::kAtomic);
  EXPECT_LE(chain, depth) << "the depth the harness derives is shallower than the additions really made";
  const auto c = ladder::check_sum(total, ref, InputMode::kFloat, depth);
  EXPECT_TRUE(c.bounded);
  EXPECT_TRUE(c.pass) << c.reason;
}

TEST(SumOracle, FloatBoundIsNeverVacuous) {
  const auto x = make(InputMode::kFloat, 1000);
  const auto ref = ladder::reference_sum(x.data(), x.size());
  // A depth where the bound would exceed kMaxRelativeBound * sum|x|: the float result is not judged, and the
  // check says so (bounded = false) instead of claiming a pass that means something.
  const std::uint64_t deep = 1ull << 40;
  const auto c = ladder::check_sum(static_cast<float>(ref.sum), ref, InputMode::kFloat, deep);
  EXPECT_FALSE(c.bounded);
  // Wherever a bound is reported, it is finite and at most kMaxRelativeBound of sum|x|.
  for (std::uint64_t d = 1; d < deep; d *= 2) {
    const auto b = ladder::check_sum(static_cast<float>(ref.sum), ref, InputMode::kFloat, d);
    if (!b.bounded) break;
    EXPECT_TRUE(std::isfinite(b.tolerance));
    EXPECT_LE(b.tolerance, ladder::kMaxRelativeBound * ref.abs_sum) << "depth " << d;
  }
}

TEST(SumOracle, ExactRangeKeepsEverySumExactAndShrinksWithN) {
  EXPECT_EQ(ladder::exact_range(1), 4096u);
  EXPECT_GE(ladder::exact_range(std::uint64_t{1} << 28), 64u);
  EXPECT_GE(ladder::exact_range(std::uint64_t{1} << 32), 16u);
  EXPECT_GE(ladder::exact_range(std::uint64_t{1} << 36), 1u);
  for (int e = 10; e <= 40; e += 2) {
    const std::uint64_t n = std::uint64_t{1} << e;
    const double r = ladder::exact_range(n);
    // Ten standard deviations of the sum of the k stay below 2^24, so every partial sum is a multiple of 1/R
    // that float holds.
    EXPECT_LT(10 * std::sqrt((r + 1) * (2 * r + 1) / 6 * static_cast<double>(n)), 0x1.0p24) << n;
    EXPECT_LE(ladder::exact_range(2 * n), ladder::exact_range(n));
  }
  // In range and never zero.
  std::vector<float> v(100000);
  ladder::generate_input(3, 0, InputMode::kExact, v.data(), v.size(), 128);
  for (float e : v) {
    EXPECT_NE(e, 0.0f);
    EXPECT_LE(std::fabs(e), 1.0f);
    EXPECT_EQ(128 * e, std::round(128 * e));
  }
}

TEST(SumOracle, NaNAndInfinityNeverPass) {
  const auto x = make(InputMode::kFloat, 1000);
  const auto ref = ladder::reference_sum(x.data(), x.size());
  for (auto mode : {InputMode::kFloat, InputMode::kExact}) {
    EXPECT_FALSE(ladder::check_sum(std::numeric_limits<float>::quiet_NaN(), ref, mode, 1000).pass);
    EXPECT_FALSE(ladder::check_sum(std::numeric_limits<float>::infinity(), ref, mode, 1000).pass);
  }
}

TEST(SumOracle, GammaAndDepth) {
  EXPECT_DOUBLE_EQ(ladder::gamma_float(0), 0.0);
  const double du = 100 * 0x1.0p-24;
  EXPECT_DOUBLE_EQ(ladder::gamma_float(100), du / (1 - du));
  EXPECT_TRUE(std::isinf(ladder::gamma_float(1 << 24)));
  // The combine strategies add what they add.
  const auto relaunch = ladder::summation_depth(kN, kGrid, kBlock, Combine::kRelaunch);
  EXPECT_EQ(ladder::summation_depth(kN, kGrid, kBlock, Combine::kAtomic), relaunch + kGrid);
  EXPECT_EQ(ladder::summation_depth(kN, kGrid, kBlock, Combine::kLastBlock), relaunch + (kGrid + kBlock - 1) / kBlock);
  // Tree regime: one element per thread.
  EXPECT_EQ(ladder::summation_depth(1, 1, 64, Combine::kRelaunch), 1u + 2 * 1 + 8);
}
