// Baseline for l2_normalize: one block per row; pass 1 sums squares, pass 2 scales.
#include <kevo/kernel.h>

constexpr int kThreads = 256;

__global__ void l2_normalize_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n,
                                    float eps) {
  __shared__ float sh[kThreads];
  const float* xr = x + blockIdx.x * n;
  float* yr = y + blockIdx.x * n;
  float s = 0.f;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) s += xr[i] * xr[i];
  sh[threadIdx.x] = s;
  __syncthreads();
  for (int k = kThreads / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) sh[threadIdx.x] += sh[threadIdx.x + k];
    __syncthreads();
  }
  float inv = 1.f / fmaxf(sqrtf(sh[0]), eps);
  for (int64_t i = threadIdx.x; i < n; i += kThreads) yr[i] = xr[i] * inv;
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t B = a->dims[0], N = a->dims[1];
  l2_normalize_kernel<<<(unsigned)B, kThreads, 0, a->stream>>>(
      (const float*)a->inputs[0].data, (float*)a->outputs[0].data, N, (float)a->scalars[0]);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
