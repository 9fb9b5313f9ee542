// task: matmul_bf16
// Good: tensor cores through nvcuda::wmma (bf16 16x16x16 fragments, f32 accumulators). A 128-thread
// block computes a 64x64 tile of C, each warp a 32x32 sub-tile (2x2 fragments). Tiles of A and B
// are staged in shared memory with zero fill past the matrix edges, so any M, N, K works; the f32
// accumulators go through shared memory and are written back with bounds checks, rounded to bf16.
#include <cuda_bf16.h>
#include <kevo/kernel.h>
#include <mma.h>

using namespace nvcuda;

constexpr int BM = 64, BN = 64, BK = 32;
constexpr int LDA =
    BK + 8;  // padded leading dimensions (multiples of 8 bf16 / 4 f32, 32-byte rows)
constexpr int LDB = BN + 8;
constexpr int LDC = BN + 4;
constexpr int kThreads = 128;

__global__ void __launch_bounds__(kThreads)
    matmul_bf16_wmma(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                     __nv_bfloat16* __restrict__ C, int M, int N, int K) {
  __shared__ __align__(32) __nv_bfloat16 As[BM * LDA];
  __shared__ __align__(32) __nv_bfloat16 Bs[BK * LDB];
  __shared__ __align__(32) float Cs[BM * LDC];

  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int warp = threadIdx.x / 32;
  const int wm = (warp / 2) * 32, wn = (warp % 2) * 32;  // warp's sub-tile inside the block tile

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[2][2];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.f);

  const __nv_bfloat16 zero = __float2bfloat16(0.f);
  for (int k0 = 0; k0 < K; k0 += BK) {
    for (int e = threadIdx.x; e < BM * BK; e += kThreads) {
      int r = e / BK, c = e % BK;
      int gr = m0 + r, gc = k0 + c;
      As[r * LDA + c] = (gr < M && gc < K) ? A[(int64_t)gr * K + gc] : zero;
    }
    for (int e = threadIdx.x; e < BK * BN; e += kThreads) {
      int r = e / BN, c = e % BN;
      int gr = k0 + r, gc = n0 + c;
      Bs[r * LDB + c] = (gr < K && gc < N) ? B[(int64_t)gr * N + gc] : zero;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, __nv_bfloat16, wmma::row_major> af[2];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, __nv_bfloat16, wmma::row_major> bf[2];
#pragma unroll
      for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(af[i], &As[(wm + i * 16) * LDA + kk], LDA);
#pragma unroll
      for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(bf[j], &Bs[kk * LDB + wn + j * 16], LDB);
#pragma unroll
      for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], af[i], bf[j], acc[i][j]);
    }
    __syncthreads();
  }

#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j)
      wmma::store_matrix_sync(&Cs[(wm + i * 16) * LDC + wn + j * 16], acc[i][j], LDC,
                              wmma::mem_row_major);
  __syncthreads();
  for (int e = threadIdx.x; e < BM * BN; e += kThreads) {
    int r = e / BN, c = e % BN;
    int gr = m0 + r, gc = n0 + c;
    if (gr < M && gc < N) C[(int64_t)gr * N + gc] = __float2bfloat16(Cs[r * LDC + c]);
  }
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int M = (int)a->dims[0], N = (int)a->dims[1], K = (int)a->dims[2];
  dim3 grid((N + BN - 1) / BN, (M + BM - 1) / BM);
  matmul_bf16_wmma<<<grid, kThreads, 0, a->stream>>>((const __nv_bfloat16*)a->inputs[0].data,
                                                     (const __nv_bfloat16*)a->inputs[1].data,
                                                     (__nv_bfloat16*)a->outputs[0].data, M, N, K);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
