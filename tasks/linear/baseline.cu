// Baseline for linear: 32x32 shared-memory tiling of x * W^T (W tiles read along K and stored
// transposed), with the bias added in the epilogue.
#include <kevo/kernel.h>

constexpr int kTile = 32;

__global__ void linear_kernel(const float* __restrict__ x, const float* __restrict__ W,
                                      const float* __restrict__ b, float* __restrict__ y, int M,
                                      int N, int K) {
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
  if (row < M && col < N) y[(int64_t)row * N + col] = acc + b[col];
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int M = (int)a->dims[0], N = (int)a->dims[1], K = (int)a->dims[2];
  dim3 block(kTile, kTile);
  dim3 grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile);
  linear_kernel<<<grid, block, 0, a->stream>>>(
      (const float*)a->inputs[0].data, (const float*)a->inputs[1].data,
      (const float*)a->inputs[2].data, (float*)a->outputs[0].data, M, N, K);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
