// The NaN fill of shared memory (poison_shared_memory, common/device_fill.cu) seen from a later kernel: after the
// fill, every word of shared memory a block of a later launch is given, and reads without writing, must still be
// NaN (all bits set), at every size of shared memory a stage might take, static or dynamic, and with the carveout
// the later kernel asks for, on blocks spread over every SM. The control writes zeros instead of the fill and must
// be seen: a probe that cannot see stale memory would pass anything.
//
// Prints one line per case and exits 0 when every case is as expected, 1 otherwise, 77 without a GPU.
#include <cstdio>
#include <vector>

#include <cuda_runtime.h>

#include "cuda_check.hpp"
#include "device_fill.hpp"
#include "helper_cli.hpp"

namespace {

// Counts the words of the block's dynamic shared memory that are not all ones, and the SMs the blocks ran on.
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

struct Probe {
  int sms = 0, optin = 0;
  unsigned long long* stale = nullptr;
  unsigned* seen = nullptr;
  // Stale words over `blocks` blocks of dynamic shared memory `bytes` with carveout `carveout` (percent), and
  // the number of SMs they ran on.
  std::pair<unsigned long long, int> run(bool poison, int bytes, int carveout, bool dynamic) {
    CUDA_CHECK(cudaMemset(stale, 0, sizeof *stale));
    CUDA_CHECK(cudaMemset(seen, 0, 1024 * sizeof(unsigned)));
    if (poison) {
      ladder::poison_shared_memory(nullptr);
    } else {
      CUDA_CHECK(cudaFuncSetAttribute(zero_shared, cudaFuncAttributeMaxDynamicSharedMemorySize, optin));
      zero_shared<<<2 * sms, 1024, static_cast<std::size_t>(optin)>>>(static_cast<unsigned>(optin) / 4);
      LADDER_CHECK_LAUNCH();
    }
    const int blocks = 4 * sms;
    if (dynamic) {
      CUDA_CHECK(cudaFuncSetAttribute(probe_dynamic, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
      CUDA_CHECK(cudaFuncSetAttribute(probe_dynamic, cudaFuncAttributePreferredSharedMemoryCarveout, carveout));
      probe_dynamic<<<blocks, 256, static_cast<std::size_t>(bytes)>>>(static_cast<unsigned>(bytes) / 4, stale, seen);
    } else {
      probe_static<<<blocks, 32>>>(stale);
    }
    LADDER_CHECK_LAUNCH();
    unsigned long long host = 0;
    CUDA_CHECK(cudaMemcpy(&host, stale, sizeof host, cudaMemcpyDeviceToHost));
    std::vector<unsigned> on(1024);
    CUDA_CHECK(cudaMemcpy(on.data(), seen, on.size() * sizeof(unsigned), cudaMemcpyDeviceToHost));
    int count = 0;
    for (unsigned v : on) count += v != 0;
    return {host, count};
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (const int status = ladder::helper_start(argc, argv, "shared_poison_probe",
                                              "run by the test shared_poison: after the harness's NaN fill, every word "
                                              "of shared memory a later block reads unwritten must be NaN");
      status >= 0) {
    return status;
  }
  Probe p;
  CUDA_CHECK(cudaDeviceGetAttribute(&p.sms, cudaDevAttrMultiProcessorCount, 0));
  CUDA_CHECK(cudaDeviceGetAttribute(&p.optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0));
  CUDA_CHECK(cudaMalloc(&p.stale, sizeof *p.stale));
  CUDA_CHECK(cudaMalloc(&p.seen, 1024 * sizeof(unsigned)));
  bool ok = true;
  const auto [control, control_sms] = p.run(false, 4096, -1, true);
  std::printf("control (zeros left by an earlier launch): %llu stale words seen on %d SMs: %s\n", control,
              control_sms, control > 0 ? "seen, as it must be" : "NOT SEEN: the probe cannot see stale memory");
  ok = ok && control > 0;
  const auto [fixed, unused] = p.run(true, 0, -1, false);
  std::printf("static 128 B after the fill: %llu stale words\n", fixed);
  ok = ok && fixed == 0;
  for (int bytes : {128, 4096, 48 * 1024, 100 * 1024, p.optin}) {
    for (int carveout : {-1, 50, 100}) {  // -1: the driver's choice
      const auto [stale, on] = p.run(true, bytes, carveout, true);
      std::printf("dynamic %6d B, carveout %4d: %llu stale words, blocks on %d of %d SMs\n", bytes, carveout, stale,
                  on, p.sms);
      ok = ok && stale == 0 && on == p.sms;
    }
  }
  std::printf("shared_poison_probe: %s\n", ok ? "every unwritten word read NaN" : "FAIL");
  return ok ? 0 : 1;
}
