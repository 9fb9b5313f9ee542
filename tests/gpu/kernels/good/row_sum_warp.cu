// task: row_sum
// Good: one block per row; per-thread strided sums, then warp-shuffle reductions (no shared-memory
// tree), one shared slot per warp.
#include <kevo/kernel.h>

constexpr int kThreads = 512;

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__global__ void row_sum_shfl(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  __shared__ float warp_tot[kThreads / 32];
  const float* row = x + blockIdx.x * n;
  float a0 = 0.f, a1 = 0.f;
  int64_t i = threadIdx.x;
  for (; i + kThreads < n; i += 2 * kThreads) {
    a0 += row[i];
    a1 += row[i + kThreads];
  }
  if (i < n) a0 += row[i];
  float s = warp_sum(a0 + a1);
  if ((threadIdx.x & 31) == 0) warp_tot[threadIdx.x >> 5] = s;
  __syncthreads();
  if (threadIdx.x < 32) {
    s = threadIdx.x < kThreads / 32 ? warp_tot[threadIdx.x] : 0.f;
    s = warp_sum(s);
    if (threadIdx.x == 0) y[blockIdx.x] = s;
  }
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  const kevo_tensor* x = &a->inputs[0];
  row_sum_shfl<<<(unsigned)x->shape[0], kThreads, 0, a->stream>>>(
      (const float*)x->data, (float*)a->outputs[0].data, x->shape[1]);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
