#include <cmath>
#include <cstring>
#include <set>

#include <fmt/format.h>

#include "input.hpp"

namespace ladder {
namespace {
constexpr std::size_t kChunk = std::size_t{1} << 20;

std::uint64_t stream_key(std::uint64_t seed, std::uint64_t stream) {
  return mix64(seed ^ 0x6A09E667F3BCC909ull) ^ mix64(stream + 0xBB67AE8584CAA73Bull);
}
}  // namespace

InputSpec::InputSpec(std::uint64_t seed, std::uint64_t stream, InputMode mode, unsigned range)
    : key(stream_key(seed, stream)), exact_bits(mode == InputMode::kFloat ? 0 : __builtin_ctz(range) + 1u) {}

void generate_input(std::uint64_t seed, std::uint64_t stream, InputMode mode, float* out, std::size_t count,
                    unsigned range) {
  const InputSpec spec(seed, stream, mode, range);
  parallel_chunks(count, kChunk, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) out[i] = input_value(spec.key, i, spec.exact_bits);
  });
}

unsigned exact_range(std::uint64_t n) {
  unsigned range = 4096;
  for (; range > 1; range /= 2) {
    const double variance = (range + 1.0) * (2.0 * range + 1.0) / 6.0;  // of one k, uniform on +-1..+-R
    if (10.0 * std::sqrt(variance * static_cast<double>(n)) < 0x1.0p24) break;
  }
  return range;
}

ProbeInput precision_probe(std::uint64_t seed, std::uint64_t n) {
  const std::uint64_t spread = std::min<std::uint64_t>(n, kProbeElements - 8);
  std::set<std::uint64_t> at;
  for (std::uint64_t i = 0; i < std::min<std::uint64_t>(n, 4); ++i) at.insert(i);      // the head
  for (std::uint64_t i = n > 4 ? n - 4 : 0; i < n; ++i) at.insert(i);                  // the tail
  for (std::uint64_t j = 0; j < spread; ++j) at.insert(std::min(n - 1, j * n / spread + j % 4));  // every lane
  ProbeInput p{{at.begin(), at.end()}, {}, 0};
  const std::uint64_t key = stream_key(seed, 3);
  for (std::uint64_t i : at) {
    const auto r = static_cast<unsigned>(mix64(key + (i + 1) * 0x9E3779B97F4A7C15ull) >> 57);  // 0..127
    p.values.push_back(std::ldexp(static_cast<float>((1u << (kProbeBits - 1)) + 32u * r + 1u), -kProbeBits));
    p.sum += p.values.back();
  }
  return p;
}

std::uint64_t fingerprint(const float* data, std::size_t count) {
  std::atomic<std::uint64_t> sum{0};  // modulo 2^64, in any order
  parallel_chunks(count, kChunk, [&](std::size_t begin, std::size_t end) {
    std::uint64_t h = 0;
    for (std::size_t i = begin; i < end; ++i) {
      std::uint32_t bits;
      std::memcpy(&bits, &data[i], sizeof bits);
      h += fingerprint_term(i, bits);
    }
    sum += h;
  });
  return sum;
}

std::string fingerprint_hex(std::uint64_t fp) { return fmt::format("{:016x}", fp); }
}  // namespace ladder
