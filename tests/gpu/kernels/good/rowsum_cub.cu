// task: row_sum
// Good: one block per row (grid-stride over rows, so any B fits); each thread sums a strided
// slice of the row with four independent accumulators, then cub::BlockReduce (warp-reduction
// variant, header-only CUB from the toolkit) combines the block. Deterministic, f32: must pass.
#include <kevo/kernel.h>

#include <cub/cub.cuh>

constexpr int kThreads = 512;
using BlockReduce = cub::BlockReduce<float, kThreads, cub::BLOCK_REDUCE_WARP_REDUCTIONS>;

__global__ void __launch_bounds__(kThreads)
    row_sum_cub(const float* __restrict__ x, float* __restrict__ y, int64_t rows, int64_t n) {
  __shared__ typename BlockReduce::TempStorage tmp;
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {  // block-uniform loop
    const float* xr = x + row * n;
    float s0 = 0.f, s1 = 0.f, s2 = 0.f, s3 = 0.f;
    int64_t i = threadIdx.x;
    for (; i + 3 * kThreads < n; i += 4 * kThreads) {
      s0 += xr[i];
      s1 += xr[i + kThreads];
      s2 += xr[i + 2 * kThreads];
      s3 += xr[i + 3 * kThreads];
    }
    for (; i < n; i += kThreads) s0 += xr[i];
    float total = BlockReduce(tmp).Sum((s0 + s1) + (s2 + s3));  // valid in thread 0 only
    if (threadIdx.x == 0) y[row] = total;
    __syncthreads();  // tmp is reused by the next row
  }
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t rows = a->dims[0], n = a->dims[1];
  unsigned grid = (unsigned)(rows < 65535 ? rows : 65535);
  row_sum_cub<<<grid, kThreads, 0, a->stream>>>((const float*)a->inputs[0].data,
                                                (float*)a->outputs[0].data, rows, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
