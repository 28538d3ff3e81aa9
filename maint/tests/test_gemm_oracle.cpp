// The GEMM oracle: passes a correct float product, catches a planted wrong element (in the full check and
// at the default 4096^3 size, where it samples and runs Freivalds' test), and never passes NaN.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "input.hpp"
#include "oracle.hpp"
#include "rounding.hpp"

using ladder::InputMode;

namespace {

struct Problem {
  std::size_t m, n, k;
  std::vector<float> a, b, c;
};

// A and B from the generator, C = A * B computed in float with fused multiply-adds along K, the order
// the tiled kernel uses.
Problem make(std::size_t m, std::size_t n, std::size_t k, InputMode mode) {
  Problem p{m, n, k, std::vector<float>(m * k), std::vector<float>(k * n), std::vector<float>(m * n)};
  ladder::generate_input(1, 1, mode, p.a.data(), m * k);
  ladder::generate_input(1, 2, mode, p.b.data(), k * n);
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (std::size_t q = 0; q < k; ++q) acc = std::fma(p.a[i * k + q], p.b[q * n + j], acc);
      p.c[i * n + j] = acc;
    }
  }
  return p;
}

ladder::GemmCheck check(const Problem& p, InputMode mode) {
  return ladder::check_gemm(p.a.data(), p.b.data(), p.c.data(), p.m, p.n, p.k, mode, 1);
}

// The default size of 08_gemm_tiled, with B = I so that the exact product costs nothing to form: C = A.
Problem default_size_identity(InputMode mode) {
  const std::size_t s = 4096;
  Problem p{s, s, s, std::vector<float>(s * s), std::vector<float>(s * s, 0.0f), {}};
  ladder::generate_input(1, 1, mode, p.a.data(), s * s);
  for (std::size_t i = 0; i < s; ++i) p.b[i * s + i] = 1.0f;
  p.c = p.a;
  return p;
}

}  // namespace

TEST(GemmOracle, FullCheckPassesCorrectProducts) {
  for (auto mode : {InputMode::kFloat, InputMode::kExact}) {
    for (auto [m, n, k] : {std::array<std::size_t, 3>{1, 1, 1}, {17, 33, 65}, {128, 96, 300}}) {
      const auto r = check(make(m, n, k, mode), mode);
      EXPECT_TRUE(r.pass) << r.reason;
      EXPECT_EQ(r.elements, m * n);
    }
  }
}

TEST(GemmOracle, FullCheckCatchesOneWrongElement) {
  for (auto mode : {InputMode::kFloat, InputMode::kExact}) {
    auto p = make(64, 80, 200, mode);
    // One product term too many or too few: the smallest error a wrong loop bound makes.
    p.c[37 * 80 + 51] += p.a[37 * 200 + 199] * p.b[199 * 80 + 51];
    const auto r = check(p, mode);
    EXPECT_FALSE(r.pass);
    EXPECT_NE(r.reason.find("C[37][51]"), std::string::npos) << r.reason;
  }
}

TEST(GemmOracle, NaNAnywhereFails) {
  auto p = make(20, 20, 20, InputMode::kFloat);
  p.c[399] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_FALSE(check(p, InputMode::kFloat).pass);
}

TEST(GemmOracle, DefaultSizeExactModeCatchesAWrongElementAnywhere) {
  auto p = default_size_identity(InputMode::kExact);
  ASSERT_TRUE(check(p, InputMode::kExact).pass);
  // Away from the rows and columns that are compared one by one: only Freivalds' test can see it.
  p.c[1234 * 4096 + 2345] += 1.0f;
  const auto r = check(p, InputMode::kExact);
  EXPECT_FALSE(r.pass);
  EXPECT_NE(r.reason.find("Freivalds"), std::string::npos) << r.reason;
  EXPECT_NE(r.method.find("Freivalds"), std::string::npos);
}

TEST(GemmOracle, DefaultSizeFloatModeCatchesAGrossErrorAndSampledElements) {
  auto p = default_size_identity(InputMode::kFloat);
  ASSERT_TRUE(check(p, InputMode::kFloat).pass);
  auto gross = p;
  gross.c[2000 * 4096 + 3000] += 100.0f;
  EXPECT_FALSE(check(gross, InputMode::kFloat).pass);
  auto edge = p;  // the last column is compared one by one
  edge.c[1000 * 4096 + 4095] += 0.01f;
  EXPECT_FALSE(check(edge, InputMode::kFloat).pass);
}

// The float bound is probabilistic (sqrt(K) growth): it passes a correct product at K = 4096 and fails one whose
// every term is off by a quarter of an ulp in the same direction, which a worst-case bound (K u) would pass.
TEST(GemmOracle, FloatBoundIsProbabilisticAndCatchesASystematicError) {
  auto p = make(8, 8, 4096, InputMode::kFloat);
  ASSERT_TRUE(check(p, InputMode::kFloat).pass);
  auto biased = p;
  for (std::size_t i = 0; i < 8; ++i) {
    for (std::size_t j = 0; j < 8; ++j) {
      double abs_dot = 0;
      for (std::size_t q = 0; q < 4096; ++q) abs_dot += std::fabs(p.a[i * 4096 + q] * p.b[q * 8 + j]);
      biased.c[i * 8 + j] += static_cast<float>(1024 * 0x1.0p-24 * abs_dot);  // 4096 terms x 1/4 ulp
    }
  }
  EXPECT_FALSE(check(biased, InputMode::kFloat).pass);
}

// fma(a, b, c) rounded toward zero, as __fmaf_rz would (the double a*b + c is exact enough here: the products of
// two floats are exact in double, and the sums stay far from double's last bits at these sizes).
float fma_rz(float a, float b, float c) { return toward_zero(static_cast<double>(a) * b + c); }

// A kernel whose multiply-adds round toward zero at a small K: every element stays inside its own bound, but the
// errors all lean one way, and the centring test over the elements sees it. Round to nearest is centred.
TEST(GemmOracle, CentringCatchesABiasedRoundingAtSmallK) {
  const std::size_t m = 64, n = 64, k = 64;
  auto p = make(m, n, k, InputMode::kFloat);
  const auto honest = check(p, InputMode::kFloat);
  ASSERT_TRUE(honest.pass) << honest.reason;
  EXPECT_LT(std::fabs(honest.mean_z), 10 / std::sqrt(double(m * n)));
  auto rz = p;
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      float acc = 0.0f;
      for (std::size_t q = 0; q < k; ++q) acc = fma_rz(p.a[i * k + q], p.b[q * n + j], acc);
      rz.c[i * n + j] = acc;
    }
  }
  const auto biased = check(rz, InputMode::kFloat);
  EXPECT_FALSE(biased.pass);
  EXPECT_LT(biased.worst, 1) << "each element is within its bound: only the centring test sees this bug";
  EXPECT_NE(biased.reason.find("lean one way"), std::string::npos) << biased.reason;
}

// The probes: A times a selection matrix is A's selected columns bit for bit; the same C computed from A
// rounded to TF32 (10 mantissa bits) or bf16 (7) is not, and neither is B's probe with B rounded.
float keep_mantissa_bits(float x, int bits) {
  std::uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  if (bits >= 23) return x;
  const std::uint32_t drop = 23 - bits;
  u = (u + (1u << (drop - 1))) & ~((1u << drop) - 1);  // round to nearest
  std::memcpy(&x, &u, sizeof u);
  return x;
}

std::vector<float> times_selection(const std::vector<float>& x, std::size_t m, std::size_t n, std::size_t k,
                                   ladder::GemmProbe probe, int bits) {
  // The product with the selection matrix, computed as a kernel would: every term, zeros included.
  std::vector<float> s(probe == ladder::GemmProbe::kA ? k * n : m * k, 0.0f), c(m * n);
  for (auto at : ladder::selection_ones(probe, m, n, k)) s[at] = 1.0f;
  const bool a_probe = probe == ladder::GemmProbe::kA;
  for (std::size_t i = 0; i < m; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      float acc = 0;
      for (std::size_t q = 0; q < k; ++q) {
        const float a = a_probe ? keep_mantissa_bits(x[i * k + q], bits) : s[i * k + q];
        const float b = a_probe ? s[q * n + j] : keep_mantissa_bits(x[q * n + j], bits);
        acc = std::fma(a, b, acc);
      }
      c[i * n + j] = acc;
    }
  }
  return c;
}

TEST(GemmOracle, ProbesPassExactProductsAndCatchLowerPrecisionOperands) {
  const std::size_t m = 33, n = 40, k = 70;
  for (auto probe : {ladder::GemmProbe::kA, ladder::GemmProbe::kB}) {
    const bool a_probe = probe == ladder::GemmProbe::kA;
    std::vector<float> x(a_probe ? m * k : k * n);
    ladder::generate_input(1, a_probe ? 1 : 2, InputMode::kFloat, x.data(), x.size());
    const auto exact = times_selection(x, m, n, k, probe, 23);
    const auto r = ladder::check_gemm_probe(probe, x.data(), exact.data(), m, n, k);
    EXPECT_TRUE(r.pass) << r.reason;
    for (int bits : {10, 7}) {  // TF32, bf16
      const auto low = times_selection(x, m, n, k, probe, bits);
      EXPECT_FALSE(ladder::check_gemm_probe(probe, x.data(), low.data(), m, n, k).pass) << bits << " bits";
    }
    auto nan = exact;
    nan[5] = std::numeric_limits<float>::quiet_NaN();
    EXPECT_FALSE(ladder::check_gemm_probe(probe, x.data(), nan.data(), m, n, k).pass);
  }
}
