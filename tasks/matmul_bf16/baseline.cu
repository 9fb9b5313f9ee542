// Baseline for matmul_bf16: 32x32 shared-memory tiling with f32 FMAs (no tensor cores); tiles are
// converted to f32 when staged in shared memory, the f32 accumulator is rounded to bf16 at the end.
#include <cuda_bf16.h>
#include <kevo/kernel.h>

constexpr int kTile = 32;  // kevo: tune kTile in {8, 16, 32}

__global__ void matmul_bf16_kernel(const __nv_bfloat16* __restrict__ A,
                                   const __nv_bfloat16* __restrict__ B,
                                   __nv_bfloat16* __restrict__ C, int M, int N, int K) {
  __shared__ float As[kTile][kTile];
  __shared__ float Bs[kTile][kTile];
  int row = blockIdx.y * kTile + threadIdx.y;
  int col = blockIdx.x * kTile + threadIdx.x;
  float acc = 0.f;
  for (int k0 = 0; k0 < K; k0 += kTile) {
    int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
    As[threadIdx.y][threadIdx.x] =
        (row < M && ka < K) ? __bfloat162float(A[(int64_t)row * K + ka]) : 0.f;
    Bs[threadIdx.y][threadIdx.x] =
        (kb < K && col < N) ? __bfloat162float(B[(int64_t)kb * N + col]) : 0.f;
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kTile; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
    __syncthreads();
  }
  if (row < M && col < N) C[(int64_t)row * N + col] = __float2bfloat16(acc);
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int M = (int)a->dims[0], N = (int)a->dims[1], K = (int)a->dims[2];
  dim3 block(kTile, kTile);
  dim3 grid((N + kTile - 1) / kTile, (M + kTile - 1) / kTile);
  matmul_bf16_kernel<<<grid, block, 0, a->stream>>>((const __nv_bfloat16*)a->inputs[0].data,
                                                    (const __nv_bfloat16*)a->inputs[1].data,
                                                    (__nv_bfloat16*)a->outputs[0].data, M, N, K);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
