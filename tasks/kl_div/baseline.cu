// Baseline for kl_div: one block per row (max of both rows, log-sum-exp of both, then the KL sum),
// per-row results to the workspace, then one block adds them in double and divides by B.
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

__global__ void row_kl_kernel(const float* __restrict__ p, const float* __restrict__ q,
                              float* __restrict__ row_kl, int64_t C) {
  __shared__ float sh[kThreads];
  const float* pr = p + blockIdx.x * C;
  const float* qr = q + blockIdx.x * C;
  float mp = -INFINITY, mq = -INFINITY;
  for (int64_t i = threadIdx.x; i < C; i += kThreads) mp = fmaxf(mp, pr[i]), mq = fmaxf(mq, qr[i]);
  mp = block_reduce(mp, sh, true);
  mq = block_reduce(mq, sh, true);
  float sp = 0.f, sq = 0.f;
  for (int64_t i = threadIdx.x; i < C; i += kThreads)
    sp += expf(pr[i] - mp), sq += expf(qr[i] - mq);
  float lp = mp + logf(block_reduce(sp, sh, false));  // log-sum-exp of the p row
  float lq = mq + logf(block_reduce(sq, sh, false));
  float kl = 0.f;
  for (int64_t i = threadIdx.x; i < C; i += kThreads) {
    float logp = pr[i] - lp, logq = qr[i] - lq;
    kl += expf(logp) * (logp - logq);
  }
  kl = block_reduce(kl, sh, false);
  if (threadIdx.x == 0) row_kl[blockIdx.x] = kl;
}

__global__ void mean_kernel(const float* __restrict__ row_kl, int64_t B, float* __restrict__ out) {
  __shared__ double sh[kThreads];
  double s = 0;
  for (int64_t i = threadIdx.x; i < B; i += kThreads) s += row_kl[i];
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
  float* row_kl = (float*)a->workspace;
  row_kl_kernel<<<(unsigned)B, kThreads, 0, a->stream>>>(
      (const float*)a->inputs[0].data, (const float*)a->inputs[1].data, row_kl, C);
  mean_kernel<<<1, kThreads, 0, a->stream>>>(row_kl, B, (float*)a->outputs[0].data);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
