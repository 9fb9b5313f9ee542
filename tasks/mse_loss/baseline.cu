// Baseline for mse_loss: (1) a fixed grid of blocks writes per-block partial sums of squared
// differences to the workspace, (2) one block adds them in double and divides by N.
#include <kevo/kernel.h>

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 4096;

__global__ void partial_kernel(const float* __restrict__ p, const float* __restrict__ t,
                               float* __restrict__ partial, int64_t n) {
  __shared__ float sh[kThreads];
  float s = 0.f;
  for (int64_t i = blockIdx.x * (int64_t)kThreads + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * kThreads) {
    float d = p[i] - t[i];
    s += d * d;
  }
  sh[threadIdx.x] = s;
  __syncthreads();
  for (int k = kThreads / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) sh[threadIdx.x] += sh[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) partial[blockIdx.x] = sh[0];
}

__global__ void finish_kernel(const float* __restrict__ partial, int blocks, int64_t n,
                              float* __restrict__ out) {
  __shared__ double sh[kThreads];
  double s = 0;
  for (int i = threadIdx.x; i < blocks; i += kThreads) s += partial[i];
  sh[threadIdx.x] = s;
  __syncthreads();
  for (int k = kThreads / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) sh[threadIdx.x] += sh[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[0] = (float)(sh[0] / (double)n);
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t n = a->dims[0];
  float* partial = (float*)a->workspace;
  int64_t want = (n + kThreads - 1) / kThreads;
  int blocks = (int)(want < kMaxBlocks ? want : kMaxBlocks);
  partial_kernel<<<blocks, kThreads, 0, a->stream>>>((const float*)a->inputs[0].data,
                                                     (const float*)a->inputs[1].data, partial, n);
  finish_kernel<<<1, kThreads, 0, a->stream>>>(partial, blocks, n, (float*)a->outputs[0].data);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
