// Baseline for softmax_backward: one block per row, four passes over it (max, sum of exp, the dot
// product of dy with y, write dx), recomputing y = softmax(x).
#include <kevo/kernel.h>

constexpr int kThreads = 256;  // kevo: tune kThreads in {64, 128, 256, 512, 1024}

__device__ float block_reduce_max(float v, float* sh) {
  sh[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) sh[threadIdx.x] = fmaxf(sh[threadIdx.x], sh[threadIdx.x + s]);
    __syncthreads();
  }
  float r = sh[0];
  __syncthreads();
  return r;
}

__device__ float block_reduce_sum(float v, float* sh) {
  sh[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) sh[threadIdx.x] += sh[threadIdx.x + s];
    __syncthreads();
  }
  float r = sh[0];
  __syncthreads();
  return r;
}

__global__ void softmax_backward_kernel(const float* __restrict__ x, const float* __restrict__ dy,
                                        float* __restrict__ dx, int64_t n) {
  __shared__ float sh[kThreads];
  const float* xr = x + blockIdx.x * n;
  const float* gr = dy + blockIdx.x * n;
  float* out = dx + blockIdx.x * n;
  float m = -INFINITY;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) m = fmaxf(m, xr[i]);
  m = block_reduce_max(m, sh);
  float s = 0.f;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) s += expf(xr[i] - m);
  s = block_reduce_sum(s, sh);
  const float inv = 1.f / s;
  float dot = 0.f;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) dot += gr[i] * expf(xr[i] - m) * inv;
  dot = block_reduce_sum(dot, sh);
  for (int64_t i = threadIdx.x; i < n; i += kThreads) out[i] = expf(xr[i] - m) * inv * (gr[i] - dot);
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  const kevo_tensor* x = &a->inputs[0];
  int64_t rows = x->shape[0], n = x->shape[1];
  softmax_backward_kernel<<<(unsigned)rows, kThreads, 0, a->stream>>>(
      (const float*)x->data, (const float*)a->inputs[1].data, (float*)a->outputs[0].data, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
