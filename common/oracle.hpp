// The CPU oracles every stage is checked against, and their bounds (docs/method.md, "What a PASS proves").
// Sum: in double, Kahan-compensated within fixed chunks and across them (the same for any thread count, exact for the
// exact input). A reduce stage is checked on the exact input (dyadic k/R: a dropped, repeated or integer-rounded
// element changes the sum; a misplaced one goes unseen with probability 1/(2R)), the precision probe (input.hpp), and
// the float input against a bound from the additions the launch makes: an addition returns s (1 + delta), |delta| <=
// u = 2^-24, so the error is sum delta_k s_k over the partial sums s_k, which with independent deltas of mean zero
// (Higham and Mary, SIAM J. Sci. Comput. 41(5), 2019) is sub-Gaussian with variance proxy u^2 sum s_k^2: |error| <=
// lambda u sqrt(sum s_k^2) but with probability below 2 exp(-lambda^2/2). SumShape models the s_k of the launch the
// harness saw; a correct kernel sits at a few hundredths of the bound. A bias fails once it outgrows the bound, or,
// where the combine dominates, check_centred over many sums (the error study). A bound above kMaxRelativeBound of
// sum|x| says nothing: a result inside it is not judged (the exact check decides), one outside it still fails.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "options.hpp"
#include "reduce_stage.hpp"
#include "verdict.hpp"

namespace ladder {
struct InputSpec;  // input.hpp
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
SumReference reference_sum(const InputSpec& spec, std::size_t n);  // of the stream's first n elements, made as summed

// The partial sums one summation forms, as the sum of their squares in units of mean|x|^2 (j elements count j^2).
class SumShape {
 public:
  // `copies` serial chains of `terms` values of `unit` elements each (the first value is stored, not added).
  SumShape& chain(std::uint64_t terms, double unit, std::uint64_t copies);
  // `copies` pairwise trees over `leaves` values of `unit` elements each (leaves rounded up to a power of two).
  SumShape& tree(std::uint64_t leaves, double unit, std::uint64_t copies);
  // The chains of `values` values over `threads` threads, in whole float4s (so scalar and vector stages alike):
  // *per_thread each, over *busy threads.
  SumShape& chains(std::uint64_t values, double unit, std::uint64_t threads, std::uint64_t* per_thread,
                   std::uint64_t* busy);
  // One kernel pass: the chains over blocks x block threads, then each busy block's tree over its busy threads.
  SumShape& pass(std::uint64_t values, double unit, std::uint64_t blocks, std::uint64_t block);
  double sum_squares() const { return sum_squares_; }

 private:
  double sum_squares_ = 0;
};

// A reduce stage's launch: a pass of its first kernel's grid and block over n elements, then the combine of the block
// sums: a tree (relaunch), one chain (atomic: they arrive one after another) or one block that walks them and adds its
// threads' sums in a tree (two-pass, last-block). A first launch of one block has nothing to combine.
SumShape stage_shape(std::uint64_t n, std::uint64_t grid, std::uint64_t block, Combine combine);
// lambda u mean|x| sqrt(sum s_k^2): the probabilistic bound of a float sum of this shape, in the units of x.
double sum_bound(const SumShape& shape, double abs_sum, std::uint64_t n);

struct SumCheck {
  bool pass = false;
  bool bounded = true;   // float mode: false where the bound says nothing and the result lies inside it
  double error = 0;      // |result - reference|
  double tolerance = 0;  // 0 in the exact mode (equality is demanded); float: the probabilistic bound
  std::string reason;    // why it failed (or, unbounded, why it was not judged); empty on pass
};
// NaN or Inf never pass. Exact mode: the result must equal the exact sum. Float mode: within sum_bound(shape).
SumCheck check_sum(double result, const SumReference& ref, InputMode mode, const SumShape& shape, std::uint64_t n);
// Records c in v under `name`: a pass, a failure, or (a float bound too loose to judge) a skipped check.
void record(Verdict& v, const std::string& name, const SumCheck& c);
// Whether errors lean one way. Each error over its sigma (bound / lambda) is sub-Gaussian of mean zero under the model
// above, so the mean of E of them stays within kCentringLambda / sqrt(E) but with probability below 3.9e-22; a rounding
// that leans one way fails once sqrt(E) times its shift (in sigmas) exceeds kCentringLambda.
constexpr double kCentringLambda = 10;
struct Centring {
  bool pass = true;
  double mean_z = 0;  // the mean error / sigma, within kCentringLambda / sqrt(E) to pass
  std::string reason;
};
Centring check_centred(double z_sum, std::uint64_t count);
// A rate (GB/s against the DRAM peak, FLOP/s against the FP32 peak) above the peak by more than this fraction fails:
// the launches skipped work their result does not show. The margin covers the rounding of the peaks, not a kernel.
constexpr double kRateMargin = 0.02;
// Adds the check "rate" to v: a failure, saying why, where `rate` is above the peak plus kRateMargin (NaN: a pass).
void rate_above_peak(Verdict& v, const std::string& who, double rate, double peak, const char* unit);

// GEMM, C (M x N) = A (M x K) * B (K x N), row-major. Up to kFullCheckFlops multiply-adds every element is compared
// with the double oracle; above, every element is scanned for NaN/Inf, the first and last rows and columns and 1024
// random elements are compared, and Freivalds' test with kFreivaldsVectors random +-1 vectors x compares C*x with
// A*(B*x) in double: exact in the exact mode (values k/4; several wrong elements of a row cancel with probability at
// most 1/2 per vector), within the row's summed element bounds in the float mode. An element's float bound is
// kGemmLambda u (sum_k |a_ik||b_kj| / K) sqrt(1^2 + ... + K^2) (a chain of K fused multiply-adds, modelled as for the
// sum), and the elements compared one by one must be centred. Exact mode: equality, every element a multiple of
// kGemmExactUnit (exact in float for K <= 2^20).
struct GemmCheck {
  bool pass = false;
  std::string method;          // what was checked, in words
  std::uint64_t elements = 0;  // elements compared one by one against the double oracle
  double worst = 0;            // the largest |error| / tolerance seen (exact mode: the largest |error|)
  double mean_z = 0;           // float mode: the mean signed error / sigma over the elements compared one by one
  std::string reason;          // why it failed, empty on pass
};
constexpr int kFreivaldsVectors = 16;
constexpr std::uint64_t kFullCheckFlops = std::uint64_t{1} << 30;
constexpr double kGemmExactUnit = 1.0 / 16;  // the products of two exact-mode values k/4
GemmCheck check_gemm(const float* A, const float* B, const float* C, std::uint64_t M, std::uint64_t N,
                     std::uint64_t K, InputMode mode, std::uint64_t seed);

// The operand-precision probes. A selection matrix S has one 1 in every column (probe of A: S is K x N) or row (probe
// of B: S is M x K), at k = (s index + 3) mod K, s the first odd number from 7 on prime to K. A * S is A's selected
// columns, S * B B's selected rows, exactly in any order: with full-mantissa float operands, a kernel that reads A or
// B, or keeps its sum, in a lower precision (TF32, bf16, fp16) changes C's bits.
enum class GemmProbe { kA, kB };  // which operand the probe checks (the other one is the selection matrix)
// Where S has its ones (flat row-major indices): N of them for kA (S is K x N), M for kB (S is M x K).
std::vector<std::uint64_t> selection_ones(GemmProbe probe, std::uint64_t M, std::uint64_t N, std::uint64_t K);
// C (M x N) against the selected elements of X, the full-mantissa operand (A for kA, B for kB), bit for bit.
GemmCheck check_gemm_probe(GemmProbe probe, const float* X, const float* C, std::uint64_t M, std::uint64_t N,
                           std::uint64_t K);
}  // namespace ladder
