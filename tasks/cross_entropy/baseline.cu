// Baseline for cross_entropy: one block per row computes logsumexp - logit[target] into the
// workspace; one block then adds the per-row losses (in double) and divides by B.
#include <kevo/kernel.h>

constexpr int kThreads = 256;  // kevo: tune kThreads in {64, 128, 256, 512, 1024}

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

__global__ void row_loss_kernel(const float* __restrict__ logits, const int64_t* __restrict__ tgt,
                                float* __restrict__ row_loss, int64_t C) {
  __shared__ float sh[kThreads];
  const float* xr = logits + blockIdx.x * C;
  float m = -INFINITY;
  for (int64_t i = threadIdx.x; i < C; i += kThreads) m = fmaxf(m, xr[i]);
  m = block_reduce(m, sh, true);
  float s = 0.f;
  for (int64_t i = threadIdx.x; i < C; i += kThreads) s += expf(xr[i] - m);
  s = block_reduce(s, sh, false);
  if (threadIdx.x == 0) row_loss[blockIdx.x] = m + logf(s) - xr[tgt[blockIdx.x]];
}

__global__ void mean_kernel(const float* __restrict__ row_loss, int64_t B,
                            float* __restrict__ out) {
  __shared__ double sh[kThreads];
  double s = 0;
  for (int64_t i = threadIdx.x; i < B; i += kThreads) s += row_loss[i];
  sh[threadIdx.x] = s;
  __syncthreads();
  for (int k = kThreads / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) sh[threadIdx.x] += sh[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[0] = (float)(sh[0] / (double)B);
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t B = a->dims[0], C = a->dims[1];
  float* row_loss = (float*)a->workspace;
  row_loss_kernel<<<(unsigned)B, kThreads, 0, a->stream>>>(
      (const float*)a->inputs[0].data, (const int64_t*)a->inputs[1].data, row_loss, C);
  mean_kernel<<<1, kThreads, 0, a->stream>>>(row_loss, B, (float*)a->outputs[0].data);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
