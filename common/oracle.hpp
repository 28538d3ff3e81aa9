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
//  - the float check: the float input's error against a bound computed from the additions this launch makes.
//    A float addition s = a + b returns s (1 + delta) with |delta| <= u = 2^-24, so the error of the result is the
//    sum over every addition k of delta_k s_k, s_k the partial sum it formed. If the deltas behave as independent
//    variables of mean zero (round to nearest; Higham and Mary, "A New Approach to Probabilistic Rounding Error
//    Analysis", SIAM J. Sci. Comput. 41(5), 2019), that sum is sub-Gaussian with variance proxy u^2 sum s_k^2
//    (Hoeffding, Azuma), so |error| <= lambda u sqrt(sum s_k^2) except with probability below 2 exp(-lambda^2/2).
//    The harness knows the s_k from the shape of the launch it saw (the grid and block of the first kernel, the
//    combine): SumShape models each thread's serial chain, each block's tree and the combine, every partial sum as
//    (the elements it holds) x mean|x|, which is what a partial sum of the uniform float input is to within a
//    relative sqrt(j) / j. A correct kernel then sits at a few hundredths of the bound. A biased rounding (round
//    toward zero) or partial sums kept in fewer bits move every s_k the same way: one sum exceeds the bound once
//    the bias adds up to more than the bound (where the combine dominates the bound and the biased chains are short
//    it does not; check_centred over many sums, as --error-study makes it, sees it there). Where the bound
//    would exceed kMaxRelativeBound of sum|x| it would say nothing: a float result inside it is then not judged, the
//    run says so, and the exact check alone carries the verdict; a result outside even that bound fails.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "options.hpp"
#include "verdict.hpp"
#include "reduce_stage.hpp"

namespace ladder {

constexpr double kFloatUnitRoundoff = 0x1.0p-24;
// lambda of the sum's bound: a correct round-to-nearest sum exceeds it with probability below 2 exp(-18) = 3.0e-8.
constexpr double kSumLambda = 6;
// lambda of a GEMM element's bound and of the centring test: below 2 exp(-50) = 3.9e-22 per element (or per test).
constexpr double kGemmLambda = 10;
constexpr double kMaxRelativeBound = 1e-3;  // a float bound looser than this fraction of sum|x| says nothing

struct SumReference {
  double sum = 0;      // the sum of the floats, in double
  double abs_sum = 0;  // sum of |x_i|, for the tolerance
};

SumReference reference_sum(const float* x, std::size_t n);

// The partial sums one summation forms, as the sum of their squares in units of mean|x|^2: each partial sum of
// j elements counts j^2. The harness builds one from the launch it saw; each piece is named for what it models.
class SumShape {
 public:
  // `copies` serial chains of `terms` values of `unit` elements each (the first value is stored, not added).
  SumShape& chain(std::uint64_t terms, double unit, std::uint64_t copies);
  // `copies` pairwise trees over `leaves` values of `unit` elements each (leaves rounded up to a power of two).
  SumShape& tree(std::uint64_t leaves, double unit, std::uint64_t copies);
  // `values` values spread over `threads` threads in whole float4s (*per_thread each, over *busy threads): the
  // chains. Rounding up to float4s covers the scalar stages and the vector ones alike.
  SumShape& chains(std::uint64_t values, double unit, std::uint64_t threads, std::uint64_t* per_thread,
                   std::uint64_t* busy);
  // One kernel pass: the chains over blocks x block threads, then each busy block's tree over its busy threads.
  SumShape& pass(std::uint64_t values, double unit, std::uint64_t blocks, std::uint64_t block);
  double sum_squares() const { return sum_squares_; }

 private:
  double sum_squares_ = 0;
};

// A reduce stage's launch: its first kernel's grid and block over n elements, then the combine. Every thread
// takes ceil(n / threads) elements rounded up to a whole float4 (so scalar and vector stages are both covered);
// each block adds its threads' sums in a tree; the grid's block sums are combined by a tree (relaunch), one chain
// (atomic: they arrive one after another) or one block that walks them and adds its threads' sums in a tree
// (two-pass, last-block). A first launch of one block has nothing to combine.
SumShape stage_shape(std::uint64_t n, std::uint64_t grid, std::uint64_t block, Combine combine);

// lambda u mean|x| sqrt(sum s_k^2): the probabilistic bound of a float sum of this shape, in the units of x.
double sum_bound(const SumShape& shape, double abs_sum, std::uint64_t n);

struct SumCheck {
  bool pass = false;
  bool bounded = true;   // float mode: false when the bound would exceed kMaxRelativeBound * sum|x| and the
                         // result lies inside it (not judged)
  double error = 0;      // |result - reference|
  double tolerance = 0;  // 0 in the exact mode (equality is demanded); float: the probabilistic bound
  std::string reason;    // why it failed (or, unbounded, why it was not judged); empty on pass
};

// NaN or Inf never pass. Exact mode: the result must equal the exact sum. Float mode: within sum_bound(shape);
// where that bound would say nothing (above kMaxRelativeBound of sum|x|), a result inside it is not judged
// (bounded = false, pass = false: Verdict::skip, and the exact check carries the verdict), and a result outside
// even that bound fails.
SumCheck check_sum(double result, const SumReference& ref, InputMode mode, const SumShape& shape, std::uint64_t n);

// Records c in v under `name`: a pass, a failure, or (a float bound too loose to judge) a skipped check.
void record(Verdict& v, const std::string& name, const SumCheck& c);

// Whether errors lean one way. Each error over its sigma (the variance proxy of its bound: the bound / lambda) is a
// sub-Gaussian variable of mean zero under the model above, so the mean of E independent ones stays within
// kCentringLambda / sqrt(E) except with probability below 2 exp(-kCentringLambda^2 / 2) = 3.9e-22. A rounding that
// leans one way shifts every one of them, and fails once sqrt(E) times its shift (in sigmas) exceeds kCentringLambda.
constexpr double kCentringLambda = 10;
struct Centring {
  bool pass = true;
  double mean_z = 0;  // the mean error / sigma
  double limit = 0;   // kCentringLambda / sqrt(E)
  std::string reason;
};
Centring check_centred(double z_sum, std::uint64_t count);

// ---- rates: what no GPU reaches ----------------------------------------------------------------------------

// A measured rate above the theoretical peak (bytes over the median time against the DRAM peak; FLOP/s against
// the FP32 peak) by more than this fraction fails: the launches skipped work their result does not show. The
// peaks are computed from device attributes; the margin covers their rounding, not a real kernel.
constexpr double kRateMargin = 0.02;
// "" where `rate` is at most the peak plus kRateMargin (or either is NaN: not judged), else why it fails.
std::string rate_above_peak(const std::string& who, double rate, double peak, const char* unit);

// ---- GEMM: C (M x N) = A (M x K) * B (K x N), all row-major --------------------------------------------

struct GemmCheck {
  bool pass = false;
  std::string method;         // what was checked, in words
  std::uint64_t elements = 0; // elements compared one by one against the double oracle
  double worst = 0;           // the largest |error| / tolerance seen (exact mode: the largest |error|)
  double mean_z = 0;          // float mode: the mean signed error / sigma over the elements compared one by one
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
// Float tolerance per element: an element is a chain of K fused multiply-adds, whose partial sums hold 1..K products;
// with the magnitudes modelled as for the sum (see the top of this file), sigma = u (sum_k |a_ik||b_kj| / K)
// sqrt(1^2 + ... + K^2), and the bound kGemmLambda sigma is exceeded by a correct element with probability below
// 2 exp(-kGemmLambda^2 / 2) under the model. The errors of the elements compared one by one must also be centred
// (check_centred): round toward zero fails that as soon as sqrt(E) times its shift exceeds kCentringLambda, which
// at K = 64 and E = 4096 it does many times over, while every element stays inside its own bound.
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
