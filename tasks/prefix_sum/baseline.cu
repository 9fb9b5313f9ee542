// Baseline for prefix_sum: one block per row; the row is processed in chunks of 256 elements, each
// scanned in shared memory (Hillis-Steele) and offset by the running total of the previous chunks.
#include <kevo/kernel.h>

constexpr int kThreads = 256;

__global__ void prefix_sum_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  __shared__ float buf[kThreads];
  __shared__ float carry;
  const float* xr = x + blockIdx.x * n;
  float* yr = y + blockIdx.x * n;
  if (threadIdx.x == 0) carry = 0.f;
  for (int64_t base = 0; base < n; base += kThreads) {
    int64_t i = base + threadIdx.x;
    float v = i < n ? xr[i] : 0.f;
    buf[threadIdx.x] = v;
    __syncthreads();
    for (int off = 1; off < kThreads; off <<= 1) {
      float add = threadIdx.x >= off ? buf[threadIdx.x - off] : 0.f;
      __syncthreads();
      v += add;
      buf[threadIdx.x] = v;
      __syncthreads();
    }
    float total = carry;
    if (i < n) yr[i] = v + total;
    __syncthreads();  // everyone has read carry
    if (threadIdx.x == kThreads - 1) carry = total + v;
    __syncthreads();
  }
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  const kevo_tensor* x = &a->inputs[0];
  int64_t rows = x->shape[0], n = x->shape[1];
  prefix_sum_kernel<<<(unsigned)rows, kThreads, 0, a->stream>>>((const float*)x->data,
                                                                (float*)a->outputs[0].data, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
