// Deterministic input: element i depends only on (seed, stream, i), so every stage, every size and
// every thread count sees bitwise the same values, and a size-n input is a prefix of a larger one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "options.hpp"

namespace ladder {

constexpr unsigned kDefaultIntRange = 4;  // the GEMM's int mode: products up to 16, exact for K <= 2^20

// Element i of input stream `stream` under `seed`. Float mode: uniform in [0, 1) with 24 random bits
// (exactly representable). Int mode: one of -R..-1, 1..R with equal probability, R = int_range (a power of
// two from 1 to 4096): never zero, so dropping or repeating any element changes the sum.
float input_element(std::uint64_t seed, std::uint64_t stream, InputMode mode, std::uint64_t i,
                    unsigned int_range = kDefaultIntRange);

// Fills out[0..count) with elements 0..count-1, in parallel.
void generate_input(std::uint64_t seed, std::uint64_t stream, InputMode mode, float* out, std::size_t count,
                    unsigned int_range = kDefaultIntRange);

// The widest int range R for a sum of n elements that stays exact in float: ten standard deviations of the
// sum (and so, with overwhelming probability, of every partial sum in any order fixed independently of the
// data) stay below 2^24. A wider
// range makes an element read from the wrong place more likely to change the sum (it goes unseen only
// when the two values are equal: probability 1/(2R)).
unsigned exact_int_range(std::uint64_t n);

// A 64-bit hash of the bytes, the same for any thread count; printed as 16 hex digits so a reader can
// see that two runs saw the same data.
std::uint64_t fingerprint(const float* data, std::size_t count);
std::string fingerprint_hex(std::uint64_t fp);

}  // namespace ladder
