// The input (deterministic, seed-sensitive, prefix-stable, in range), the precision probe, the fingerprint, and the
// CPU oracles: each passes what the kernels' orders produce and fails every planted bug: a dropped or doubled element,
// a dropped block, a biased rounding, NaN, a wrong GEMM element anywhere, a lower-precision operand.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <vector>

#include <gtest/gtest.h>

#include "input.hpp"
#include "oracle.hpp"

namespace ladder {
namespace {

constexpr std::size_t kN = std::size_t{1} << 24;
constexpr std::uint64_t kGrid = 264, kBlock = 1024;  // a default stream launch on an H200: 132 SMs x 2 blocks
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
std::vector<float> make(InputMode mode, std::size_t n = kN, std::uint64_t seed = 1, std::uint64_t stream = 0,
                        unsigned range = kDefaultExactRange) {
  std::vector<float> v(n);
  generate_input(seed, stream, mode, v.data(), n, range);
  return v;
}
// `exact` rounded to a float toward zero, as __fadd_rz and __fmaf_rz would.
float toward_zero(double exact) {
  const float f = static_cast<float>(exact);
  return std::fabs(static_cast<double>(f)) > std::fabs(exact) ? std::nextafter(f, 0.0f) : f;
}
float add_rz(float a, float b) { return toward_zero(static_cast<double>(a) + b); }
float add_rn(float a, float b) { return a + b; }
float keep_bits(float x, int bits, bool nearest) {  // the mantissa kept to `bits`, rounded to nearest or truncated
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  const std::uint32_t drop = 23 - bits;
  u = (u + (nearest && drop ? 1u << (drop - 1) : 0u)) & ~((1u << drop) - 1);
  std::memcpy(&x, &u, sizeof u);
  return x;
}
float keep_16_bits(float x) { return keep_bits(x, 16, false); }

// A float sum in the stages' orders: strided chains per thread (with `add`, then `partial`), a tree per block, then the
// combine: a tree (relaunch), one after another in a permuted order (atomic), or one block's walk and tree (two-pass).
float emulate(const std::vector<float>& x, std::size_t grid, std::size_t block, Combine combine,
              float (*add)(float, float) = add_rn, float (*partial)(float) = [](float v) { return v; }) {
  const std::size_t threads = grid * block;
  std::vector<float> sums(threads, 0.0f), blocks(grid), walk(block, 0.0f);
  for (std::size_t t = 0; t < threads; ++t) {
    for (std::size_t i = t; i < x.size(); i += threads) sums[t] = add(sums[t], x[i]);
    sums[t] = partial(sums[t]);
  }
  const auto tree = [](float* v, std::size_t count) {
    for (std::size_t width = 1; width < count; width *= 2) {
      for (std::size_t t = 0; t + width < count; t += 2 * width) v[t] += v[t + width];
    }
    return v[0];
  };
  for (std::size_t b = 0; b < grid; ++b) blocks[b] = tree(&sums[b * block], block);
  if (combine == Combine::kRelaunch) return tree(blocks.data(), grid);
  float total = 0;
  if (combine == Combine::kAtomic) {
    for (std::size_t b = 0; b < grid; ++b) total += blocks[(b * 389) % grid];  // 389 is prime to grid: a permutation
    return total;
  }
  for (std::size_t b = 0; b < grid; ++b) walk[b % block] += blocks[b];
  return tree(walk.data(), block);
}

double ratio(float result, const SumReference& ref, std::uint64_t n, std::uint64_t grid, std::uint64_t block,
             Combine combine) {
  const auto c = check_sum(result, ref, InputMode::kFloat, stage_shape(n, grid, block, combine), n);
  EXPECT_TRUE(c.bounded);
  return c.error / c.tolerance;
}
bool exact_pass(double result, const SumReference& ref, std::uint64_t n) {
  return check_sum(result, ref, InputMode::kExact, SumShape(), n).pass;
}

TEST(Input, DeterministicSeedSensitivePrefixStableUniformAndFingerprinted) {
  for (auto mode : {InputMode::kFloat, InputMode::kExact}) {
    const auto a = make(mode, 3'000'001, 7), b = make(mode, 3'000'001, 7);
    EXPECT_EQ(std::memcmp(a.data(), b.data(), a.size() * sizeof(float)), 0);
  }
  const auto big = make(InputMode::kExact, 1'000'003, 11), small = make(InputMode::kExact, 4097, 11);
  EXPECT_TRUE(std::equal(small.begin(), small.end(), big.begin()));
  auto v = make(InputMode::kFloat, 2'500'000, 3);
  for (std::size_t i : {std::size_t{0}, std::size_t{1}, std::size_t{1} << 20, std::size_t{2'499'999}}) {
    EXPECT_EQ(v[i], input_value(InputSpec(3, 0, InputMode::kFloat).key, i, 0)) << i;
  }
  EXPECT_EQ(reference_sum(InputSpec(11, 0, InputMode::kExact), 4097).sum, reference_sum(small.data(), 4097).sum);
  const auto fp = fingerprint(v.data(), v.size());
  EXPECT_EQ(fp, fingerprint(v.data(), v.size()));
  EXPECT_EQ(fingerprint_hex(fp).size(), 16u);
  std::uint32_t bits;
  std::memcpy(&bits, &v[1'234'567], sizeof bits);
  bits ^= 1;
  std::memcpy(&v[1'234'567], &bits, sizeof bits);
  EXPECT_NE(fp, fingerprint(v.data(), v.size()));
  EXPECT_NE(fingerprint(v.data(), 1000), fingerprint(v.data(), 1001));
  const auto a = make(InputMode::kFloat, 1'000'000, 5), b = make(InputMode::kFloat, 1'000'000, 6);
  const auto c = make(InputMode::kFloat, 1'000'000, 5, 1);
  std::size_t same_ab = 0, same_ac = 0;
  double mean = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_GE(a[i], 0.0f);
    ASSERT_LT(a[i], 1.0f);
    mean += a[i];
    same_ab += a[i] == b[i];
    same_ac += a[i] == c[i];
  }
  EXPECT_NEAR(mean / 1'000'000, 0.5, 0.002);
  EXPECT_LT(same_ab, 10u);  // 24 random bits per element: a coincidence is about 1 in 16 million
  EXPECT_LT(same_ac, 10u);
}

// Non-zero multiples of 1/R in [-1, 1], every one of them (+-1/4, +-1/2, +-3/4, +-1 by default); R as wide as keeps
// every partial sum exact, narrower as n grows.
TEST(Input, ExactModeIsNonZeroKOverRWithTheWidestExactRange) {
  for (unsigned range : {4u, 128u}) {
    std::set<float> seen;
    for (float x : make(InputMode::kExact, 1'000'000, 5, 0, range)) {
      ASSERT_EQ(range * x, std::trunc(range * x));
      ASSERT_NE(x, 0.0f);
      ASSERT_LE(std::fabs(x), 1.0f);
      seen.insert(x);
    }
    EXPECT_EQ(seen.size(), 2 * range);  // fractional parts too, not only integers
  }
  EXPECT_EQ(exact_range(1), 4096u);
  for (auto [e, least] : {std::pair{28, 64u}, {32, 16u}, {36, 1u}}) EXPECT_GE(exact_range(1ull << e), least) << e;
  for (int e = 10; e <= 40; e += 2) {
    const std::uint64_t n = std::uint64_t{1} << e;
    const double r = exact_range(n);  // ten sigmas of the sum of the k below 2^24: every partial sum fits a float
    EXPECT_LT(10 * std::sqrt((r + 1) * (2 * r + 1) / 6 * static_cast<double>(n)), 0x1.0p24) << n;
    EXPECT_LE(exact_range(2 * n), exact_range(n));
  }
}

// The probe: exact in any order, at the head, every lane and the tail; smaller when read in 12 bits or fewer.
TEST(Input, PrecisionProbeIsExactAndAnyLowerPrecisionShows) {
  for (std::uint64_t n : {1ull, 3ull, 5ull, 1000ull, 4099ull, 1ull << 28}) {
    const auto p = precision_probe(7, n);
    ASSERT_FALSE(p.positions.empty());
    EXPECT_LE(p.positions.size(), kProbeElements);
    EXPECT_EQ(p.positions.front(), 0u);
    EXPECT_EQ(p.positions.back(), n - 1);
    std::set<std::uint64_t> lanes;
    float in_order = 0, reversed = 0;
    double lower[3] = {0, 0, 0};
    for (std::size_t i = 0; i < p.positions.size(); ++i) {
      lanes.insert(p.positions[i] % 4);
      in_order += p.values[i];
      reversed += p.values[p.values.size() - 1 - i];
      lower[0] += keep_bits(p.values[i], 10, true);   // TF32 and fp16
      lower[1] += keep_bits(p.values[i], 7, true);    // bf16
      lower[2] += keep_bits(p.values[i], 10, false);  // truncated
    }
    EXPECT_EQ(static_cast<double>(in_order), p.sum) << n;
    EXPECT_EQ(static_cast<double>(reversed), p.sum) << n;
    EXPECT_EQ(lanes.size(), std::min<std::uint64_t>(n, 4)) << n;
    for (double l : lower) EXPECT_LT(l, p.sum) << n;
  }
}

TEST(SumOracle, ExactModeIsExactAndRejectsOneDroppedOrDoubledElement) {
  const auto x = make(InputMode::kExact);
  long long quarters = 0;
  for (float v : x) quarters += static_cast<long long>(4 * v);
  const auto ref = reference_sum(x.data(), x.size());
  EXPECT_EQ(ref.sum, static_cast<double>(quarters) / 4);
  const auto exact = static_cast<float>(ref.sum);
  EXPECT_TRUE(exact_pass(exact, ref, kN));
  for (std::size_t k : {std::size_t{0}, kN / 2, kN - 1}) {
    EXPECT_FALSE(exact_pass(exact - x[k], ref, kN)) << "dropped " << k;
    EXPECT_FALSE(exact_pass(exact + x[k], ref, kN)) << "doubled " << k;
  }
  // At 2^28 the exact input has R = 128: per-thread sums rounded to integers (rintf) are wrong, any float order is not.
  const auto y = make(InputMode::kExact, std::size_t{1} << 22, 1, 0, exact_range(std::uint64_t{1} << 28));
  const auto y_ref = reference_sum(y.data(), y.size());
  std::vector<float> partial(kGrid * kBlock, 0.0f);
  for (std::size_t i = 0; i < y.size(); ++i) partial[i % partial.size()] += y[i];
  float sum = 0, rounded = 0;
  for (float p : partial) {
    sum += p;
    rounded += std::nearbyint(p);
  }
  EXPECT_TRUE(exact_pass(sum, y_ref, y.size()));
  EXPECT_FALSE(exact_pass(rounded, y_ref, y.size()));
}

// A correct kernel's error sits well inside the bound of its shape, in every combine and regime, yet not a thousandth
// of it (the ratio averages above 0.01); the shape's pieces add what they model, and another grid has another bound.
TEST(SumOracle, ShapeBoundHoldsACorrectSumWithinAFractionOfIt) {
  for (auto combine : {Combine::kRelaunch, Combine::kAtomic, Combine::kTwoPass}) {
    for (auto [n, grid, block] : {std::array<std::uint64_t, 3>{kN, kGrid, kBlock}, {kN / 16, kN / 16 / 256, 256},
                                  {1'000'003, 8, 64}}) {
      double sum = 0, worst = 0;
      for (std::uint64_t seed = 1; seed <= 4; ++seed) {
        const auto x = make(InputMode::kFloat, n, seed);
        const double r = ratio(emulate(x, grid, block, combine), reference_sum(x.data(), n), n, grid, block, combine);
        sum += r;
        worst = std::max(worst, r);
      }
      EXPECT_LE(worst, 0.5) << "n " << n << " grid " << grid << " combine " << static_cast<int>(combine);
      EXPECT_GE(sum / 4, 0.01) << "n " << n << " grid " << grid << " combine " << static_cast<int>(combine);
    }
  }
  EXPECT_EQ(SumShape().chain(3, 2, 5).sum_squares(), 5 * 4 * (4 + 9));  // partial sums of 2 and 3 values
  EXPECT_EQ(SumShape().tree(3, 1, 1).sum_squares(), 4 * 6);             // 4 leaves: 2 + 2 + 4 = 2^2 + 2^2 + 4^2
  EXPECT_EQ(SumShape().chain(1, 1, 9).sum_squares(), 0);                // one value: no addition
  EXPECT_EQ(stage_shape(1, 1, 64, Combine::kAtomic).sum_squares(),
            SumShape().chain(4, 1, 1).tree(1, 4, 1).sum_squares());
  EXPECT_NE(stage_shape(kN, 1, kBlock, Combine::kRelaunch).sum_squares(),
            stage_shape(kN, kGrid, kBlock, Combine::kRelaunch).sum_squares());
}

// Biased roundings the exact input and the probe cannot see (their partial sums never round) exceed the bound, and so
// does a dropped block.
TEST(SumOracle, ShapeBoundCatchesBiasedRoundingAndADroppedBlock) {
  const auto x = make(InputMode::kFloat);
  const auto ref = reference_sum(x.data(), kN);
  const auto relaunch = Combine::kRelaunch;
  EXPECT_GT(ratio(emulate(x, kGrid, kBlock, relaunch, add_rz), ref, kN, kGrid, kBlock, relaunch), 1);
  EXPECT_GT(ratio(emulate(x, kGrid, kBlock, relaunch, add_rn, keep_16_bits), ref, kN, kGrid, kBlock, relaunch), 1);
  for (std::size_t start : {std::size_t{0}, kN / 3, kN - 256}) {
    double block = 0;
    for (std::size_t i = start; i < start + 256; ++i) block += x[i];
    const auto bad = check_sum(static_cast<float>(ref.sum - block), ref, InputMode::kFloat,
                               stage_shape(kN, kGrid, kBlock, Combine::kAtomic), kN);
    EXPECT_FALSE(bad.pass) << "dropped block at " << start << ": error " << block << " tolerance " << bad.tolerance;
  }
}

// One sum cannot show a small bias (under the atomic combine its term dominates the bound); the centring test over
// many configurations (as the error study makes it) fails the biased kernel and passes round to nearest.
TEST(SumOracle, CentringOverConfigurationsCatchesABiasOneSumHides) {
  const auto x = make(InputMode::kFloat, kN);
  const auto ref = reference_sum(x.data(), kN);
  EXPECT_LT(ratio(emulate(x, kGrid, kBlock, Combine::kAtomic, add_rz), ref, kN, kGrid, kBlock, Combine::kAtomic), 1);
  for (auto add : {add_rn, add_rz}) {
    double z_sum = 0;
    int count = 0;
    for (std::uint64_t seed = 1; seed <= 6; ++seed) {
      for (auto [n, grid, block] :
           {std::array<std::uint64_t, 3>{1 << 18, 64, 256}, {1 << 16, 8, 64}, {100'000, 16, 128}}) {
        const auto v = make(InputMode::kFloat, n, seed);
        const auto r = reference_sum(v.data(), n);
        const double sigma = sum_bound(stage_shape(n, grid, block, Combine::kAtomic), r.abs_sum, n) / kSumLambda;
        z_sum += (emulate(v, grid, block, Combine::kAtomic, add) - r.sum) / sigma;
        ++count;
      }
    }
    EXPECT_EQ(check_centred(z_sum, count).pass, add == add_rn) << check_centred(z_sum, count).reason;
  }
}

// A bound above kMaxRelativeBound * sum|x|: a result inside it is not judged (skipped, never a pass; the exact check
// decides), one outside even that loose bound fails (a float loop stuck at 2^24 must not pass as "not judged").
TEST(SumOracle, FloatBoundIsNeverVacuous) {
  const auto x = make(InputMode::kFloat, 1000);
  const auto ref = reference_sum(x.data(), x.size());
  const auto huge = SumShape().chain(1'000'000, 1000, 1);
  const auto inside = check_sum(static_cast<float>(ref.sum), ref, InputMode::kFloat, huge, 1000);
  EXPECT_FALSE(inside.bounded);
  EXPECT_FALSE(inside.pass);
  Verdict v;
  record(v, "float", inside);
  EXPECT_FALSE(v.pass());
  EXPECT_STREQ(v.field("float"), "skipped");
  v.add("exact", true);
  EXPECT_TRUE(v.pass()) << "the exact check carries the verdict";
  const auto outside = check_sum(ref.sum + 2 * sum_bound(huge, ref.abs_sum, 1000), ref, InputMode::kFloat, huge, 1000);
  EXPECT_TRUE(outside.bounded);
  EXPECT_FALSE(outside.pass);
  record(v, "float", outside);
  EXPECT_STREQ(v.field("float"), "FAIL");
  EXPECT_FALSE(v.pass());
  for (auto mode : {InputMode::kFloat, InputMode::kExact}) {  // NaN and infinity never pass
    EXPECT_FALSE(check_sum(kNaN, ref, mode, SumShape(), 1000).pass);
    EXPECT_FALSE(check_sum(std::numeric_limits<float>::infinity(), ref, mode, SumShape(), 1000).pass);
  }
}

std::string rate_above_peak(const std::string& who, double rate, double peak, const char* unit) {  // "" if it passed
  Verdict v;
  ladder::rate_above_peak(v, who, rate, peak, unit);
  return v.pass() ? "" : v.failures().front();
}
// A launch that skipped work runs far above the peak and fails, naming both rates; at the peak, or within the margin
// above it, it passes; an unknown rate or peak is not judged.
TEST(RateCheck, ARateNoGpuReachesFailsAndOneAtThePeakPasses) {
  const std::string skipped = rate_above_peak("the stage", 1e9 * 4 / (5e-3 * 1e6), 4800, "GB/s");
  EXPECT_NE(skipped.find("above the theoretical peak of 4800 GB/s"), std::string::npos) << skipped;
  EXPECT_NE(skipped.find("the stage ran at 800000 GB/s"), std::string::npos) << skipped;
  EXPECT_EQ(rate_above_peak("the stage", 4800, 4800, "GB/s"), "");
  EXPECT_EQ(rate_above_peak("the stage", 4800 * (1 + kRateMargin) * 0.999, 4800, "GB/s"), "");
  EXPECT_NE(rate_above_peak("the stage", 4800 * (1 + kRateMargin) * 1.001, 4800, "GB/s"), "");
  EXPECT_EQ(rate_above_peak("the stage", 1e9, NAN, "GB/s"), "");
  EXPECT_EQ(rate_above_peak("the stage", NAN, 4800, "GB/s"), "");
}

struct Problem {
  std::size_t m, n, k;
  std::vector<float> a, b, c;
  GemmCheck check(InputMode mode) const { return check_gemm(a.data(), b.data(), c.data(), m, n, k, mode, 1); }
};

float fma_rn(float a, float b, float c) { return std::fma(a, b, c); }
float fma_rz(float a, float b, float c) { return toward_zero(static_cast<double>(a) * b + c); }
// C = A * B in float, with (fused) multiply-adds along K in order, every term, as the tiled kernel makes them.
std::vector<float> product(const std::vector<float>& a, const std::vector<float>& b, std::size_t m, std::size_t n,
                           std::size_t k, float (*fma)(float, float, float) = fma_rn) {
  std::vector<float> c(m * n);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (std::size_t q = 0; q < k; ++q) acc = fma(a[i * k + q], b[q * n + j], acc);
      c[i * n + j] = acc;
    }
  }
  return c;
}
// A and B from the generator, C = A * B; fma null: the square B = I, whose exact product costs nothing (C = A).
Problem make_gemm(std::size_t m, std::size_t n, std::size_t k, InputMode mode,
                  float (*fma)(float, float, float) = fma_rn) {
  Problem p{m, n, k, std::vector<float>(m * k), std::vector<float>(k * n), {}};
  generate_input(1, 1, mode, p.a.data(), m * k);
  generate_input(1, 2, mode, p.b.data(), k * n);
  if (fma == nullptr) {
    std::fill(p.b.begin(), p.b.end(), 0.0f);
    for (std::size_t i = 0; i < k; ++i) p.b[i * n + i] = 1.0f;
  }
  p.c = fma ? product(p.a, p.b, m, n, k, fma) : p.a;
  return p;
}

// One wrong element (or NaN) fails the full check. At the default 4096^3 the check samples: a wrong exact element away
// from the rows and columns compared one by one fails Freivalds' test, and so do a gross float error and a slightly
// wrong element of the last column.
TEST(GemmOracle, PassesCorrectProductsAndCatchesAWrongElementAnywhere) {
  for (auto mode : {InputMode::kFloat, InputMode::kExact}) {
    for (auto [m, n, k] : {std::array<std::size_t, 3>{1, 1, 1}, {17, 33, 65}, {128, 96, 300}}) {
      const auto r = make_gemm(m, n, k, mode).check(mode);
      EXPECT_TRUE(r.pass) << r.reason;
      EXPECT_EQ(r.elements, m * n);
    }
    auto p = make_gemm(64, 80, 200, mode);
    p.c[37 * 80 + 51] += p.a[37 * 200 + 199] * p.b[199 * 80 + 51];  // one term too many: a wrong loop bound
    const auto r = p.check(mode);
    EXPECT_FALSE(r.pass);
    EXPECT_NE(r.reason.find("C[37][51]"), std::string::npos) << r.reason;
  }
  auto p = make_gemm(20, 20, 20, InputMode::kFloat);
  p.c[399] = kNaN;
  EXPECT_FALSE(p.check(InputMode::kFloat).pass);
  auto big = make_gemm(4096, 4096, 4096, InputMode::kExact, nullptr);
  ASSERT_TRUE(big.check(InputMode::kExact).pass);
  big.c[1234 * 4096 + 2345] += 1.0f;
  const auto sampled = big.check(InputMode::kExact);
  EXPECT_FALSE(sampled.pass);
  EXPECT_NE(sampled.reason.find("Freivalds"), std::string::npos) << sampled.reason;
  EXPECT_NE(sampled.method.find("Freivalds"), std::string::npos);
  big.c[4095 * 4096 + 2048] += 1.0f;  // the last row is compared one by one
  EXPECT_NE(big.check(InputMode::kExact).reason.find("C[4095][2048] = "), std::string::npos);
  auto f = make_gemm(4096, 4096, 4096, InputMode::kFloat, nullptr), gross = f, edge = f;
  ASSERT_TRUE(f.check(InputMode::kFloat).pass);
  gross.c[2000 * 4096 + 3000] += 100.0f;
  EXPECT_FALSE(gross.check(InputMode::kFloat).pass);
  edge.c[1000 * 4096 + 4095] += 0.01f;
  EXPECT_FALSE(edge.check(InputMode::kFloat).pass);
}

// The float bound grows as sqrt(K): it fails every term off by a quarter ulp one way, which a K u bound would pass.
// Multiply-adds rounding toward zero at a small K stay inside every element's bound, but the centring test sees them.
TEST(GemmOracle, FloatBoundAndCentringCatchSystematicErrors) {
  auto p = make_gemm(8, 8, 4096, InputMode::kFloat), biased = p;
  ASSERT_TRUE(p.check(InputMode::kFloat).pass);
  for (std::size_t i = 0; i < 8; ++i) {
    for (std::size_t j = 0; j < 8; ++j) {
      double abs_dot = 0;
      for (std::size_t q = 0; q < 4096; ++q) abs_dot += std::fabs(p.a[i * 4096 + q] * p.b[q * 8 + j]);
      biased.c[i * 8 + j] += static_cast<float>(1024 * 0x1.0p-24 * abs_dot);  // 4096 terms x 1/4 ulp
    }
  }
  EXPECT_FALSE(biased.check(InputMode::kFloat).pass);
  const auto honest = make_gemm(64, 64, 64, InputMode::kFloat).check(InputMode::kFloat);
  ASSERT_TRUE(honest.pass) << honest.reason;
  EXPECT_LT(std::fabs(honest.mean_z), 10 / std::sqrt(64.0 * 64));
  const auto rz = make_gemm(64, 64, 64, InputMode::kFloat, fma_rz).check(InputMode::kFloat);
  EXPECT_FALSE(rz.pass);
  EXPECT_LT(rz.worst, 1) << "each element is within its bound: only the centring test sees this bug";
  EXPECT_NE(rz.reason.find("lean one way"), std::string::npos) << rz.reason;
}

// X (its mantissa kept to `bits`) times the selection matrix, or the selection matrix times X.
std::vector<float> times_selection(std::vector<float> x, std::size_t m, std::size_t n, std::size_t k, GemmProbe probe,
                                   int bits) {
  for (float& v : x) v = keep_bits(v, bits, true);
  std::vector<float> s(probe == GemmProbe::kA ? k * n : m * k, 0.0f);
  for (auto at : selection_ones(probe, m, n, k)) s[at] = 1.0f;
  return probe == GemmProbe::kA ? product(x, s, m, n, k) : product(s, x, m, n, k);
}

// A times a selection matrix is A's selected columns bit for bit; not from A (or B) rounded to TF32 or bf16.
TEST(GemmOracle, ProbesPassExactProductsAndCatchLowerPrecisionOperands) {
  const std::size_t m = 33, n = 40, k = 70;
  for (auto probe : {GemmProbe::kA, GemmProbe::kB}) {
    std::vector<float> x(probe == GemmProbe::kA ? m * k : k * n);
    generate_input(1, probe == GemmProbe::kA ? 1 : 2, InputMode::kFloat, x.data(), x.size());
    auto exact = times_selection(x, m, n, k, probe, 23);
    const auto r = check_gemm_probe(probe, x.data(), exact.data(), m, n, k);
    EXPECT_TRUE(r.pass) << r.reason;
    for (int bits : {10, 7}) {
      const auto low = times_selection(x, m, n, k, probe, bits);
      EXPECT_FALSE(check_gemm_probe(probe, x.data(), low.data(), m, n, k).pass) << bits << " bits";
    }
    exact[7 * n + 30] = exact[7 * n + 12] = exact[20 * n] = kNaN;  // the first in row-major order is named, always
    EXPECT_EQ(check_gemm_probe(probe, x.data(), exact.data(), m, n, k).reason.rfind("C[7][12] = nan", 0), 0u);
  }
}

}  // namespace
}  // namespace ladder
