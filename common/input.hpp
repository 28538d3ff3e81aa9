// Deterministic input: element i depends only on (seed, stream, i), so every stage, every size and
// every thread count sees bitwise the same values, and a size-n input is a prefix of a larger one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "options.hpp"

namespace ladder {

// Element i of input stream `stream` under `seed`. Float mode: uniform in [0, 1) with 24 random bits
// (exactly representable). Int mode: one of -4..-1, 1..4 with equal probability.
float input_element(std::uint64_t seed, std::uint64_t stream, InputMode mode, std::uint64_t i);

// Fills out[0..count) with elements 0..count-1, in parallel.
void generate_input(std::uint64_t seed, std::uint64_t stream, InputMode mode, float* out, std::size_t count);

// A 64-bit hash of the bytes, the same for any thread count; printed as 16 hex digits so a reader can
// see that two runs saw the same data.
std::uint64_t fingerprint(const float* data, std::size_t count);
std::string fingerprint_hex(std::uint64_t fp);

}  // namespace ladder
