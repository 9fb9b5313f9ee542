// task: row_sum
// Good: splits long rows over many blocks (grid = rows x chunks). Each block reduces its chunk with
// warp shuffles and adds it to the output with one atomicAdd; the output is zeroed first on the
// same stream. The summation order varies from run to run (atomics), within the f32 tolerance.
#include <kevo/kernel.h>

constexpr int kThreads = 256;
constexpr int64_t kChunk = 16384;

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__global__ void row_chunk_sum(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  __shared__ float warp_tot[kThreads / 32];
  const int64_t row = blockIdx.x;
  const int64_t start = (int64_t)blockIdx.y * kChunk;
  const int64_t end = min(n, start + kChunk);
  const float* xr = x + row * n;
  float s = 0.f;
  for (int64_t i = start + threadIdx.x; i < end; i += kThreads) s += xr[i];
  s = warp_sum(s);
  if ((threadIdx.x & 31) == 0) warp_tot[threadIdx.x >> 5] = s;
  __syncthreads();
  if (threadIdx.x < 32) {
    s = threadIdx.x < kThreads / 32 ? warp_tot[threadIdx.x] : 0.f;
    s = warp_sum(s);
    if (threadIdx.x == 0) atomicAdd(&y[row], s);
  }
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t rows = a->dims[0], n = a->dims[1];
  float* y = (float*)a->outputs[0].data;
  if (cudaMemsetAsync(y, 0, rows * sizeof(float), a->stream) != cudaSuccess) return 1;
  dim3 grid((unsigned)rows, (unsigned)((n + kChunk - 1) / kChunk));
  row_chunk_sum<<<grid, kThreads, 0, a->stream>>>((const float*)a->inputs[0].data, y, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
