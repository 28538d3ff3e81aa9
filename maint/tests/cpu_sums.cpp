// The CPU's own float sums of the ladder's float input, for the accuracy page (./maint/do measure runs it): a
// sequential float loop, as a first CPU version would be written, and Kahan's compensated sum in float, against
// the exact sum. Every input float is k / 2^24 with k < 2^24, so the sum of the k is an exact 64-bit integer.
//
//   cpu_sums [--seed S] [--max-log2 K]     CSV for n = 2^10, 2^12, ..., 2^K (K even, 10 to 32; default 30)
//
// Exit status 1 if either sum breaks its worst-case bound (Higham, Accuracy and Stability of Numerical
// Algorithms, 2nd ed.: sequential |E| <= (n-1) u sum|x| / (1 - (n-1) u); Kahan |E| <= (2u + O(n u^2)) sum|x|).
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "input.hpp"
#include "options.hpp"

namespace {

// The two float sums of input elements 0 .. 2^max_log2 - 1, as CSV at every n = 2^10, 2^12, ...; whether both stayed
// within their bounds.
bool sums(std::uint64_t seed, int max_log2) {
  const long double u = std::ldexp(1.0L, -24);
  std::printf("n,exact,float_loop,float_loop_error,kahan_float,kahan_float_error,float_loop_bound,kahan_bound\n");
  float loop = 0.0f, kahan = 0.0f, compensation = 0.0f;
  std::uint64_t units = 0;  // sum of x * 2^24, exact
  std::uint64_t next = std::uint64_t{1} << 10;
  bool ok = true;
  const std::uint64_t n_max = std::uint64_t{1} << max_log2;
  const ladder::InputSpec spec(seed, 0, ladder::InputMode::kFloat);
  for (std::uint64_t i = 0; i < n_max; ++i) {
    const float x = ladder::input_value(spec.key, i, 0);
    loop += x;
    const float y = x - compensation;  // Kahan: carry the low-order part lost by the previous addition
    const float t = kahan + y;
    compensation = (t - kahan) - y;
    kahan = t;
    units += static_cast<std::uint64_t>(x * 16777216.0f);
    if (i + 1 != next) continue;
    const long double exact = std::ldexp(static_cast<long double>(units), -24);  // x >= 0: sum|x| = exact
    const long double loop_error = std::fabs(static_cast<long double>(loop) - exact);
    const long double kahan_error = std::fabs(static_cast<long double>(kahan) - exact);
    const long double nu = static_cast<long double>(next - 1) * u;
    const long double loop_bound = nu < 1 ? nu / (1 - nu) * exact : INFINITY;
    const long double kahan_bound = (2 * u + static_cast<long double>(next) * u * u) * exact;
    ok = ok && loop_error <= loop_bound && kahan_error <= kahan_bound;
    std::printf("%llu,%.17Lg,%.9g,%.6Lg,%.9g,%.6Lg,%.6Lg,%.6Lg\n", static_cast<unsigned long long>(next), exact,
                static_cast<double>(loop), loop_error, static_cast<double>(kahan), kahan_error, loop_bound,
                kahan_bound);
    std::fflush(stdout);
    next <<= 2;
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  std::uint64_t seed = 1;
  int max_log2 = 30;
  const ladder::ParseOutcome parsed = ladder::parse_cpu_sums_options(argc, argv, seed, max_log2);
  if (parsed.exit_status) return ladder::print_outcome(parsed);
  const bool ok = sums(seed, max_log2);
  if (!ok) std::fprintf(stderr, "cpu_sums: a sum broke its worst-case bound\n");
  return ok ? 0 : 1;
}
