// The CPU oracles every stage is checked against, and the tolerances that go with them.
//
// Sum: accumulated in double with Kahan compensation inside fixed chunks, the chunk sums added with
// Kahan again: deterministic for any thread count, and exact for the int input mode.
//
// Float tolerance (see docs/method.md): any summation tree in which no input passes through more than d
// floating-point additions has |computed - exact| <= gamma(d) * sum(|x_i|), gamma(d) = d*u / (1 - d*u),
// u = 2^-24 (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., section 4.2). The harness
// derives d from the launch (summation_depth), so the bound is rigorous for the order our kernels use and
// as tight as that order allows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "options.hpp"
#include "reduce_stage.hpp"

namespace ladder {

constexpr double kFloatUnitRoundoff = 0x1.0p-24;

struct SumReference {
  double sum = 0;      // the sum of the floats, in double
  double abs_sum = 0;  // sum of |x_i|, for the tolerance
};

SumReference reference_sum(const float* x, std::size_t n);

// gamma(d) = d*u / (1 - d*u), the relative error bound of a summation of depth d in float.
double gamma_float(double depth);

// An upper bound on the number of float additions any one input passes through on its way to the result,
// for a stage whose first launch uses `grid` blocks of `block` threads and combines partial sums with
// `combine`:
//   ceil(n / (grid*block))          the per-thread chain of the first launch (1 in the tree regime)
// + 2*ceil(log2(n + 1)) + 8          the trees in every block and pass, vector loads, head/tail, final rounding
// + ceil(grid / block)               two-pass / last-block: one block walks all partial sums
// + grid                             atomic: the partial sums arrive one after another
std::uint64_t summation_depth(std::uint64_t n, std::uint64_t grid, std::uint64_t block, Combine combine);

struct SumCheck {
  bool pass = false;
  double error = 0;      // |result - reference|
  double tolerance = 0;  // 0 in the int mode: equality is demanded
  std::string reason;    // why it failed, empty on pass
};

// NaN or Inf never pass. Int mode: the result must equal the exact sum. Float mode: within gamma(depth)*sum|x|.
SumCheck check_sum(float result, const SumReference& ref, InputMode mode, std::uint64_t depth);

// ---- GEMM: C (M x N) = A (M x K) * B (K x N), all row-major --------------------------------------------

struct GemmCheck {
  bool pass = false;
  std::string method;         // what was checked, in words
  std::uint64_t elements = 0; // elements compared one by one against the double oracle
  double worst = 0;           // the largest |error| / tolerance seen (int mode: the largest |error|)
  std::string reason;         // why it failed, empty on pass
};

// Up to kFullCheckFlops multiply-adds the whole product is compared element by element. Above that:
//  - every element is scanned for NaN/Inf;
//  - elements compared one by one: the first and last rows and columns and 1024 random positions;
//  - Freivalds' test with 4 random +-1 vectors x: C*x against A*(B*x) in double. In the int mode this is
//    exact and catches any wrong element with certainty (a wrong element in row i changes (C*x)_i by a
//    nonzero amount); in the float mode its tolerance is the sum of the element bounds along the row, so it
//    catches gross errors (a wrong tile, a lost row) but not a single slightly wrong element.
// Float tolerance per element: gamma(K + 1) * sum_k |a_ik| |b_kj| (a dot product of depth K, products rounded).
// Int mode: exact equality (exact in float for K <= 2^20).
constexpr std::uint64_t kFullCheckFlops = std::uint64_t{1} << 30;

GemmCheck check_gemm(const float* A, const float* B, const float* C, std::uint64_t M, std::uint64_t N,
                     std::uint64_t K, InputMode mode, std::uint64_t seed);

}  // namespace ladder
