// Baseline for matvec: one block per row, strided dot product, shared-memory tree reduction.
#include <kevo/kernel.h>

constexpr int kThreads = 256;

__global__ void matvec_kernel(const float* __restrict__ A, const float* __restrict__ x,
                              float* __restrict__ y, int64_t K) {
  __shared__ float sh[kThreads];
  const float* row = A + blockIdx.x * K;
  float s = 0.f;
  for (int64_t k = threadIdx.x; k < K; k += kThreads) s += row[k] * x[k];
  sh[threadIdx.x] = s;
  __syncthreads();
  for (int h = kThreads / 2; h > 0; h >>= 1) {
    if (threadIdx.x < h) sh[threadIdx.x] += sh[threadIdx.x + h];
    __syncthreads();
  }
  if (threadIdx.x == 0) y[blockIdx.x] = sh[0];
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t M = a->dims[0], K = a->dims[1];
  matvec_kernel<<<(unsigned)M, kThreads, 0, a->stream>>>((const float*)a->inputs[0].data,
                                                         (const float*)a->inputs[1].data,
                                                         (float*)a->outputs[0].data, K);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
