// The GEMM oracle: passes a correct float product, catches a planted wrong element (in the full check and
// at the default 4096^3 size, where it samples and runs Freivalds' test), and never passes NaN.
#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "input.hpp"
#include "oracle.hpp"

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
  for (auto mode : {InputMode::kFloat, InputMode::kInt}) {
    for (auto [m, n, k] : {std::array<std::size_t, 3>{1, 1, 1}, {17, 33, 65}, {128, 96, 300}}) {
      const auto r = check(make(m, n, k, mode), mode);
      EXPECT_TRUE(r.pass) << r.reason;
      EXPECT_EQ(r.elements, m * n);
    }
  }
}

TEST(GemmOracle, FullCheckCatchesOneWrongElement) {
  for (auto mode : {InputMode::kFloat, InputMode::kInt}) {
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

TEST(GemmOracle, DefaultSizeIntModeCatchesAWrongElementAnywhere) {
  auto p = default_size_identity(InputMode::kInt);
  ASSERT_TRUE(check(p, InputMode::kInt).pass);
  // Away from the rows and columns that are compared one by one: only Freivalds' test can see it.
  p.c[1234 * 4096 + 2345] += 1.0f;
  const auto r = check(p, InputMode::kInt);
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
