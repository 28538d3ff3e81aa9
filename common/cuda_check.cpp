#include "cuda_check.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace ladder {

namespace {
// "common/timer.cpp" rather than the absolute path the compiler saw: the last two path components.
const char* short_path(const char* file) {
  const char* last = std::strrchr(file, '/');
  if (!last) return file;
  const char* p = last;
  while (p > file && *(p - 1) != '/') --p;
  return p;
}
}  // namespace

void cuda_fail(cudaError_t err, const char* call, const char* file, int line) {
  std::fprintf(stderr, "error: %s failed at %s:%d: %s (%s)\n", call, short_path(file), line, cudaGetErrorName(err),
               cudaGetErrorString(err));
  if (err == cudaErrorNoKernelImageForDevice || err == cudaErrorUnsupportedPtxVersion) {
    std::fprintf(stderr,
                 "hint: this build has no code for this GPU; rebuild with -DCMAKE_CUDA_ARCHITECTURES=native "
                 "(or the GPU's compute capability, e.g. 90)\n");
  }
  std::exit(2);
}

}  // namespace ladder
