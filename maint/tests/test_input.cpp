// The input generator: deterministic, seed-sensitive, prefix-stable, and in range.
#include <cmath>
#include <cstring>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "input.hpp"

using ladder::InputMode;

namespace {
std::vector<float> make(std::uint64_t seed, InputMode mode, std::size_t n, std::uint64_t stream = 0) {
  std::vector<float> v(n);
  ladder::generate_input(seed, stream, mode, v.data(), n);
  return v;
}
bool bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}
}  // namespace

TEST(Input, SameSeedGivesBitwiseTheSameArray) {
  for (auto mode : {InputMode::kFloat, InputMode::kExact}) {
    EXPECT_TRUE(bitwise_equal(make(7, mode, 3'000'001), make(7, mode, 3'000'001)));
  }
}

TEST(Input, ParallelGenerationMatchesElementByElement) {
  const auto v = make(3, InputMode::kFloat, 2'500'000);
  for (std::size_t i : {std::size_t{0}, std::size_t{1}, std::size_t{1} << 20, std::size_t{2'499'999}}) {
    EXPECT_EQ(v[i], ladder::input_value(ladder::InputSpec(3, 0, InputMode::kFloat).key, i, 0)) << i;
  }
}

TEST(Input, ASmallerSizeIsAPrefixOfALargerOne) {
  const auto big = make(11, InputMode::kExact, 1'000'003);
  const auto small = make(11, InputMode::kExact, 4097);
  EXPECT_TRUE(std::equal(small.begin(), small.end(), big.begin()));
}

TEST(Input, DifferentSeedsAndStreamsGiveDifferentArrays) {
  const auto a = make(1, InputMode::kFloat, 100'000);
  const auto b = make(2, InputMode::kFloat, 100'000);
  const auto c = make(1, InputMode::kFloat, 100'000, 1);
  std::size_t same_ab = 0, same_ac = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    same_ab += a[i] == b[i];
    same_ac += a[i] == c[i];
  }
  // 24 random bits per element: a coincidence is about 1 in 16 million.
  EXPECT_LT(same_ab, 10u);
  EXPECT_LT(same_ac, 10u);
}

TEST(Input, FloatModeIsUniformInZeroOne) {
  const auto v = make(5, InputMode::kFloat, 1'000'000);
  double mean = 0;
  for (float x : v) {
    ASSERT_GE(x, 0.0f);
    ASSERT_LT(x, 1.0f);
    mean += x;
  }
  EXPECT_NEAR(mean / v.size(), 0.5, 0.002);
}

TEST(Input, ExactModeIsNonZeroQuartersOfBothSigns) {
  const auto v = make(5, InputMode::kExact, 1'000'000);
  std::set<float> seen;
  for (float x : v) {
    ASSERT_EQ(4 * x, std::trunc(4 * x));
    ASSERT_NE(x, 0.0f);
    ASSERT_LE(std::fabs(x), 1.0f);
    seen.insert(x);
  }
  EXPECT_EQ(seen.size(), 8u);  // +-1/4, +-1/2, +-3/4, +-1
  EXPECT_EQ(seen.count(0.25f) + seen.count(-0.75f), 2u);  // fractional parts, not only integers
}

TEST(Input, ExactModeWithARangeIsKOverR) {
  std::vector<float> v(200000);
  ladder::generate_input(3, 0, InputMode::kExact, v.data(), v.size(), 128);
  std::set<float> seen(v.begin(), v.end());
  EXPECT_EQ(seen.size(), 256u);
  for (float x : seen) {
    EXPECT_EQ(128 * x, std::trunc(128 * x));
    EXPECT_LE(std::fabs(x), 1.0f);
  }
}

// The precision probe: exact in float in any order, probing head, every lane and tail, and smaller whenever its
// values are read in a precision of 12 bits or fewer (here: rounded to TF32 and bf16 precision, and truncated).
float round_to_bits(float x, int bits, bool truncate) {
  int e = 0;
  const double m = std::frexp(static_cast<double>(x), &e);  // x = m 2^e, 0.5 <= m < 1
  const double scaled = std::ldexp(m, bits);
  const double r = truncate ? std::trunc(scaled) : std::nearbyint(scaled);
  return static_cast<float>(std::ldexp(r, e - bits));
}

TEST(Input, PrecisionProbeIsExactAndAnyLowerPrecisionShows) {
  for (std::uint64_t n : {1ull, 3ull, 5ull, 1000ull, 4099ull, 1ull << 28}) {
    const auto p = ladder::precision_probe(7, n);
    ASSERT_FALSE(p.positions.empty());
    EXPECT_LE(p.positions.size(), ladder::kProbeElements);
    EXPECT_EQ(p.positions.front(), 0u);
    EXPECT_EQ(p.positions.back(), n - 1);
    std::set<std::uint64_t> lanes;
    float in_order = 0, reversed = 0;
    double lower[3] = {0, 0, 0};
    for (std::size_t i = 0; i < p.positions.size(); ++i) {
      lanes.insert(p.positions[i] % 4);
      in_order += p.values[i];
      reversed += p.values[p.values.size() - 1 - i];
      lower[0] += round_to_bits(p.values[i], 11, false);  // TF32 and fp16
      lower[1] += round_to_bits(p.values[i], 8, false);   // bf16
      lower[2] += round_to_bits(p.values[i], 11, true);   // truncated
    }
    EXPECT_EQ(static_cast<double>(in_order), p.sum) << n;
    EXPECT_EQ(static_cast<double>(reversed), p.sum) << n;
    if (n >= 8) {
      EXPECT_EQ(lanes.size(), 4u) << n;
    }
    for (double l : lower) EXPECT_LT(l, p.sum) << n;
  }
}

TEST(Input, FingerprintIsStableAndSeesOneFlippedBit) {
  auto v = make(9, InputMode::kFloat, 1'500'000);
  const auto fp = ladder::fingerprint(v.data(), v.size());
  EXPECT_EQ(fp, ladder::fingerprint(v.data(), v.size()));
  EXPECT_EQ(ladder::fingerprint_hex(fp).size(), 16u);
  std::uint32_t bits;
  std::memcpy(&bits, &v[1'234'567], sizeof bits);
  bits ^= 1;
  std::memcpy(&v[1'234'567], &bits, sizeof bits);
  EXPECT_NE(fp, ladder::fingerprint(v.data(), v.size()));
  EXPECT_NE(ladder::fingerprint(v.data(), 1000), ladder::fingerprint(v.data(), 1001));
}
