// task: transpose
// Good: 32x32 tiles staged in shared memory (padded to 33 columns against bank conflicts), so both
// the reads of x and the writes of y are coalesced. Edge tiles are bounds-checked.
#include <kevo/kernel.h>

constexpr int kTile = 32, kRows = 8;

__global__ void transpose_tiled(const float* __restrict__ x, float* __restrict__ y, int64_t M,
                                int64_t N) {
  __shared__ float tile[kTile][kTile + 1];
  int64_t col = (int64_t)blockIdx.x * kTile + threadIdx.x;  // column of x
  int64_t row0 = (int64_t)blockIdx.y * kTile;
  for (int r = threadIdx.y; r < kTile; r += kRows) {
    int64_t row = row0 + r;
    if (row < M && col < N) tile[r][threadIdx.x] = x[row * N + col];
  }
  __syncthreads();
  // y is [N, M]: y row = x column, y column = x row
  int64_t ycol = row0 + threadIdx.x;
  int64_t yrow0 = (int64_t)blockIdx.x * kTile;
  for (int r = threadIdx.y; r < kTile; r += kRows) {
    int64_t yrow = yrow0 + r;
    if (yrow < N && ycol < M) y[yrow * M + ycol] = tile[threadIdx.x][r];
  }
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t M = a->dims[0], N = a->dims[1];
  dim3 block(kTile, kRows);
  dim3 grid((unsigned)((N + kTile - 1) / kTile), (unsigned)((M + kTile - 1) / kTile));
  transpose_tiled<<<grid, block, 0, a->stream>>>((const float*)a->inputs[0].data,
                                                 (float*)a->outputs[0].data, M, N);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
