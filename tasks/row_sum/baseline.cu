// Baseline for row_sum: one block per row, strided accumulation, shared-memory tree reduction.
#include <kevo/kernel.h>

constexpr int kThreads = 256;

__global__ void row_sum_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  __shared__ float partial[kThreads];
  const float* row = x + blockIdx.x * n;
  float acc = 0.f;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) acc += row[i];
  partial[threadIdx.x] = acc;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) y[blockIdx.x] = partial[0];
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  const kevo_tensor* x = &a->inputs[0];
  int64_t rows = x->shape[0], n = x->shape[1];
  row_sum_kernel<<<(unsigned)rows, kThreads, 0, a->stream>>>((const float*)x->data,
                                                             (float*)a->outputs[0].data, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
