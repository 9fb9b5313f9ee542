// Baseline for group_norm: one block per (n, g); three passes over the group's contiguous
// (C/G)*H*W values (mean, variance about the mean, write).
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

__global__ void group_norm_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                  const float* __restrict__ b, float* __restrict__ y, int64_t C,
                                  int64_t HW, int64_t G, float eps) {
  __shared__ float sh[kThreads];
  int64_t cpg = C / G;
  int64_t g = blockIdx.x % G;
  int64_t len = cpg * HW;
  const float* xg = x + blockIdx.x * len;  // groups are contiguous: (n, g) -> offset (n*G+g)*len
  float* yg = y + blockIdx.x * len;
  float s = 0.f;
  for (int64_t i = threadIdx.x; i < len; i += kThreads) s += xg[i];
  float mean = block_sum(s, sh) / (float)len;
  float q = 0.f;
  for (int64_t i = threadIdx.x; i < len; i += kThreads) {
    float d = xg[i] - mean;
    q += d * d;
  }
  float rstd = 1.f / sqrtf(block_sum(q, sh) / (float)len + eps);
  for (int64_t i = threadIdx.x; i < len; i += kThreads) {
    int64_t c = g * cpg + i / HW;
    yg[i] = (xg[i] - mean) * rstd * w[c] + b[c];
  }
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t N = a->dims[0], C = a->dims[1], H = a->dims[2], W = a->dims[3], G = a->dims[4];
  group_norm_kernel<<<(unsigned)(N * G), kThreads, 0, a->stream>>>(
      (const float*)a->inputs[0].data, (const float*)a->inputs[1].data,
      (const float*)a->inputs[2].data, (float*)a->outputs[0].data, C, H * W, G,
      (float)a->scalars[0]);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
