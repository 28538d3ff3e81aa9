// The CPU's own float sums of the ladder's float input for the accuracy page (./maint/do measure): a float loop and
// Kahan's sum in float against the exact sum (every input is k / 2^24, so the sum of the k is an exact integer), as
// CSV for n = 2^10, 2^12, ..., 2^K (--max-log2 K, default 30); exit status 1 if either breaks its worst-case bound
// (Higham, 2nd ed.: loop |E| <= (n-1) u sum|x| / (1 - (n-1) u); Kahan |E| <= (2u + O(n u^2)) sum|x|).
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "input.hpp"
#include "options.hpp"

int main(int argc, char** argv) {
  std::uint64_t seed = 1;
  int max_log2 = 30;
  const ladder::ParseOutcome parsed = ladder::parse_cpu_sums_options(argc, argv, seed, max_log2);
  if (parsed.exit_status) return ladder::print_outcome(parsed);
  const long double u = std::ldexp(1.0L, -24);
  std::printf("n,exact,float_loop,float_loop_error,kahan_float,kahan_float_error,float_loop_bound,kahan_bound\n");
  float loop = 0.0f, kahan = 0.0f, compensation = 0.0f;
  std::uint64_t units = 0, next = std::uint64_t{1} << 10;  // units: the sum of x * 2^24, exact
  bool ok = true;
  const ladder::InputSpec spec(seed, 0, ladder::InputMode::kFloat);
  for (std::uint64_t i = 0; i < std::uint64_t{1} << max_log2; ++i) {
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
  if (!ok) std::fprintf(stderr, "cpu_sums: a sum broke its worst-case bound\n");
  return ok ? 0 : 1;
}
