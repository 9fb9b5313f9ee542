// Baseline for frobenius_normalize: (1) a fixed grid of blocks writes per-block partial sums of
// squares to the workspace, (2) one block adds them up in double and stores 1/norm, (3) scale.
#include <kevo/kernel.h>

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 4096;

__global__ void partial_sumsq_kernel(const float* __restrict__ x, float* __restrict__ partial,
                                     int64_t n) {
  __shared__ float sh[kThreads];
  float s = 0.f;
  for (int64_t i = blockIdx.x * (int64_t)kThreads + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * kThreads)
    s += x[i] * x[i];
  sh[threadIdx.x] = s;
  __syncthreads();
  for (int k = kThreads / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) sh[threadIdx.x] += sh[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = sh[0];
}

__global__ void finish_kernel(float* partial, int blocks, float* inv_norm) {
  __shared__ double sh[kThreads];
  double s = 0;
  for (int i = threadIdx.x; i < blocks; i += kThreads) s += partial[i];
  sh[threadIdx.x] = s;
  __syncthreads();
  for (int k = kThreads / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) sh[threadIdx.x] += sh[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) *inv_norm = (float)(1.0 / sqrt(sh[0]));
}

__global__ void scale_kernel(const float* __restrict__ x, const float* __restrict__ inv_norm,
                             float* __restrict__ y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] * *inv_norm;
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t n = a->dims[0];
  float* partial = (float*)a->workspace;
  float* inv_norm = partial + kMaxBlocks;
  int64_t want = (n + kThreads - 1) / kThreads;
  int blocks = (int)(want < kMaxBlocks ? want : kMaxBlocks);
  const float* x = (const float*)a->inputs[0].data;
  partial_sumsq_kernel<<<blocks, kThreads, 0, a->stream>>>(x, partial, n);
  finish_kernel<<<1, kThreads, 0, a->stream>>>(partial, blocks, inv_norm);
  scale_kernel<<<(unsigned)((n + 255) / 256), 256, 0, a->stream>>>(x, inv_norm,
                                                                   (float*)a->outputs[0].data, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
