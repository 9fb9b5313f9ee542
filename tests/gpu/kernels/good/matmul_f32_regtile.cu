// task: matmul_f32
// Good: register-tiled f32 SGEMM. A 256-thread block computes a 64x64 tile of C, each thread a 4x4
// block of outputs, with 64x16 / 16x64 tiles of A and B in shared memory (A stored transposed).
// Pure f32 FMA: a different summation blocking from the baseline, same precision. Any M, N, K.
#include <kevo/kernel.h>

constexpr int BM = 64, BN = 64, BK = 16, TM = 4, TN = 4;

__global__ void __launch_bounds__(256)
    sgemm_regtile(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C,
                  int M, int N, int K) {
  __shared__ float As[BK][BM];  // As[k][m]
  __shared__ float Bs[BK][BN];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  float acc[TM][TN] = {};
  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int e = threadIdx.x; e < BM * BK; e += 256) {
      int m = e / BK, k = e % BK;
      int gm = m0 + m, gk = k0 + k;
      As[k][m] = (gm < M && gk < K) ? A[(int64_t)gm * K + gk] : 0.f;
    }
    for (int e = threadIdx.x; e < BK * BN; e += 256) {
      int k = e / BN, n = e % BN;
      int gk = k0 + k, gn = n0 + n;
      Bs[k][n] = (gk < K && gn < N) ? B[(int64_t)gk * N + gn] : 0.f;
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < BK; ++k) {
      float a[TM], b[TN];
#pragma unroll
      for (int i = 0; i < TM; ++i) a[i] = As[k][ty * TM + i];
#pragma unroll
      for (int j = 0; j < TN; ++j) b[j] = Bs[k][tx * TN + j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    int gm = m0 + ty * TM + i;
    if (gm >= M) continue;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      int gn = n0 + tx * TN + j;
      if (gn < N) C[(int64_t)gm * N + gn] = acc[i][j];
    }
  }
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int M = (int)a->dims[0], N = (int)a->dims[1], K = (int)a->dims[2];
  dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
  sgemm_regtile<<<grid, 256, 0, a->stream>>>((const float*)a->inputs[0].data,
                                             (const float*)a->inputs[1].data,
                                             (float*)a->outputs[0].data, M, N, K);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
