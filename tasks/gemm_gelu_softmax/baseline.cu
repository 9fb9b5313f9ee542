// Baseline for gemm_gelu_softmax: (1) 32x32 tiled x * W^T with bias and exact GELU, into the
// workspace; (2) one block per row: max, sum of exp, write.
#include <kevo/kernel.h>

constexpr int kTile = 32;
constexpr int kThreads = 256;

__global__ void gemm_gelu_kernel(const float* __restrict__ x, const float* __restrict__ W,
                                 const float* __restrict__ b, float* __restrict__ g, int M, int N,
                                 int K) {
  __shared__ float Xs[kTile][kTile];
  __shared__ float Ws[kTile][kTile + 1];  // Ws[k][j]
  int row = blockIdx.y * kTile + threadIdx.y;
  int col = blockIdx.x * kTile + threadIdx.x;
  int wrow = blockIdx.x * kTile + threadIdx.y;
  float acc = 0.f;
  for (int k0 = 0; k0 < K; k0 += kTile) {
    int k = k0 + threadIdx.x;
    Xs[threadIdx.y][threadIdx.x] = (row < M && k < K) ? x[(int64_t)row * K + k] : 0.f;
    Ws[threadIdx.x][threadIdx.y] = (wrow < N && k < K) ? W[(int64_t)wrow * K + k] : 0.f;
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kTile; ++kk) acc += Xs[threadIdx.y][kk] * Ws[kk][threadIdx.x];
    __syncthreads();
  }
  if (row < M && col < N) {
    float z = acc + b[col];
    g[(int64_t)row * N + col] = 0.5f * z * (1.f + erff(z * 0.70710678118654752f));
  }
}

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

__global__ void softmax_kernel(const float* __restrict__ g, float* __restrict__ y, int64_t n) {
  __shared__ float sh[kThreads];
  const float* gr = g + blockIdx.x * n;
  float* yr = y + blockIdx.x * n;
  float m = -INFINITY;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) m = fmaxf(m, gr[i]);
  m = block_reduce(m, sh, true);
  float s = 0.f;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) s += expf(gr[i] - m);
  float inv = 1.f / block_reduce(s, sh, false);
  for (int64_t i = threadIdx.x; i < n; i += kThreads) yr[i] = expf(gr[i] - m) * inv;
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int M = (int)a->dims[0], N = (int)a->dims[1], K = (int)a->dims[2];
  float* g = (float*)a->workspace;
  dim3 block(kTile, kTile);
  dim3 grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile);
  gemm_gelu_kernel<<<grid, block, 0, a->stream>>>((const float*)a->inputs[0].data,
                                                  (const float*)a->inputs[1].data,
                                                  (const float*)a->inputs[2].data, g, M, N, K);
  softmax_kernel<<<(unsigned)M, kThreads, 0, a->stream>>>(g, (float*)a->outputs[0].data, N);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
