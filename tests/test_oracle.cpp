// The sum oracle and its tolerance: exact in the int mode, derived and tight in the float mode, never
// fooled by NaN; and loose enough for the summation orders the kernels really use.
#include <cmath>
#include <limits>
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

TEST(SumOracle, IntModeIsExact) {
  const auto x = make(InputMode::kInt);
  long long exact = 0;
  for (float v : x) exact += static_cast<long long>(v);
  const auto ref = ladder::reference_sum(x.data(), x.size());
  EXPECT_EQ(ref.sum, static_cast<double>(exact));
  EXPECT_TRUE(ladder::check_sum(static_cast<float>(exact), ref, InputMode::kInt, 1).pass);
}

TEST(SumOracle, IntModeRejectsOneDroppedOrDoubledElement) {
  const auto x = make(InputMode::kInt);
  const auto ref = ladder::reference_sum(x.data(), x.size());
  const auto exact = static_cast<float>(ref.sum);
  for (std::size_t k : {std::size_t{0}, kN / 2, kN - 1}) {
    EXPECT_FALSE(ladder::check_sum(exact - x[k], ref, InputMode::kInt, 1).pass) << "dropped " << k;
    EXPECT_FALSE(ladder::check_sum(exact + x[k], ref, InputMode::kInt, 1).pass) << "doubled " << k;
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

TEST(SumOracle, FloatToleranceAcceptsASequentialAtomicChain) {
  const auto x = make(InputMode::kFloat);
  const auto ref = ladder::reference_sum(x.data(), x.size());
  // Block sums added one after another into one float, as atomicAdd does, in a scrambled order.
  std::vector<float> blocks(kGrid, 0.0f);
  for (std::size_t i = 0; i < x.size(); ++i) blocks[(i / 4) % kGrid] += x[i];
  float total = 0;
  for (std::size_t b = 0; b < kGrid; ++b) total += blocks[(b * 389) % kGrid];
  EXPECT_TRUE(ladder::check_sum(total, ref, InputMode::kFloat, ladder::summation_depth(kN, kGrid, kBlock, Combine::kAtomic)).pass);
}

TEST(SumOracle, NaNAndInfinityNeverPass) {
  const auto x = make(InputMode::kFloat, 1000);
  const auto ref = ladder::reference_sum(x.data(), x.size());
  for (auto mode : {InputMode::kFloat, InputMode::kInt}) {
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
