// Baseline for cumsum_exclusive: one block per row; the row is processed in chunks of 256
// elements, each scanned in shared memory (Hillis-Steele, inclusive) and shifted by one to make the
// scan exclusive, offset by the running total of the previous chunks.
#include <kevo/kernel.h>

constexpr int kThreads = 256;

__global__ void cumsum_exclusive_kernel(const float* __restrict__ x, float* __restrict__ y,
                                        int64_t n) {
  __shared__ float buf[kThreads];
  __shared__ float carry;
  const float* xr = x + blockIdx.x * n;
  float* yr = y + blockIdx.x * n;
  if (threadIdx.x == 0) carry = 0.f;
  for (int64_t base = 0; base < n; base += kThreads) {
    int64_t i = base + threadIdx.x;
    float own = i < n ? xr[i] : 0.f;
    float v = own;
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
    if (i < n) yr[i] = total + (v - own);  // inclusive minus own element = exclusive
    __syncthreads();                       // everyone has read carry
    if (threadIdx.x == kThreads - 1) carry = total + v;
    __syncthreads();
  }
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t rows = a->dims[0], n = a->dims[1];
  cumsum_exclusive_kernel<<<(unsigned)rows, kThreads, 0, a->stream>>>(
      (const float*)a->inputs[0].data, (float*)a->outputs[0].data, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
