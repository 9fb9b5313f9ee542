// task: matmul_f32
// Adversarial: calls cuBLAS, which the task does not allow. (Row-major C = A*B is computed as the
// column-major product C^T = B^T * A^T.) The .so compiles; cuBLAS symbols stay undefined.
#include <cublas_v2.h>
#include <kevo/kernel.h>

static cublasHandle_t g_handle = nullptr;

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int M = (int)a->dims[0], N = (int)a->dims[1], K = (int)a->dims[2];
  if (!g_handle && cublasCreate(&g_handle) != CUBLAS_STATUS_SUCCESS) return 1;
  cublasSetStream(g_handle, a->stream);
  const float alpha = 1.f, beta = 0.f;
  cublasStatus_t st = cublasSgemm(
      g_handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, (const float*)a->inputs[1].data, N,
      (const float*)a->inputs[0].data, K, &beta, (float*)a->outputs[0].data, N);
  return st == CUBLAS_STATUS_SUCCESS ? 0 : 1;
}
