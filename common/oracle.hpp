// The CPU oracles every stage is checked against, and the bounds that go with them.
//
// Sum: accumulated in double with Kahan compensation inside fixed chunks, the chunk sums added with
// Kahan again: deterministic for any thread count, and exact for the exact input mode.
//
// The checks of a reduce stage's inputs (docs/method.md, "What a PASS proves"; the timed launches are checked too):
//  - the exact check: the same launch on the exact input (dyadic values k/R) whose every partial sum is exact
//    in float, compared for equality. Dropping or repeating one element changes that sum, at any n; a
//    misplaced element goes unseen only when the two values are equal (probability 1/(2R), see exact_range);
//    a partial sum rounded to an integer changes it too;
//  - the precision probe (input.hpp): a sum of 13-bit values among zeros, exact in float, which any read or
//    partial sum in a precision of 12 bits or fewer changes (a read, always to less);
//  - the float check: the float input's error against a realistic bound. If the rounding errors of the
//    additions behave as independent random variables of mean zero (Higham and Mary, "A New Approach to
//    Probabilistic Rounding Error Analysis", SIAM J. Sci. Comput. 41(5), 2019), a sum in which no input
//    passes through more than d additions is off by at most about lambda * sqrt(d) * u * sum(|x_i|), except
//    with a probability below 2 n exp(-lambda^2 / 2); u = 2^-24, lambda = 10. The worst-case bound
//    gamma(d) * sum|x| (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., section 4.2) grows
//    with d instead of sqrt(d) and is far from any error a float sum shows. Where even the probabilistic
//    bound exceeds kMaxRelativeBound of sum|x|, it would say nothing: the float result is then reported as
//    unbounded, never as a pass that means something.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "options.hpp"
#include "reduce_stage.hpp"

namespace ladder {

constexpr double kFloatUnitRoundoff = 0x1.0p-24;
constexpr double kBoundLambda = 10;         // standard deviations of the probabilistic bound
constexpr double kMaxRelativeBound = 1e-3;  // a float bound looser than this fraction of sum|x| says nothing

struct SumReference {
  double sum = 0;      // the sum of the floats, in double
  double abs_sum = 0;  // sum of |x_i|, for the tolerance
};

SumReference reference_sum(const float* x, std::size_t n);

// gamma(d) = d*u / (1 - d*u), the worst-case relative error bound of a summation of depth d in float.
double gamma_float(double depth);

// lambda * sqrt(d) * u: the probabilistic relative error bound of a float summation of depth d.
double probabilistic_bound(double depth);

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
  bool bounded = true;   // float mode: false when the bound would exceed kMaxRelativeBound * sum|x|
  double error = 0;      // |result - reference|
  double tolerance = 0;  // 0 in the exact mode (equality is demanded); float: the probabilistic bound
  std::string reason;    // why it failed, empty on pass
};

// NaN or Inf never pass. Exact mode: the result must equal the exact sum. Float mode: within the probabilistic
// bound; where that bound would say nothing (bounded = false) the result passes only for being finite, and
// the exact check carries the verdict.
SumCheck check_sum(float result, const SumReference& ref, InputMode mode, std::uint64_t depth);

// ---- GEMM: C (M x N) = A (M x K) * B (K x N), all row-major --------------------------------------------

struct GemmCheck {
  bool pass = false;
  std::string method;         // what was checked, in words
  std::uint64_t elements = 0; // elements compared one by one against the double oracle
  double worst = 0;           // the largest |error| / tolerance seen (exact mode: the largest |error|)
  std::string reason;         // why it failed, empty on pass
};

// Up to kFullCheckFlops multiply-adds the whole product is compared element by element. Above that:
//  - every element is scanned for NaN/Inf;
//  - elements compared one by one: the first and last rows and columns and 1024 random positions;
//  - Freivalds' test with kFreivaldsVectors random +-1 vectors x: C*x against A*(B*x) in double.
// In the exact mode (values k/4, input.hpp) every one of these is exact (the products are multiples of 1/16
// and their sums stay far below 2^53 units of it), so the sampled check still sees every wrong element: if C
// differs from A*B anywhere, pick a row i where it does; (C*x)_i - (A*B*x)_i = sum_j e_ij x_j. With one wrong
// element in that row this is +-e_ij, never 0: caught with certainty. With several, a random +-1 vector cancels
// them with probability at most 1/2, so all kFreivaldsVectors vectors miss with probability at most 2^-16. In
// the float mode Freivalds' tolerance is the sum of the element bounds along a row, so it catches gross errors
// (a wrong tile, a lost row) but not a single slightly wrong element: that is the exact check's job, which
// every default run makes first.
// Float tolerance per element: the probabilistic bound of a dot product of depth K + 1 (the K products and
// their sum), as for the sum (see the top of this file): kBoundLambda * sqrt(K + 1) * u * sum_k |a_ik| |b_kj|,
// exceeded by a correct float product with probability below 2 (K + 1) exp(-kBoundLambda^2 / 2) per element.
// Exact mode: equality, and every element a multiple of kGemmExactUnit (exact in float for K <= 2^20).
constexpr int kFreivaldsVectors = 16;
constexpr std::uint64_t kFullCheckFlops = std::uint64_t{1} << 30;
constexpr double kGemmExactUnit = 1.0 / 16;  // the products of two exact-mode values k/4

GemmCheck check_gemm(const float* A, const float* B, const float* C, std::uint64_t M, std::uint64_t N,
                     std::uint64_t K, InputMode mode, std::uint64_t seed);

// ---- GEMM operand-precision probes ----------------------------------------------------------------------
//
// A selection matrix S has one 1 in every column (probe of A: S is K x N, S[k][j] = 1 where k = selected(j, K))
// or in every row (probe of B: S is M x K, S[i][k] = 1 where k = selected(i, K)), and zeros elsewhere. Then
// A * S is A's column selected(j) for every j, and S * B is B's row selected(i) for every i, exactly, in any
// order of the additions (one product by 1, the others by 0). With the full-mantissa float input as the other
// operand, a kernel that reads A or B in a lower precision (TF32, bf16, fp16) or keeps its sum in one returns
// a different C: the check compares every element bit for bit.
enum class GemmProbe { kA, kB };  // which operand the probe checks (the other one is the selection matrix)
const char* to_string(GemmProbe probe);

// The 1 of row or column `index`: (s index + 3) mod k, with s the first odd number from 7 on that is prime to k, so
// that every k is selected once min(N, K) (probe of A) or min(M, K) (probe of B) reach K: all of K is probed
// where the matrix is at least as wide (or tall) as K is deep.
std::uint64_t selected(std::uint64_t index, std::uint64_t k);

// Where S has its ones (flat row-major indices): N of them for kA (S is K x N), M for kB (S is M x K).
std::vector<std::uint64_t> selection_ones(GemmProbe probe, std::uint64_t M, std::uint64_t N, std::uint64_t K);

// C (M x N) against the selected elements of X, the full-mantissa operand (A for kA, B for kB), bit for bit.
GemmCheck check_gemm_probe(GemmProbe probe, const float* X, const float* C, std::uint64_t M, std::uint64_t N,
                           std::uint64_t K);

}  // namespace ladder
