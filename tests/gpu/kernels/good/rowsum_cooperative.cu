// task: row_sum
// Good: one cooperative launch (cudaLaunchCooperativeKernel on a->stream) with exactly as many
// blocks as can be resident (occupancy x SM count). Phase 1: blocks take (row, chunk) items in a
// grid-stride loop and write one partial sum per item into a->workspace (at most 256 per row, as
// the task provides). grid.sync(). Phase 2: one warp per row adds that row's partials. Every
// partial is written before it is read, so the poisoned workspace does not matter: must pass.
#include <kevo/kernel.h>

#include <cooperative_groups.h>

namespace cg = cooperative_groups;

constexpr int kThreads = 256;
constexpr int64_t kMinChunk = 4096;  // elements per work item, unless a row needs > 256 items
constexpr int64_t kMaxChunksPerRow = 256;

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__global__ void __launch_bounds__(kThreads)
    row_sum_coop(const float* __restrict__ x, float* __restrict__ y, float* partial, int64_t rows,
                 int64_t n, int64_t chunks, int64_t chunk_len) {
  __shared__ float warp_tot[kThreads / 32];
  cg::grid_group grid = cg::this_grid();
  const int64_t items = rows * chunks;
  for (int64_t w = blockIdx.x; w < items; w += gridDim.x) {  // block-uniform loop
    const int64_t row = w / chunks, c = w % chunks;
    const int64_t begin = c * chunk_len;
    const int64_t end = min(n, begin + chunk_len);
    const float* xr = x + row * n;
    float s = 0.f;
    for (int64_t i = begin + threadIdx.x; i < end; i += kThreads) s += xr[i];
    s = warp_sum(s);
    if ((threadIdx.x & 31) == 0) warp_tot[threadIdx.x >> 5] = s;
    __syncthreads();
    if (threadIdx.x < 32) {
      s = threadIdx.x < kThreads / 32 ? warp_tot[threadIdx.x] : 0.f;
      s = warp_sum(s);
      if (threadIdx.x == 0) partial[w] = s;  // == partial[row * chunks + c]
    }
    __syncthreads();  // warp_tot is reused by the next item
  }
  grid.sync();  // every partial is written and visible grid-wide
  const int64_t lane = threadIdx.x & 31;
  const int64_t warps = (int64_t)gridDim.x * (kThreads / 32);
  for (int64_t row = blockIdx.x * (int64_t)(kThreads / 32) + (threadIdx.x >> 5); row < rows;
       row += warps) {
    float s = 0.f;
    for (int64_t c = lane; c < chunks; c += 32) s += partial[row * chunks + c];
    s = warp_sum(s);
    if (lane == 0) y[row] = s;
  }
}

// Resident blocks for the whole device, or 0 when cooperative launch is unavailable.
static int resident_blocks() {
  static int blocks = [] {
    int dev = 0, coop = 0, sms = 0, per_sm = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, row_sum_coop, kThreads, 0) !=
            cudaSuccess ||
        !coop) {
      (void)cudaGetLastError();
      return 0;
    }
    return per_sm * sms;
  }();
  return blocks;
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  const float* x = (const float*)a->inputs[0].data;
  float* y = (float*)a->outputs[0].data;
  int64_t rows = a->dims[0], n = a->dims[1];
  int64_t chunks = (n + kMinChunk - 1) / kMinChunk;
  if (chunks < 1) chunks = 1;
  if (chunks > kMaxChunksPerRow) chunks = kMaxChunksPerRow;
  int64_t chunk_len = (n + chunks - 1) / chunks;
  float* partial = (float*)a->workspace;
  if (partial == nullptr || a->workspace_bytes < (size_t)(rows * chunks) * sizeof(float)) return 1;
  int64_t items = rows * chunks;
  int64_t grid = resident_blocks();
  if (grid <= 0) return 1;
  if (grid > items) grid = items;
  void* args[] = {(void*)&x, (void*)&y,      (void*)&partial,  (void*)&rows,
                  (void*)&n, (void*)&chunks, (void*)&chunk_len};
  if (cudaLaunchCooperativeKernel((const void*)row_sum_coop, dim3((unsigned)grid), dim3(kThreads),
                                  args, 0, a->stream) != cudaSuccess)
    return 1;
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
