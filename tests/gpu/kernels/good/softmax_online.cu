// task: softmax
// Good: online softmax. One read pass keeps a running (max, sum of exp relative to that max) per
// thread; the pairs are merged across the block with warp shuffles; a second pass writes the
// output.
#include <kevo/kernel.h>

// 1024 threads a row: with 256 it ran as fast as the baseline on an H200 (1.014 vs 1.012 ms),
// so the end-to-end test's "fast" variant was not faster there; with 1024 0.890 ms (1.14x).
constexpr int kThreads = 1024;

struct MD {
  float m, d;
};

__device__ __forceinline__ MD merge(MD a, MD b) {
  if (a.m == -INFINITY) return b;
  if (b.m == -INFINITY) return a;
  float m = fmaxf(a.m, b.m);
  return {m, a.d * __expf(a.m - m) + b.d * __expf(b.m - m)};
}

__device__ __forceinline__ MD warp_merge(MD v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    MD other{__shfl_xor_sync(0xffffffffu, v.m, o), __shfl_xor_sync(0xffffffffu, v.d, o)};
    v = merge(v, other);
  }
  return v;
}

__global__ void softmax_online(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  __shared__ MD warp_md[kThreads / 32];
  __shared__ MD row_md;
  const float* xr = x + blockIdx.x * n;
  float* yr = y + blockIdx.x * n;
  MD md{-INFINITY, 0.f};
  for (int64_t i = threadIdx.x; i < n; i += kThreads) {
    float v = xr[i];
    if (v > md.m) {
      md.d = (md.m == -INFINITY ? 0.f : md.d * __expf(md.m - v)) + 1.f;
      md.m = v;
    } else {
      md.d += __expf(v - md.m);
    }
  }
  md = warp_merge(md);
  if ((threadIdx.x & 31) == 0) warp_md[threadIdx.x >> 5] = md;
  __syncthreads();
  if (threadIdx.x < 32) {
    MD v = threadIdx.x < kThreads / 32 ? warp_md[threadIdx.x] : MD{-INFINITY, 0.f};
    v = warp_merge(v);
    if (threadIdx.x == 0) row_md = v;
  }
  __syncthreads();
  const float m = row_md.m, inv = 1.f / row_md.d;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) yr[i] = __expf(xr[i] - m) * inv;
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  const kevo_tensor* x = &a->inputs[0];
  softmax_online<<<(unsigned)x->shape[0], kThreads, 0, a->stream>>>(
      (const float*)x->data, (float*)a->outputs[0].data, x->shape[1]);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
