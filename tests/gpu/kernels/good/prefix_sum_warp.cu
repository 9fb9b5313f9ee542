// task: prefix_sum
// Good: one block per row, chunks of 1024 elements: each thread scans 4 consecutive values
// serially, the thread totals are scanned with warp shuffles, warp totals are scanned by warp 0,
// and a running carry links the chunks. A different association order from the baseline's.
#include <kevo/kernel.h>

constexpr int kThreads = 256, kPer = 4, kChunk = kThreads * kPer;

__device__ __forceinline__ float warp_inclusive_scan(float v) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int o = 1; o < 32; o <<= 1) {
    float t = __shfl_up_sync(0xffffffffu, v, o);
    if (lane >= o) v += t;
  }
  return v;
}

__global__ void prefix_sum_rows(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  __shared__ float warp_tot[kThreads / 32];
  const float* xr = x + blockIdx.x * n;
  float* yr = y + blockIdx.x * n;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  float carry = 0.f;  // identical in every thread
  for (int64_t base = 0; base < n; base += kChunk) {
    const int64_t i0 = base + (int64_t)threadIdx.x * kPer;
    float v[kPer];
    float run = 0.f;
#pragma unroll
    for (int j = 0; j < kPer; ++j) {
      run += (i0 + j < n) ? xr[i0 + j] : 0.f;
      v[j] = run;
    }
    float incl = warp_inclusive_scan(run);
    if (lane == 31) warp_tot[warp] = incl;
    __syncthreads();
    if (warp == 0) {
      float t = lane < kThreads / 32 ? warp_tot[lane] : 0.f;
      t = warp_inclusive_scan(t);
      if (lane < kThreads / 32) warp_tot[lane] = t;
    }
    __syncthreads();
    const float offset = carry + (warp > 0 ? warp_tot[warp - 1] : 0.f) + (incl - run);
#pragma unroll
    for (int j = 0; j < kPer; ++j)
      if (i0 + j < n) yr[i0 + j] = offset + v[j];
    carry += warp_tot[kThreads / 32 - 1];
    __syncthreads();  // warp_tot is reused by the next chunk
  }
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  const kevo_tensor* x = &a->inputs[0];
  prefix_sum_rows<<<(unsigned)x->shape[0], kThreads, 0, a->stream>>>(
      (const float*)x->data, (float*)a->outputs[0].data, x->shape[1]);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
