// Baseline for layernorm_backward: one block per row recomputes the row's mean and rstd (kept in
// the workspace) and writes dx; then one thread per column sums dweight and dbias over the rows.
#include <kevo/kernel.h>

constexpr int kThreads = 256;

__device__ float block_reduce_sum(float v, float* sh) {
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

__global__ void layernorm_dx(const float* __restrict__ x, const float* __restrict__ w,
                             const float* __restrict__ dy, float* __restrict__ dx,
                             float* __restrict__ stats, int64_t n, float eps) {
  __shared__ float sh[kThreads];
  const float* xr = x + blockIdx.x * n;
  const float* gr = dy + blockIdx.x * n;
  float s = 0.f;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) s += xr[i];
  const float mean = block_reduce_sum(s, sh) / (float)n;
  float v = 0.f;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) v += (xr[i] - mean) * (xr[i] - mean);
  const float rstd = rsqrtf(block_reduce_sum(v, sh) / (float)n + eps);
  float sg = 0.f, sgx = 0.f;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) {
    const float g = gr[i] * w[i];
    sg += g;
    sgx += g * (xr[i] - mean) * rstd;
  }
  sg = block_reduce_sum(sg, sh) / (float)n;
  sgx = block_reduce_sum(sgx, sh) / (float)n;
  for (int64_t i = threadIdx.x; i < n; i += kThreads)
    dx[blockIdx.x * n + i] = rstd * (gr[i] * w[i] - sg - (xr[i] - mean) * rstd * sgx);
  if (threadIdx.x == 0) stats[2 * blockIdx.x] = mean, stats[2 * blockIdx.x + 1] = rstd;
}

__global__ void layernorm_dweight(const float* __restrict__ x, const float* __restrict__ dy,
                                  const float* __restrict__ stats, float* __restrict__ dw,
                                  float* __restrict__ db, int64_t rows, int64_t n) {
  const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= n) return;
  float sw = 0.f, sb = 0.f;
  for (int64_t b = 0; b < rows; ++b) {
    const float g = dy[b * n + i];
    sw += g * (x[b * n + i] - stats[2 * b]) * stats[2 * b + 1];
    sb += g;
  }
  dw[i] = sw, db[i] = sb;
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  const int64_t rows = a->dims[0], n = a->dims[1];
  const float* x = (const float*)a->inputs[0].data;
  const float* dy = (const float*)a->inputs[2].data;
  float* stats = (float*)a->workspace;
  layernorm_dx<<<(unsigned)rows, kThreads, 0, a->stream>>>(
      x, (const float*)a->inputs[1].data, dy, (float*)a->outputs[0].data, stats, n,
      (float)a->scalars[0]);
  layernorm_dweight<<<(unsigned)((n + 255) / 256), 256, 0, a->stream>>>(
      x, dy, stats, (float*)a->outputs[1].data, (float*)a->outputs[2].data, rows, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
