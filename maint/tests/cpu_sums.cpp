// The CPU's own float sums of the ladder's float input for the accuracy page (./maint/do measure): a float loop and
// Kahan's sum in float against the exact sum (every input is k / 2^24, so the sum of the k is an exact integer), as
// CSV for n = 2^10, 2^12, ..., 2^K (--max-log2 K, default 30); exit status 1 if either breaks its worst-case bound
// (Higham, 2nd ed.: loop |E| <= (n-1) u sum|x| / (1 - (n-1) u); Kahan |E| <= (2u + O(n u^2)) sum|x|).
#include <cmath>
#include <cstdint>
#include <cstdio>

#include <CLI/CLI.hpp>

#include "input.hpp"
#include "options.hpp"

int main(int argc, char** argv) {
  std::string seed_text = "1", log2 = "30";  // text: CLI11 reads 010 as octal 8, where a stage reads 10
  CLI::App app("cpu_sums: the CPU's float sums (a float loop, Kahan in float) of the ladder's float input against the "
               "exact sum, as CSV, for n = 2^10, 2^12, ..., 2^K; exit status 1 if one breaks its bound", "cpu_sums");
  app.add_option("--seed", seed_text, "Input seed, as the stages read it")->capture_default_str()->check(
      [](const std::string& s) {
        const bool whole = s.find_first_not_of("0123456789") == std::string::npos && ladder::parse_count(s);
        return whole ? "" : s + " is not a whole number from 0 to 2^64-1";
      });
  app.add_option("--max-log2", log2, "The largest n is 2^K")->capture_default_str()->check(
      CLI::IsMember({"10", "12", "14", "16", "18", "20", "22", "24", "26", "28", "30", "32"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // the help, or a usage error
  }
  const std::uint64_t seed = *ladder::parse_count(seed_text);
  const int max_log2 = std::stoi(log2);
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
