// One element of the deterministic input (input.hpp), for host and device code alike: the GPU makes its copy of an
// input with the arithmetic the host uses for the oracle's, so the two are bitwise the same and no copy of the
// whole input has to cross the bus.
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define LADDER_HOST_DEVICE __host__ __device__
#else
#define LADDER_HOST_DEVICE
#endif

namespace ladder {

// splitmix64's finaliser.
LADDER_HOST_DEVICE constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Element i of the stream whose key is `key` (input_key()). exact_bits 0: float mode, 24 random bits in [0, 1).
// Otherwise exact mode with range R = 2^(exact_bits - 1): k / R, k one of -R..-1, 1..R.
LADDER_HOST_DEVICE inline float input_value(std::uint64_t key, std::uint64_t i, unsigned exact_bits) {
  const std::uint64_t h = mix64(key + (i + 1) * 0x9E3779B97F4A7C15ull);
  if (exact_bits == 0) return static_cast<float>(h >> 40) * 0x1.0p-24f;  // 24 bits -> [0, 1), exactly
  const int range = 1 << (exact_bits - 1);
  const int r = static_cast<int>(h >> (64 - exact_bits));  // 0 .. 2R-1
  return static_cast<float>(r < range ? r - range : r - range + 1) / static_cast<float>(range);  // exact: R = 2^j
}

}  // namespace ladder
