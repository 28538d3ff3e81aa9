// Deterministic input: element i depends only on (seed, stream, i), so every stage, every size and
// every thread count sees bitwise the same values, and a size-n input is a prefix of a larger one.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "options.hpp"

namespace ladder {

constexpr unsigned kDefaultExactRange = 4;  // the GEMM's exact mode: k/4, products k1*k2/16, exact for K <= 2^20

// Element i of input stream `stream` under `seed`. Float mode: uniform in [0, 1) with 24 random bits
// (exactly representable). Exact mode: k / R with k one of -R..-1, 1..R with equal probability, R = range (a
// power of two from 1 to 4096): dyadic values in [-1, 1] with fractional parts (from R = 2 on), never zero,
// so dropping or repeating any element changes the sum, and a sum rounded to an integer on the way is wrong.
float input_element(std::uint64_t seed, std::uint64_t stream, InputMode mode, std::uint64_t i,
                    unsigned range = kDefaultExactRange);

// An input stream as the element function takes it (input_element.hpp): the key of (seed, stream), and 0 for float
// mode or the bits of an exact one. The GPU makes an input from it (make_input_on_device, device_fill.hpp).
struct InputSpec {
  InputSpec(std::uint64_t seed, std::uint64_t stream, InputMode mode, unsigned range = kDefaultExactRange);
  std::uint64_t key;
  unsigned exact_bits;
};

// Fills out[0..count) with elements 0..count-1, in parallel.
void generate_input(std::uint64_t seed, std::uint64_t stream, InputMode mode, float* out, std::size_t count,
                    unsigned range = kDefaultExactRange);

// The widest exact range R for a sum of n elements that stays exact in float: ten standard deviations of the
// sum of the integers k (and so, with overwhelming probability, of every partial sum in any order fixed
// independently of the data) stay below 2^24, so every partial sum is a multiple of 1/R that float holds
// exactly. A wider range makes an element read from the wrong place more likely to change the sum (it goes
// unseen only when the two values are equal: probability 1/(2R)).
unsigned exact_range(std::uint64_t n);

// The precision probe of a sum of n elements: zeros except at up to kProbeElements positions spread over
// [0, n) (the first and last four among them, and every residue mod 4, so head, every lane of a float4 body
// and tail are probed). Each probe value is k / 2^13 with k = 2^12 + 32 r + 1 (r random in [0, 128)): 13
// significant bits, positive, and its lowest five bits 00001, so rounding it to any precision of 12 bits or
// fewer (fp16, TF32: 11; bf16: 8), to nearest or toward zero, makes it smaller. The probe values sum to at
// most kProbeElements, a multiple of 2^-13 below 2^24 units: every partial sum is exact in float, and a kernel
// that reads its input in a lower precision returns less than `sum`, and one that keeps a partial sum in one
// returns a sum other than `sum` (rounding a sum of probe values may go either way).
constexpr std::size_t kProbeElements = 1024;
struct ProbeInput {
  std::vector<std::uint64_t> positions;  // ascending, distinct
  std::vector<float> values;
  double sum = 0;  // exact
};
ProbeInput precision_probe(std::uint64_t seed, std::uint64_t n);

// A 64-bit hash of the bytes, the same for any thread count; printed as 16 hex digits so a reader can
// see that two runs saw the same data.
std::uint64_t fingerprint(const float* data, std::size_t count);
std::string fingerprint_hex(std::uint64_t fp);

}  // namespace ladder
