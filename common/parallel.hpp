// A minimal parallel loop for the host side (input generation, the CPU oracles).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace ladder {

// Calls body(begin, end) over [0, count) in chunks of `chunk`, on all hardware threads. Which thread
// runs which chunk varies; results must not depend on it (callers write per-chunk results).
template <typename Body>
void parallel_chunks(std::size_t count, std::size_t chunk, Body body) {
  const std::size_t chunks = (count + chunk - 1) / chunk;
  const std::size_t threads =
      std::min<std::size_t>(chunks, std::max(1u, std::thread::hardware_concurrency()));
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t c; (c = next.fetch_add(1)) < chunks;) body(c * chunk, std::min(count, (c + 1) * chunk));
  };
  if (threads <= 1) {
    worker();
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
}

}  // namespace ladder
