// Baseline for log_softmax: one block per row, three passes (max, sum of exp, write).
#include <kevo/kernel.h>

constexpr int kThreads = 256;

__device__ float block_max(float v, float* sh) {
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

__device__ float block_sum(float v, float* sh) {
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

__global__ void log_softmax_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  __shared__ float sh[kThreads];
  const float* xr = x + blockIdx.x * n;
  float* yr = y + blockIdx.x * n;
  float m = -INFINITY;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) m = fmaxf(m, xr[i]);
  m = block_max(m, sh);
  float s = 0.f;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) s += expf(xr[i] - m);
  float lse = m + logf(block_sum(s, sh));
  for (int64_t i = threadIdx.x; i < n; i += kThreads) yr[i] = xr[i] - lse;
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t B = a->dims[0], N = a->dims[1];
  log_softmax_kernel<<<(unsigned)B, kThreads, 0, a->stream>>>((const float*)a->inputs[0].data,
                                                              (float*)a->outputs[0].data, N);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
