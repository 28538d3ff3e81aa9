// The NaN fill of shared memory (poison_shared_memory) seen from a later kernel: every word of shared memory a later
// block reads unwritten must be NaN, at every size a stage might take, static or dynamic, at the carveout it asks for,
// on every SM; the control (zeros instead of the fill) must be seen. Exits 0 when every case is as expected, 1
// otherwise, 77 without a GPU.
#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

#include "cuda_check.hpp"
#include "device_fill.hpp"
#include "helper_cli.hpp"

namespace {
// Counts the words of the block's dynamic shared memory that are not all ones, and marks the SMs the blocks ran on.
__global__ void probe_dynamic(unsigned words, unsigned long long* stale, unsigned* sms) {
  extern __shared__ unsigned dyn[];
  const volatile unsigned* s = dyn;
  unsigned long long count = 0;
  for (unsigned i = threadIdx.x; i < words; i += blockDim.x) count += s[i] != 0xFFFFFFFFu;
  if (count) atomicAdd(stale, count);
  unsigned sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  if (threadIdx.x == 0) sms[sm] = 1;
}

// The same for a static array the size of 07's block_reduce's (32 floats).
__global__ void probe_static(unsigned long long* stale) {
  __shared__ unsigned fixed[32];
  const volatile unsigned* s = fixed;
  if (threadIdx.x < 32 && s[threadIdx.x] != 0xFFFFFFFFu) atomicAdd(stale, 1ull);
}

// The control: what an earlier launch might leave, zeros in every word.
__global__ void zero_shared(unsigned words) {
  extern __shared__ unsigned dyn[];
  volatile unsigned* s = dyn;
  for (unsigned i = threadIdx.x; i < words; i += blockDim.x) s[i] = 0;
}
}  // namespace

int main(int argc, char** argv) {
  const int status = ladder::helper_start(argc, argv, "shared_poison_probe",
                                          "run by the test shared_poison: after the harness's NaN fill, every word "
                                          "of shared memory a later block reads unwritten must be NaN");
  if (status >= 0) return status;
  int sms = 0, optin = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  const ladder::DeviceBuffer<unsigned long long> stale(1);
  const ladder::DeviceBuffer<unsigned> seen(1024);
  // The stale words over 4 blocks per SM (dynamic shared memory of `bytes`, carveout in percent, or the static
  // array), and the SMs they ran on, after the fill (poison) or the control.
  const auto run = [&](bool poison, int bytes, int carveout, bool dynamic) {
    CUDA_CHECK(cudaMemset(stale.get(), 0, stale.bytes()));
    CUDA_CHECK(cudaMemset(seen.get(), 0, seen.bytes()));
    if (poison) {
      ladder::poison_shared_memory(nullptr);
    } else {
      CUDA_CHECK(cudaFuncSetAttribute(zero_shared, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
      zero_shared<<<2 * sms, 1024, static_cast<std::size_t>(optin)>>>(static_cast<unsigned>(optin) / 4);
      LADDER_CHECK_LAUNCH();
    }
    if (dynamic) {
      CUDA_CHECK(cudaFuncSetAttribute(probe_dynamic, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
      CUDA_CHECK(cudaFuncSetAttribute(probe_dynamic, cudaFuncAttributePreferredSharedMemoryCarveout, carveout));
      probe_dynamic<<<4 * sms, 256, static_cast<std::size_t>(bytes)>>>(static_cast<unsigned>(bytes) / 4, stale.get(),
                                                                       seen.get());
    } else {
      probe_static<<<4 * sms, 32>>>(stale.get());
    }
    LADDER_CHECK_LAUNCH();
    unsigned long long words = 0;
    std::vector<unsigned> on(seen.count());
    CUDA_CHECK(cudaMemcpy(&words, stale.get(), sizeof words, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(on.data(), seen.get(), seen.bytes(), cudaMemcpyDeviceToHost));
    return std::make_pair(words, static_cast<int>(on.size() - std::count(on.begin(), on.end(), 0u)));
  };
  const auto [control, control_sms] = run(false, 4096, -1, true);
  std::printf("control (zeros left by an earlier launch): %llu stale words seen on %d SMs: %s\n", control,
              control_sms, control > 0 ? "seen, as it must be" : "NOT SEEN: the probe cannot see stale memory");
  const auto [fixed, unused] = run(true, 0, -1, false);
  std::printf("static 128 B after the fill: %llu stale words\n", fixed);
  bool ok = control > 0 && fixed == 0;
  for (int bytes : {128, 4096, 48 * 1024, 100 * 1024, optin}) {
    for (int carveout : {-1, 50, 100}) {  // -1: the driver's choice
      const auto [words, on] = run(true, bytes, carveout, true);
      std::printf("dynamic %6d B, carveout %4d: %llu stale words, blocks on %d of %d SMs\n", bytes, carveout, words,
                  on, sms);
      ok = ok && words == 0 && on == sms;
    }
  }
  std::printf("shared_poison_probe: %s\n", ok ? "every unwritten word read NaN" : "FAIL");
  return ok ? 0 : 1;
}
