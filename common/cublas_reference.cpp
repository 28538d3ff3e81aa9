// cuBLAS SGEMM in strict FP32, the reference for the GEMM stage.
#include <cstdio>
#include <cstdlib>

#include <cublas_v2.h>

#include "references.hpp"

namespace ladder {

namespace {
void cublas_check(cublasStatus_t status, const char* call, int line) {
  if (status == CUBLAS_STATUS_SUCCESS) return;
  std::fprintf(stderr, "error: %s failed at common/cublas_reference.cpp:%d: %s (%s)\n", call, line,
               cublasGetStatusName(status), cublasGetStatusString(status));
  std::exit(2);
}
#define CUBLAS_CHECK(call) cublas_check((call), #call, __LINE__)

cublasHandle_t as_handle(void* h) { return static_cast<cublasHandle_t>(h); }
}  // namespace

CublasSgemm::CublasSgemm() {
  cublasHandle_t handle = nullptr;
  CUBLAS_CHECK(cublasCreate(&handle));
  CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH));
  handle_ = handle;
}

CublasSgemm::~CublasSgemm() { cublasDestroy(as_handle(handle_)); }

void CublasSgemm::run(const float* A, const float* B, float* C, int M, int N, int K, cudaStream_t stream) {
  const float alpha = 1.0f, beta = 0.0f;
  CUBLAS_CHECK(cublasSetStream(as_handle(handle_), stream));
  // Row-major C (M x N) = A (M x K) * B (K x N) is column-major C^T (N x M) = B^T (N x K) * A^T (K x M).
  CUBLAS_CHECK(cublasSgemm(as_handle(handle_), CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, N, A, K, &beta, C, N));
}

}  // namespace ladder
