#include "input.hpp"

#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "parallel.hpp"

namespace ladder {

namespace {

constexpr std::size_t kChunk = std::size_t{1} << 20;

// SplitMix64's output function: a bijective 64-bit mixer.
constexpr std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::uint64_t stream_key(std::uint64_t seed, std::uint64_t stream) {
  return mix64(seed ^ 0x6A09E667F3BCC909ull) ^ mix64(stream + 0xBB67AE8584CAA73Bull);
}

float from_bits(std::uint64_t h, InputMode mode) {
  if (mode == InputMode::kFloat) return static_cast<float>(h >> 40) * 0x1.0p-24f;  // 24 bits -> [0, 1)
  const int r = static_cast<int>(h >> 61);                                         // 0..7
  return static_cast<float>(r < 4 ? r - 4 : r - 3);                                // -4..-1, 1..4
}

}  // namespace

float input_element(std::uint64_t seed, std::uint64_t stream, InputMode mode, std::uint64_t i) {
  return from_bits(mix64(stream_key(seed, stream) + (i + 1) * 0x9E3779B97F4A7C15ull), mode);
}

void generate_input(std::uint64_t seed, std::uint64_t stream, InputMode mode, float* out, std::size_t count) {
  const std::uint64_t key = stream_key(seed, stream);
  parallel_chunks(count, kChunk, [&](std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) out[i] = from_bits(mix64(key + (i + 1) * 0x9E3779B97F4A7C15ull), mode);
  });
}

std::uint64_t fingerprint(const float* data, std::size_t count) {
  const std::size_t chunks = (count + kChunk - 1) / kChunk;
  std::vector<std::uint64_t> partial(chunks);
  parallel_chunks(count, kChunk, [&](std::size_t begin, std::size_t end) {
    std::uint64_t h = 0xCBF29CE484222325ull;
    for (std::size_t i = begin; i < end; ++i) {
      std::uint32_t w;
      std::memcpy(&w, &data[i], sizeof w);
      h = (h ^ w) * 0x100000001B3ull;
    }
    partial[begin / kChunk] = h;
  });
  std::uint64_t h = mix64(count);
  for (std::size_t c = 0; c < chunks; ++c) h = mix64(h ^ partial[c]) + c;
  return h;
}

std::string fingerprint_hex(std::uint64_t fp) { return fmt::format("{:016x}", fp); }

}  // namespace ladder
