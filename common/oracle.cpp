#include "oracle.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>

#include <fmt/format.h>

#include "input.hpp"

namespace ladder {
namespace {
constexpr std::size_t kSumChunk = std::size_t{1} << 16;

struct Kahan {
  double sum = 0, carry = 0;
  void add(double v) {
    const double y = v - carry, t = sum + y;
    carry = (t - sum) - y;
    sum = t;
  }
};

double squares_to(double t) { return t * (t + 1) * (2 * t + 1) / 6; }  // 1^2 + 2^2 + ... + t^2

template <typename At>  // at(i): element i
SumReference sum_of(std::size_t n, At at) {
  std::vector<SumReference> chunks((n + kSumChunk - 1) / kSumChunk);
  parallel_chunks(n, kSumChunk, [&](std::size_t begin, std::size_t end) {
    Kahan s;
    double a = 0;
    for (std::size_t i = begin; i < end; ++i) {
      const float x = at(i);
      s.add(x);
      a += std::fabs(static_cast<double>(x));
    }
    chunks[begin / kSumChunk] = {s.sum, a};
  });
  Kahan total, abs_total;
  for (const SumReference& c : chunks) {
    total.add(c.sum);
    abs_total.add(c.abs_sum);
  }
  return {total.sum, abs_total.sum};
}
}  // namespace

SumReference reference_sum(const float* x, std::size_t n) { return sum_of(n, [x](std::size_t i) { return x[i]; }); }
SumReference reference_sum(const InputSpec& spec, std::size_t n) {
  return sum_of(n, [&spec](std::size_t i) { return input_value(spec.key, i, spec.exact_bits); });
}

SumShape& SumShape::chain(std::uint64_t terms, double unit, std::uint64_t copies) {
  const double squares = squares_to(static_cast<double>(terms)) - 1;  // partial sums of 2..terms values
  if (terms > 1) sum_squares_ += static_cast<double>(copies) * unit * unit * squares;
  return *this;
}

SumShape& SumShape::tree(std::uint64_t leaves, double unit, std::uint64_t copies) {
  std::uint64_t width = 1;
  while (width < leaves && width < (std::uint64_t{1} << 63)) width *= 2;
  // Level l forms width / 2^l sums of 2^l leaves: unit^2 sum_l width 2^l = unit^2 width (2 width - 2).
  const double w = static_cast<double>(width);
  sum_squares_ += static_cast<double>(copies) * unit * unit * w * (2 * w - 2);
  return *this;
}

SumShape& SumShape::chains(std::uint64_t values, double unit, std::uint64_t threads, std::uint64_t* per_thread,
                           std::uint64_t* busy) {
  threads = std::max<std::uint64_t>(threads, 1);
  *per_thread = 4 * (((values + threads - 1) / threads + 3) / 4);  // whole float4s
  *busy = (values + *per_thread - 1) / *per_thread;
  return chain(*per_thread, unit, *busy);
}

SumShape& SumShape::pass(std::uint64_t values, double unit, std::uint64_t blocks, std::uint64_t block) {
  std::uint64_t per_thread = 0, busy = 0;
  chains(values, unit, blocks * block, &per_thread, &busy);
  return tree(std::min(block, busy), unit * static_cast<double>(per_thread), (busy + block - 1) / block);
}

SumShape stage_shape(std::uint64_t n, std::uint64_t grid, std::uint64_t block, Combine combine) {
  SumShape s;
  s.pass(n, 1, grid, block);
  if (grid <= 1) return s;  // one block wrote the result: nothing to combine
  const double block_sum = static_cast<double>(n) / static_cast<double>(grid);  // the blocks' sums, spread evenly
  switch (combine) {
    case Combine::kRelaunch: return s.tree(grid, block_sum, 1);
    case Combine::kAtomic: return s.chain(grid, block_sum, 1);
    default: return s.pass(grid, block_sum, 1, block);  // two-pass, last-block: one block walks the grid's sums
  }
}

double sum_bound(const SumShape& shape, double abs_sum, std::uint64_t n) {
  const double mean_abs = n ? abs_sum / static_cast<double>(n) : 0;
  return kSumLambda * kFloatUnitRoundoff * mean_abs * std::sqrt(shape.sum_squares());
}

SumCheck check_sum(double result, const SumReference& ref, InputMode mode, const SumShape& shape, std::uint64_t n) {
  SumCheck c;
  if (!std::isfinite(result)) {
    c.error = std::numeric_limits<double>::infinity();
    c.reason = fmt::format("the result is {}", result);
    return c;
  }
  c.error = std::fabs(static_cast<double>(result) - ref.sum);
  if (mode == InputMode::kExact) {
    if (static_cast<double>(static_cast<float>(ref.sum)) != ref.sum) {
      c.reason = fmt::format("the exact sum {} is not representable in float", ref.sum);
      return c;
    }
    c.pass = c.error == 0;
    if (!c.pass) c.reason = fmt::format("{:.9g} differs from the exact sum {} by {}", result, ref.sum, c.error);
    return c;
  }
  c.tolerance = sum_bound(shape, ref.abs_sum, n);
  if (c.tolerance > kMaxRelativeBound * ref.abs_sum && c.error <= c.tolerance) {  // would pass almost anything
    c.bounded = false;
    c.reason = fmt::format("the bound {:.3g} would exceed {:g} of sum|x|: not judged, the exact check decides",
                           c.tolerance, kMaxRelativeBound);
    return c;
  }
  c.pass = c.error <= c.tolerance;  // a bound too loose to pass a result by still fails one outside it
  if (!c.pass) {
    c.reason = fmt::format("{:.9g} differs from the oracle {:.17g} by {:.3g}, {:.3g} times the bound {:.3g}", result,
                           ref.sum, c.error, c.error / c.tolerance, c.tolerance);
  }
  return c;
}

void record(Verdict& v, const std::string& name, const SumCheck& c) {
  c.bounded ? v.add(name, c.pass, c.reason) : v.skip(name, c.reason);
}

Centring check_centred(double z_sum, std::uint64_t count) {
  Centring c;
  if (count == 0) return c;
  c.mean_z = z_sum / static_cast<double>(count);
  const double limit = kCentringLambda / std::sqrt(static_cast<double>(count));
  c.pass = std::fabs(c.mean_z) <= limit;
  if (!c.pass) {
    c.reason = fmt::format("the errors lean one way: their mean over {} errors is {:.3g} sigma, beyond {:g} / "
                           "sqrt({}) = {:.3g} (a biased rounding, not noise)",
                           count, c.mean_z, kCentringLambda, count, limit);
  }
  return c;
}

void rate_above_peak(Verdict& v, const std::string& who, double rate, double peak, const char* unit) {
  const bool pass = !(rate > peak * (1 + kRateMargin));  // NaN compares false: not judged
  v.add("rate", pass, pass ? "" : fmt::format("{} ran at {:.0f} {}, above the theoretical peak of {:.0f} {} by more "
                                              "than {:g}%: no GPU does that work that fast, so the launches skipped "
                                              "some of it", who, rate, unit, peak, unit, 100 * kRateMargin));
}

namespace {  // the GEMM's
// sigma of one element of C (see oracle.hpp): u (sum_k |a_ik||b_kj| / K) sqrt(1^2 + ... + K^2).
double element_sigma(double abs_dot, std::uint64_t K) {
  const double k = static_cast<double>(std::max<std::uint64_t>(K, 1));
  return kFloatUnitRoundoff * abs_dot / k * std::sqrt(squares_to(k));
}

// What the elements compared with the double oracle showed: how many, the largest |error| / tolerance (exact mode:
// |error|), the sum of the signed errors over their sigmas (float mode), and the first failure.
struct Tally {
  std::uint64_t elements = 0;
  double worst = 0, z_sum = 0;
  std::string first_failure;
  // Compares C[i][j] = c with the double oracle value `exact` and its bound `abs_dot` = sum_k |a_ik||b_kj|.
  void judge(float c, double exact, double abs_dot, std::uint64_t K, InputMode mode, std::uint64_t i, std::uint64_t j) {
    ++elements;
    const double err = std::fabs(static_cast<double>(c) - exact);
    if (mode == InputMode::kExact) {
      worst = std::max(worst, err);
      if (err != 0 && first_failure.empty()) {
        first_failure = fmt::format("C[{}][{}] = {} but the exact value is {}", i, j, c, exact);
      }
    } else {
      const double sigma = element_sigma(abs_dot, K), tol = kGemmLambda * sigma;
      z_sum += sigma > 0 ? (static_cast<double>(c) - exact) / sigma : 0;
      worst = std::max(worst, tol > 0 ? err / tol : (err > 0 ? std::numeric_limits<double>::infinity() : 0));
      if (err > tol && first_failure.empty()) {
        first_failure = fmt::format("C[{}][{}] = {:.9g} but the oracle gives {:.17g} (|error| {:.3g} > tolerance "
                                    "{:.3g})", i, j, c, exact, err, tol);
      }
    }
  }
  void merge(const Tally& t) {
    elements += t.elements;
    worst = std::max(worst, t.worst);
    z_sum += t.z_sum;
    if (first_failure.empty()) first_failure = t.first_failure;
  }
};

// The row-major index of the first element of an M x N matrix where bad(i, j), M * N if none; rows on every core.
template <typename Bad>
std::uint64_t first_bad(std::uint64_t M, std::uint64_t N, Bad bad) {
  std::vector<std::uint64_t> first(M, N);  // each row's first bad column
  parallel_chunks(M, 1, [&](std::size_t i, std::size_t) {
    for (std::uint64_t j = 0; j < N && first[i] == N; ++j) first[i] = bad(i, j) ? j : N;
  });
  const auto row = std::find_if(first.begin(), first.end(), [N](std::uint64_t j) { return j < N; });
  return row == first.end() ? M * N : static_cast<std::uint64_t>(row - first.begin()) * N + *row;
}

// Freivalds' test (oracle.hpp): adds the largest error (over its tolerance, float mode) and first failure to `tally`.
void freivalds(const float* A, const float* B, const float* C, std::uint64_t M, std::uint64_t N, std::uint64_t K,
               InputMode mode, std::mt19937_64& rng, Tally& tally) {
  constexpr int kVectors = kFreivaldsVectors;
  std::vector<double> x(N * kVectors);
  for (auto& v : x) v = (rng() & 1) ? 1.0 : -1.0;
  std::vector<double> bx(K * kVectors), b_abs(K);
  parallel_chunks(K, 64, [&](std::size_t begin, std::size_t end) {
    for (std::size_t k = begin; k < end; ++k) {
      double acc[kVectors] = {}, a = 0;
      for (std::uint64_t j = 0; j < N; ++j) {
        const double b = B[k * N + j];
        for (int r = 0; r < kVectors; ++r) acc[r] += b * x[j * kVectors + r];
        a += std::fabs(b);
      }
      std::copy(acc, acc + kVectors, &bx[k * kVectors]);
      b_abs[k] = a;
    }
  });
  std::vector<Tally> rows(M);
  parallel_chunks(M, 16, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      double abx[kVectors] = {}, cx[kVectors] = {}, bound = 0, c_abs = 0;
      for (std::uint64_t k = 0; k < K; ++k) {
        const double a = A[i * K + k];
        for (int r = 0; r < kVectors; ++r) abx[r] += a * bx[k * kVectors + r];
        bound += std::fabs(a) * b_abs[k];
      }
      for (std::uint64_t j = 0; j < N; ++j) {
        const double c = C[i * N + j];
        for (int r = 0; r < kVectors; ++r) cx[r] += c * x[j * kVectors + r];
        c_abs += std::fabs(c);
      }
      // Float mode: the element bounds summed along the row, plus the (tiny) rounding of these double sums.
      const double tol = mode == InputMode::kExact ? 0.0 : kGemmLambda * element_sigma(bound, K) +
                         static_cast<double>(N + K + 2) * 0x1.0p-53 * (bound + c_abs);
      for (int r = 0; r < kVectors; ++r) {
        const double err = std::fabs(cx[r] - abx[r]);
        rows[i].worst = std::max(rows[i].worst, mode == InputMode::kExact ? err : (tol > 0 ? err / tol : err));
        if (err > tol && rows[i].first_failure.empty()) {
          rows[i].first_failure = fmt::format("Freivalds: (C*x)[{}] differs from (A*(B*x))[{}] by {:.6g} (tolerance "
                                              "{:.3g})", i, i, err, tol);
        }
      }
    }
  });
  for (const Tally& row : rows) tally.merge(row);  // no elements compared one by one: only the worst and the failure
}

struct Selection {  // the row or column of S each index selects (oracle.hpp), the stride found once
  std::uint64_t k, stride = 7;
  explicit Selection(std::uint64_t k_) : k(k_) { while (std::gcd(stride, k) != 1) stride += 2; }
  std::uint64_t operator()(std::uint64_t index) const { return (stride * index + 3) % k; }
};
}  // namespace

GemmCheck check_gemm(const float* A, const float* B, const float* C, std::uint64_t M, std::uint64_t N,
                     std::uint64_t K, InputMode mode, std::uint64_t seed) {
  GemmCheck out;
  // NaN and Inf never pass, wherever they are. In the exact mode every element must also be a multiple of
  // kGemmExactUnit, so every error is one and the double sums of Freivalds' test stay exact: one wrong element then
  // cannot vanish in rounding.
  const std::uint64_t e = first_bad(M, N, [&](std::uint64_t i, std::uint64_t j) {
    const double units = static_cast<double>(C[i * N + j]) / kGemmExactUnit;
    return !std::isfinite(C[i * N + j]) || (mode == InputMode::kExact && units != std::nearbyint(units));
  });
  if (e < M * N) {
    out.reason = fmt::format("C[{}][{}] = {}", e / N, e % N, C[e]);
    out.method = mode == InputMode::kExact ? "scan for NaN/Inf and non-multiples of 1/16" : "scan for NaN/Inf";
    return out;
  }
  Tally tally;
  if (M * N * K <= kFullCheckFlops) {
    out.method = "every element against the double oracle";
    std::vector<Tally> per_row(M);
    parallel_chunks(M, 1, [&](std::size_t i, std::size_t) {
      std::vector<double> dot(N), abs_dot(N);
      for (std::uint64_t k = 0; k < K; ++k) {
        const double a = A[i * K + k];
        const float* b = B + k * N;
        for (std::uint64_t j = 0; j < N; ++j) {
          dot[j] += a * b[j];
          abs_dot[j] += std::fabs(a * b[j]);
        }
      }
      for (std::uint64_t j = 0; j < N; ++j) per_row[i].judge(C[i * N + j], dot[j], abs_dot[j], K, mode, i, j);
    });
    for (const auto& t : per_row) tally.merge(t);
  } else {
    out.method = "first/last rows and columns, 1024 random elements, Freivalds (16 random vectors)";
    std::vector<std::pair<std::uint64_t, std::uint64_t>> points;  // whole rows 0 and M-1, columns 0 and N-1, random
    for (std::uint64_t r = 0; r < (M > 1 ? 2 : 1) * N; ++r) points.emplace_back(r < N ? 0 : M - 1, r % N);
    for (std::uint64_t i = 0; i < M; ++i) {
      points.emplace_back(i, 0);
      if (N > 1) points.emplace_back(i, N - 1);
    }
    std::mt19937_64 rng(seed ^ 0x5DEECE66Dull);
    for (int s = 0; s < 1024; ++s) points.emplace_back(rng() % M, rng() % N);
    std::vector<Tally> parts((points.size() + 255) / 256);
    parallel_chunks(points.size(), 256, [&](std::size_t begin, std::size_t end) {
      for (std::size_t p = begin; p < end; ++p) {
        const auto [i, j] = points[p];
        double dot = 0, abs_dot = 0;
        for (std::uint64_t k = 0; k < K; ++k) {
          const double product = static_cast<double>(A[i * K + k]) * B[k * N + j];
          dot += product;
          abs_dot += std::fabs(product);
        }
        parts[begin / 256].judge(C[i * N + j], dot, abs_dot, K, mode, i, j);
      }
    });
    for (const auto& t : parts) tally.merge(t);
    freivalds(A, B, C, M, N, K, mode, rng, tally);
  }
  out.elements = tally.elements;
  out.worst = tally.worst;
  out.reason = tally.first_failure;
  if (mode == InputMode::kFloat && tally.elements > 0) {
    const Centring centred = check_centred(tally.z_sum, tally.elements);
    out.mean_z = centred.mean_z;
    if (out.reason.empty() && !centred.pass) out.reason = centred.reason;
  }
  out.pass = out.reason.empty();
  return out;
}

std::vector<std::uint64_t> selection_ones(GemmProbe probe, std::uint64_t M, std::uint64_t N, std::uint64_t K) {
  const Selection sel(K);
  std::vector<std::uint64_t> at(probe == GemmProbe::kA ? N : M);  // a one per column of K x N, or per row of M x K
  for (std::uint64_t t = 0; t < at.size(); ++t) at[t] = probe == GemmProbe::kA ? sel(t) * N + t : t * K + sel(t);
  return at;
}

GemmCheck check_gemm_probe(GemmProbe probe, const float* X, const float* C, std::uint64_t M, std::uint64_t N,
                           std::uint64_t K) {
  GemmCheck out;  // only pass and reason: C is compared with X's selected elements bit for bit
  const Selection sel(K);
  const auto want = [&](std::uint64_t i, std::uint64_t j) {
    return probe == GemmProbe::kA ? X[i * K + sel(j)] : X[sel(i) * N + j];
  };
  const std::uint64_t e = first_bad(M, N, [&](std::uint64_t i, std::uint64_t j) {
    const float w = want(i, j);
    return std::memcmp(&w, &C[i * N + j], sizeof w) != 0;
  });
  if (e < M * N) {
    out.reason = fmt::format("C[{}][{}] = {:.9g} but the selected element of {} is {:.9g}", e / N, e % N, C[e],
                             probe == GemmProbe::kA ? "A" : "B", want(e / N, e % N));
  }
  out.pass = out.reason.empty();
  return out;
}
}  // namespace ladder
