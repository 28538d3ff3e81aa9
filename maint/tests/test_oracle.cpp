// The sum oracle and its tolerance: exact in the int mode, derived and tight in the float mode, never
// fooled by NaN; and loose enough for the summation orders the kernels really use.
#include <cmath>
#include <cstring>
#include <limits>
#include <algorithm>
#include <array>
#include <vector>

#include <gtest/gtest.h>

#include "input.hpp"
#include "oracle.hpp"
#include "rounding.hpp"

using ladder::Combine;
using ladder::InputMode;

namespace {

constexpr std::size_t kN = std::size_t{1} << 24;

std::vector<float> make(InputMode mode, std::size_t n = kN, std::uint64_t seed = 1) {
  std::vector<float> v(n);
  ladder::generate_input(seed, 0, mode, v.data(), n);
  return v;
}

// a + b rounded toward zero, as __fadd_rz would (the double sum of two such floats is exact here).
float add_rz(float a, float b) { return toward_zero(static_cast<double>(a) + b); }
float add_rn(float a, float b) { return a + b; }

// x with its mantissa cut to 16 bits (truncated toward zero).
float keep_16_bits(float x) {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  u &= 0xFFFFFF80u;
  std::memcpy(&x, &u, sizeof u);
  return x;
}
float as_is(float x) { return x; }

// A float sum in the orders the stages use: grid x block threads each add a strided chain (with `add`), each
// thread's sum goes through `partial` (a truncation, or nothing), each block adds its threads' sums in a
// pairwise tree, and the block sums are combined as `combine` says: a pairwise tree (relaunch), one after
// another in a permuted arrival order (atomic), or a walk of one block then a tree (two-pass, last-block).
float emulate(const std::vector<float>& x, std::size_t grid, std::size_t block, Combine combine,
              float (*add)(float, float) = add_rn, float (*partial)(float) = as_is) {
  const std::size_t threads = grid * block;
  std::vector<float> sums(threads, 0.0f);
  for (std::size_t t = 0; t < threads; ++t) {
    for (std::size_t i = t; i < x.size(); i += threads) sums[t] = add(sums[t], x[i]);
    sums[t] = partial(sums[t]);
  }
  auto tree = [](float* v, std::size_t count) {
    for (std::size_t width = 1; width < count; width *= 2) {
      for (std::size_t t = 0; t + width < count; t += 2 * width) v[t] += v[t + width];
    }
    return v[0];
  };
  std::vector<float> blocks(grid);
  for (std::size_t b = 0; b < grid; ++b) blocks[b] = tree(&sums[b * block], block);
  if (combine == Combine::kRelaunch) return tree(blocks.data(), grid);
  float total = 0;
  if (combine == Combine::kAtomic) {
    for (std::size_t b = 0; b < grid; ++b) total += blocks[(b * 389) % grid];  // 389 is prime to grid: a permutation
    return total;
  }
  std::vector<float> walk(block, 0.0f);
  for (std::size_t b = 0; b < grid; ++b) walk[b % block] += blocks[b];
  return tree(walk.data(), block);
}

// A default stream launch on an H200: 132 SMs x 2 blocks of 1024 threads.
constexpr std::uint64_t kGrid = 264, kBlock = 1024;

double ratio(float result, const ladder::SumReference& ref, std::uint64_t n, std::uint64_t grid, std::uint64_t block,
             Combine combine) {
  const auto c = ladder::check_sum(result, ref, InputMode::kFloat, ladder::stage_shape(n, grid, block, combine), n);
  EXPECT_TRUE(c.bounded);
  return c.error / c.tolerance;
}

}  // namespace

TEST(SumOracle, ExactModeIsExact) {
  const auto x = make(InputMode::kExact);
  long long quarters = 0;
  for (float v : x) quarters += static_cast<long long>(4 * v);
  const auto ref = ladder::reference_sum(x.data(), x.size());
  EXPECT_EQ(ref.sum, static_cast<double>(quarters) / 4);
  EXPECT_TRUE(ladder::check_sum(static_cast<float>(ref.sum), ref, InputMode::kExact, ladder::SumShape(), kN).pass);
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
  EXPECT_TRUE(ladder::check_sum(exact, ref, InputMode::kExact, ladder::SumShape(), n).pass);
  EXPECT_FALSE(ladder::check_sum(rounded, ref, InputMode::kExact, ladder::SumShape(), n).pass);
}

TEST(SumOracle, ExactModeRejectsOneDroppedOrDoubledElement) {
  const auto x = make(InputMode::kExact);
  const auto ref = ladder::reference_sum(x.data(), x.size());
  const auto exact = static_cast<float>(ref.sum);
  for (std::size_t k : {std::size_t{0}, kN / 2, kN - 1}) {
    EXPECT_FALSE(ladder::check_sum(exact - x[k], ref, InputMode::kExact, ladder::SumShape(), kN).pass) << "dropped " << k;
    EXPECT_FALSE(ladder::check_sum(exact + x[k], ref, InputMode::kExact, ladder::SumShape(), kN).pass) << "doubled " << k;
  }
}


// A correct kernel's error sits well inside the bound the harness derives from its shape, in every combine and
// both regimes, and not a thousandth of it: over several inputs the ratio averages above 0.01.
TEST(SumOracle, ShapeBoundHoldsACorrectSumWithinAFractionOfIt) {
  for (auto combine : {Combine::kRelaunch, Combine::kAtomic, Combine::kTwoPass}) {
    for (auto [n, grid, block] : {std::array<std::uint64_t, 3>{kN, kGrid, kBlock}, {kN / 16, kN / 16 / 256, 256},
                                  {1'000'003, 8, 64}}) {
      double sum = 0, worst = 0;
      for (std::uint64_t seed = 1; seed <= 4; ++seed) {
        const auto x = make(InputMode::kFloat, n, seed);
        const double r = ratio(emulate(x, grid, block, combine), ladder::reference_sum(x.data(), n), n, grid, block,
                               combine);
        sum += r;
        worst = std::max(worst, r);
      }
      EXPECT_LE(worst, 0.5) << "n " << n << " grid " << grid << " combine " << static_cast<int>(combine);
      EXPECT_GE(sum / 4, 0.01) << "n " << n << " grid " << grid << " combine " << static_cast<int>(combine);
    }
  }
}

// The biased roundings the exact input and the probe cannot see (their partial sums never round): chains added
// with round-toward-zero, and thread sums cut to 16 mantissa bits, exceed the bound at the default launch.
TEST(SumOracle, ShapeBoundCatchesBiasedRounding) {
  const auto x = make(InputMode::kFloat);
  const auto ref = ladder::reference_sum(x.data(), kN);
  EXPECT_GT(ratio(emulate(x, kGrid, kBlock, Combine::kRelaunch, add_rz), ref, kN, kGrid, kBlock, Combine::kRelaunch), 1);
  EXPECT_GT(ratio(emulate(x, kGrid, kBlock, Combine::kRelaunch, add_rn, keep_16_bits), ref, kN, kGrid, kBlock,
                  Combine::kRelaunch),
            1);
}

// One sum cannot show a small bias: at 2^24 a round-toward-zero chain under 07's atomic combine stays inside the
// bound, whose combine term dominates. Many configurations can: the centring test (as --error-study makes it)
// over their errors, each over its sigma, fails the biased kernel and passes round to nearest.
TEST(SumOracle, CentringOverConfigurationsCatchesABiasOneSumHides) {
  const auto x = make(InputMode::kFloat, kN);
  const auto ref = ladder::reference_sum(x.data(), kN);
  EXPECT_LT(ratio(emulate(x, kGrid, kBlock, Combine::kAtomic, add_rz), ref, kN, kGrid, kBlock, Combine::kAtomic), 1);
  for (auto add : {add_rn, add_rz}) {
    double z_sum = 0;
    int count = 0;
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
      for (auto [n, grid, block] : {std::array<std::uint64_t, 3>{1 << 18, 64, 256}, {1 << 16, 8, 64}, {100'000, 16, 128}}) {
        const auto v = make(InputMode::kFloat, n, seed);
        const auto r = ladder::reference_sum(v.data(), n);
        const auto shape = ladder::stage_shape(n, grid, block, Combine::kAtomic);
        const double sigma = ladder::sum_bound(shape, r.abs_sum, n) / ladder::kSumLambda;
        z_sum += (emulate(v, grid, block, Combine::kAtomic, add) - r.sum) / sigma;
        ++count;
      }
    }
    EXPECT_EQ(ladder::check_centred(z_sum, count).pass, add == add_rn) << ladder::check_centred(z_sum, count).reason;
  }
}

TEST(SumOracle, ShapeBoundRejectsADroppedBlock) {
  const auto x = make(InputMode::kFloat);
  const auto ref = ladder::reference_sum(x.data(), x.size());
  const auto shape = ladder::stage_shape(kN, kGrid, kBlock, Combine::kAtomic);
  for (std::size_t start : {std::size_t{0}, kN / 3, kN - 256}) {
    double block = 0;
    for (std::size_t i = start; i < start + 256; ++i) block += x[i];
    const auto bad = ladder::check_sum(static_cast<float>(ref.sum - block), ref, InputMode::kFloat, shape, kN);
    EXPECT_FALSE(bad.pass) << "dropped block at " << start << ": error " << block << " tolerance " << bad.tolerance;
  }
}

// The pieces of the shape add what they model, and a launch of another grid has another bound (so the harness
// takes the grid from the launch it saw, not from the stage's report).
TEST(SumOracle, ShapePieces) {
  EXPECT_EQ(ladder::SumShape().chain(3, 2, 5).sum_squares(), 5 * 4 * (4 + 9));  // partial sums of 2 and 3 values
  EXPECT_EQ(ladder::SumShape().tree(3, 1, 1).sum_squares(), 4 * 6);             // 4 leaves: 2 + 2 + 4 = 2^2 + 2^2 + 4^2
  EXPECT_EQ(ladder::SumShape().chain(1, 1, 9).sum_squares(), 0);                // one value: no addition
  EXPECT_EQ(ladder::stage_shape(1, 1, 64, Combine::kAtomic).sum_squares(),
            ladder::SumShape().chain(4, 1, 1).tree(1, 4, 1).sum_squares());
  const auto honest = ladder::stage_shape(kN, kGrid, kBlock, Combine::kRelaunch).sum_squares();
  EXPECT_NE(ladder::stage_shape(kN, 1, kBlock, Combine::kRelaunch).sum_squares(), honest);
}

// Where the bound would exceed kMaxRelativeBound * sum|x|, the float result is not judged: the check is neither
// a pass nor a fail, and a Verdict records it as skipped, which never counts as a pass.
TEST(SumOracle, FloatBoundIsNeverVacuous) {
  const auto x = make(InputMode::kFloat, 1000);
  const auto ref = ladder::reference_sum(x.data(), x.size());
  const auto huge = ladder::SumShape().chain(1'000'000, 1000, 1);
  const auto c = ladder::check_sum(static_cast<float>(ref.sum), ref, InputMode::kFloat, huge, 1000);
  EXPECT_FALSE(c.bounded);
  EXPECT_FALSE(c.pass);
  ladder::Verdict v;
  ladder::record(v, "float", c);
  EXPECT_FALSE(v.pass());
  EXPECT_STREQ(v.field("float"), "skipped");
  v.add("exact", true);
  EXPECT_TRUE(v.pass()) << "the exact check carries the verdict";
}

// ...but a result outside even that loose bound fails: a float loop stuck at 2^24 (adding values below 1 to a sum
// of 2^24 changes nothing) must not pass as "not judged".
TEST(SumOracle, LooseBoundStillFailsAResultOutsideIt) {
  const auto x = make(InputMode::kFloat, 1000);
  const auto ref = ladder::reference_sum(x.data(), x.size());
  const auto huge = ladder::SumShape().chain(1'000'000, 1000, 1);
  const double tolerance = ladder::sum_bound(huge, ref.abs_sum, 1000);
  const auto c = ladder::check_sum(ref.sum + 2 * tolerance, ref, InputMode::kFloat, huge, 1000);
  EXPECT_TRUE(c.bounded);
  EXPECT_FALSE(c.pass);
  ladder::Verdict v;
  ladder::record(v, "float", c);
  v.add("exact", true);
  EXPECT_STREQ(v.field("float"), "FAIL");
  EXPECT_FALSE(v.pass());
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
    EXPECT_FALSE(ladder::check_sum(std::numeric_limits<float>::quiet_NaN(), ref, mode, ladder::SumShape(), 1000).pass);
    EXPECT_FALSE(ladder::check_sum(std::numeric_limits<float>::infinity(), ref, mode, ladder::SumShape(), 1000).pass);
  }
}


// The rate check: a launch that skipped work (a kept result served in microseconds) runs far above the peak and
// fails, naming both rates; a rate at the peak, or within the margin above it, passes; an unknown rate or peak
// (--flush none, an FP32 peak this build cannot compute) is not judged.
TEST(RateCheck, ARateNoGpuReachesFailsAndOneAtThePeakPasses) {
  const std::string skipped = ladder::rate_above_peak("the stage", 1e9 * 4 / (5e-3 * 1e6), 4800, "GB/s");
  EXPECT_NE(skipped.find("above the theoretical peak of 4800 GB/s"), std::string::npos) << skipped;
  EXPECT_NE(skipped.find("the stage ran at 800000 GB/s"), std::string::npos) << skipped;
  EXPECT_EQ(ladder::rate_above_peak("the stage", 4800, 4800, "GB/s"), "");
  EXPECT_EQ(ladder::rate_above_peak("the stage", 4800 * (1 + ladder::kRateMargin) * 0.999, 4800, "GB/s"), "");
  EXPECT_NE(ladder::rate_above_peak("the stage", 4800 * (1 + ladder::kRateMargin) * 1.001, 4800, "GB/s"), "");
  EXPECT_EQ(ladder::rate_above_peak("the stage", 1e9, NAN, "GB/s"), "");
  EXPECT_EQ(ladder::rate_above_peak("the stage", NAN, 4800, "GB/s"), "");
}
