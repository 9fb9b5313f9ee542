// Baseline for rms_norm_backward: one thread per (b, s) walks the C channels three times (sum of
// squares, dot product, write dx) and keeps r in the workspace; then one block per channel sums dw.
#include <kevo/kernel.h>

constexpr int kThreads = 256;

__global__ void rms_norm_dx(const float* __restrict__ x, const float* __restrict__ w,
                            const float* __restrict__ dy, float* __restrict__ dx,
                            float* __restrict__ r, int64_t B, int64_t C, int64_t S, float eps) {
  const int64_t t = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (t >= B * S) return;
  const int64_t b = t / S, s = t % S;
  const float* xp = x + b * C * S + s;
  const float* gp = dy + b * C * S + s;
  float ss = 0.f;
  for (int64_t c = 0; c < C; ++c) ss += xp[c * S] * xp[c * S];
  const float rs = rsqrtf(ss / (float)C + eps);
  float dot = 0.f;
  for (int64_t c = 0; c < C; ++c) dot += gp[c * S] * w[c] * xp[c * S] * rs;
  dot /= (float)C;
  for (int64_t c = 0; c < C; ++c)
    dx[b * C * S + c * S + s] = rs * (gp[c * S] * w[c] - xp[c * S] * rs * dot);
  r[t] = rs;
}

__global__ void rms_norm_dw(const float* __restrict__ x, const float* __restrict__ dy,
                            const float* __restrict__ r, float* __restrict__ dw, int64_t B,
                            int64_t C, int64_t S) {
  __shared__ float sh[kThreads];
  const int64_t c = blockIdx.x;
  float acc = 0.f;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = threadIdx.x; s < S; s += kThreads) {
      const int64_t i = (b * C + c) * S + s;
      acc += dy[i] * x[i] * r[b * S + s];
    }
  sh[threadIdx.x] = acc;
  __syncthreads();
  for (int k = kThreads / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) sh[threadIdx.x] += sh[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) dw[c] = sh[0];
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  const int64_t B = a->dims[0], C = a->dims[1], S = a->dims[2];
  const float* x = (const float*)a->inputs[0].data;
  const float* dy = (const float*)a->inputs[2].data;
  float* r = (float*)a->workspace;
  rms_norm_dx<<<(unsigned)((B * S + 255) / 256), 256, 0, a->stream>>>(
      x, (const float*)a->inputs[1].data, dy, (float*)a->outputs[0].data, r, B, C, S,
      (float)a->scalars[0]);
  rms_norm_dw<<<(unsigned)C, kThreads, 0, a->stream>>>(x, dy, r, (float*)a->outputs[1].data, B, C,
                                                      S);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
