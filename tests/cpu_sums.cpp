// The CPU's own float sums of the ladder's float input, for the accuracy page (./ladder measure runs it): a
// sequential float loop, as a first CPU version would be written, and Kahan's compensated sum in float, against
// the exact sum. Every input float is k / 2^24 with k < 2^24, so the sum of the k is an exact 64-bit integer.
//
//   cpu_sums [--seed S] [--max-log2 K]     CSV for n = 2^10, 2^12, ..., 2^K (K even, 10..32; default 30)
//
// Exit status 1 if either sum breaks its worst-case bound (Higham, Accuracy and Stability of Numerical
// Algorithms, 2nd ed.: sequential |E| <= (n-1) u sum|x| / (1 - (n-1) u); Kahan |E| <= (2u + O(n u^2)) sum|x|).
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "input.hpp"
#include "ladder_version.hpp"

namespace {
constexpr const char* kUsage = "cpu_sums [--seed S] [--max-log2 K] [--help] [--version], K even from 10 to 32";

int usage(const char* message) {
  std::fprintf(stderr, "cpu_sums: error: %s (usage: %s)\n", message, kUsage);
  return 2;
}
}  // namespace

int main(int argc, char** argv) {
  std::uint64_t seed = 1;
  int max_log2 = 30;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::printf("cpu_sums: the CPU's float sums (a float loop, Kahan in float) of the ladder's float input against "
                  "the exact sum, as CSV, for n = 2^10, 2^12, ..., 2^K; exit status 1 if one breaks its bound\n"
                  "usage: %s\n  --seed S      input seed (default 1)\n  --max-log2 K  the largest n is 2^K "
                  "(default 30)\n",
                  kUsage);
      return 0;
    }
    if (arg == "--version") {
      std::printf("cpu_sums: cuda-ladder %s (commit %s)\n", LADDER_VERSION, LADDER_COMMIT);
      return 0;
    }
    if (arg != "--seed" && arg != "--max-log2") return usage(("unknown argument '" + arg + "'").c_str());
    if (i + 1 >= argc) return usage((arg + " needs a value").c_str());
    const std::string text = argv[++i];
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(text.c_str(), &end, 10);
    if (text.empty() || *end != '\0' || text[0] == '-' || text[0] == '+' || errno == ERANGE) {
      return usage((arg + " '" + text + "' is not a whole number").c_str());
    }
    if (arg == "--seed") {
      seed = v;
    } else {
      if (v > 64) return usage("--max-log2 must be even, 10 to 32");
      max_log2 = static_cast<int>(v);
    }
  }
  if (max_log2 < 10 || max_log2 > 32 || max_log2 % 2 != 0) return usage("--max-log2 must be even, 10 to 32");

  const long double u = std::ldexp(1.0L, -24);
  std::printf("n,exact,float_loop,float_loop_error,kahan_float,kahan_float_error,float_loop_bound,kahan_bound\n");
  float loop = 0.0f, kahan = 0.0f, compensation = 0.0f;
  std::uint64_t units = 0;  // sum of x * 2^24, exact
  std::uint64_t next = std::uint64_t{1} << 10;
  bool ok = true;
  const std::uint64_t n_max = std::uint64_t{1} << max_log2;
  for (std::uint64_t i = 0; i < n_max; ++i) {
    const float x = ladder::input_element(seed, 0, ladder::InputMode::kFloat, i);
    loop += x;
    const float y = x - compensation;  // Kahan: carry the low-order part lost by the previous addition
    const float t = kahan + y;
    compensation = (t - kahan) - y;
    kahan = t;
    units += static_cast<std::uint64_t>(x * 16777216.0f);
    if (i + 1 == next) {
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
  }
  if (!ok) std::fprintf(stderr, "cpu_sums: a sum broke its worst-case bound\n");
  return ok ? 0 : 1;
}
