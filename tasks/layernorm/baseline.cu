// Baseline for layernorm: one block per row, three passes (mean, variance about the mean, write).
#include <kevo/kernel.h>

constexpr int kThreads = 256;

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

__global__ void layernorm_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                 const float* __restrict__ b, float* __restrict__ y, int64_t n,
                                 float eps) {
  __shared__ float sh[kThreads];
  const float* xr = x + blockIdx.x * n;
  float* yr = y + blockIdx.x * n;
  float s = 0.f;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) s += xr[i];
  float mean = block_sum(s, sh) / (float)n;
  float q = 0.f;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) {
    float d = xr[i] - mean;
    q += d * d;
  }
  float var = block_sum(q, sh) / (float)n;
  float rstd = 1.f / sqrtf(var + eps);
  for (int64_t i = threadIdx.x; i < n; i += kThreads) yr[i] = (xr[i] - mean) * rstd * w[i] + b[i];
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  const kevo_tensor* x = &a->inputs[0];
  int64_t rows = x->shape[0], n = x->shape[1];
  layernorm_kernel<<<(unsigned)rows, kThreads, 0, a->stream>>>(
      (const float*)x->data, (const float*)a->inputs[1].data, (const float*)a->inputs[2].data,
      (float*)a->outputs[0].data, n, (float)a->scalars[0]);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
