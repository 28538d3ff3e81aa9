// Filling device memory sparsely, for the inputs the harness builds on the GPU (the precision probes), where
// uploading a whole host copy would cost a full transfer for a few thousand non-zero values.
#pragma once

#include <cstdint>
#include <vector>

#include <cuda_runtime.h>

namespace ladder {

// Sets dst[at[i]] = values[i] for every i, on `stream`, and waits for it; the rest of dst is left as it is.
void scatter(float* dst, const std::vector<std::uint64_t>& at, const std::vector<float>& values, cudaStream_t stream);

}  // namespace ladder
