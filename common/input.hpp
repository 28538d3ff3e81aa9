// Deterministic input: element i depends only on (seed, stream, i), the same in every stage, size and thread count, and
// on the GPU, which makes its copy with the host's arithmetic (input_value()).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include <cuda_runtime.h>  // __host__ __device__, which the host compiler ignores

#include "options.hpp"

namespace ladder {
__host__ __device__ constexpr std::uint64_t mix64(std::uint64_t z) {  // splitmix64's finaliser, a bijection
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Element i of the stream `key`. exact_bits 0: float mode, uniform in [0, 1), 24 random bits. Otherwise exact mode,
// R = 2^(exact_bits - 1): k / R, k one of -R..-1, 1..R: never zero (a dropped or repeated element changes the sum),
// with fractional parts from R = 2 on (a sum rounded to an integer on the way is wrong).
__host__ __device__ inline float input_value(std::uint64_t key, std::uint64_t i, unsigned exact_bits) {
  const std::uint64_t h = mix64(key + (i + 1) * 0x9E3779B97F4A7C15ull);
  if (exact_bits == 0) return static_cast<float>(h >> 40) * 0x1.0p-24f;  // 24 bits -> [0, 1), exactly
  const int range = 1 << (exact_bits - 1);
  const int r = static_cast<int>(h >> (64 - exact_bits));  // 0 .. 2R-1
  return static_cast<float>(r < range ? r - range : r - range + 1) / static_cast<float>(range);  // exact: R = 2^j
}

constexpr unsigned kDefaultExactRange = 4;  // the GEMM's exact mode: k/4, products k1*k2/16, exact for K <= 2^20

// An input stream as input_value() takes it: the key of (seed, stream), and 0 (float) or the bits of R (1 to 4096).
struct InputSpec {
  InputSpec(std::uint64_t seed, std::uint64_t stream, InputMode mode, unsigned range = kDefaultExactRange);
  std::uint64_t key;
  unsigned exact_bits;
};
// out[0..count) = elements 0..count-1, on every core.
void generate_input(std::uint64_t seed, std::uint64_t stream, InputMode mode, float* out, std::size_t count,
                    unsigned range = kDefaultExactRange);

// The widest range R whose sums of n elements stay exact in float: ten standard deviations of the sum of the k stay
// below 2^24. The wider, the likelier a misplaced element changes the sum (unseen with probability 1/(2R)).
unsigned exact_range(std::uint64_t n);
// The precision probe of a sum of n elements: zeros except at up to kProbeElements positions (the first and last four,
// and every residue mod 4 across [0, n)). Each value is k / 2^B, k = 2^(B-1) + 32 r + 1 (B = kProbeBits, r random in
// [0, 128)): B significant bits ending in 00001, so rounding it to B-1 bits or fewer (fp16, TF32: 11; bf16: 8), to
// nearest or toward zero, makes it smaller. Every partial sum is exact (a multiple of 2^-B below kProbeElements): a
// kernel that reads its input, or keeps a partial sum, in a lower precision returns another sum.
constexpr std::size_t kProbeElements = 1024;
constexpr int kProbeBits = 13;
struct ProbeInput {
  std::vector<std::uint64_t> positions;  // ascending, distinct
  std::vector<float> values;
  double sum = 0;  // exact
};
ProbeInput precision_probe(std::uint64_t seed, std::uint64_t n);
// A 64-bit hash of the bytes, printed as 16 hex digits (two runs saw the same data): the sum modulo 2^64 of a term per
// element, all its bits and where it is, the same for any thread count and on the GPU (fingerprint_on_device()).
__host__ __device__ constexpr std::uint64_t fingerprint_term(std::uint64_t i, std::uint32_t bits) {
  return mix64(mix64(i) ^ bits);
}
std::uint64_t fingerprint(const float* data, std::size_t count);
std::string fingerprint_hex(std::uint64_t fp);

// Calls body(begin, end) over [0, count) in chunks of `chunk`, on every hardware thread.
template <typename Body>
void parallel_chunks(std::size_t count, std::size_t chunk, Body body) {
  const std::size_t chunks = (count + chunk - 1) / chunk;
  const std::size_t threads = std::min<std::size_t>(chunks, std::max(1u, std::thread::hardware_concurrency()));
  std::atomic<std::size_t> next{0};
  const auto worker = [&] {
    for (std::size_t c; (c = next.fetch_add(1)) < chunks;) body(c * chunk, std::min(count, (c + 1) * chunk));
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
}
}  // namespace ladder
