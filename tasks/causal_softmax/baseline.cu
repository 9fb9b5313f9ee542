// Baseline for causal_softmax: one block per row (b, i); three passes over the unmasked prefix
// j <= i (max, sum of exp, write) and a zero fill of j > i.
#include <kevo/kernel.h>

constexpr int kThreads = 256;

__device__ float block_reduce(float v, float* sh, bool is_max) {
  sh[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s)
      sh[threadIdx.x] = is_max ? fmaxf(sh[threadIdx.x], sh[threadIdx.x + s])
                               : sh[threadIdx.x] + sh[threadIdx.x + s];
    __syncthreads();
  }
  float r = sh[0];
  __syncthreads();
  return r;
}

__global__ void causal_softmax_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t T,
                                      float scale) {
  __shared__ float sh[kThreads];
  int64_t row = blockIdx.x;  // b * T + i
  int64_t i = row % T;
  const float* xr = x + row * T;
  float* yr = y + row * T;
  float m = -INFINITY;
  for (int64_t j = threadIdx.x; j <= i; j += kThreads) m = fmaxf(m, scale * xr[j]);
  m = block_reduce(m, sh, true);
  float s = 0.f;
  for (int64_t j = threadIdx.x; j <= i; j += kThreads) s += expf(scale * xr[j] - m);
  float inv = 1.f / block_reduce(s, sh, false);
  for (int64_t j = threadIdx.x; j < T; j += kThreads)
    yr[j] = j <= i ? expf(scale * xr[j] - m) * inv : 0.f;
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t B = a->dims[0], T = a->dims[1];
  causal_softmax_kernel<<<(unsigned)(B * T), kThreads, 0, a->stream>>>(
      (const float*)a->inputs[0].data, (float*)a->outputs[0].data, T, (float)a->scalars[0]);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
