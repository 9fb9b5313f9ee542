// task: row_sum
// Good: the "last block finishes" reduction (CUDA's threadFenceReduction sample). Each row is split
// over up to 256 blocks; a block writes its partial sum to a->workspace, __threadfence(), then
// takes a ticket with atomicInc on a per-row counter. The block that draws the last ticket adds the
// row's partials (L2 loads, __ldcg) and writes y. The counters live in a buffer allocated once and
// zeroed once; atomicInc(ctr, chunks - 1) wraps the counter back to 0 on the last ticket, so every
// call leaves them reset for the next. The workspace (poisoned before every call) only holds
// partials written earlier in the same launch: must pass.
#include <kevo/kernel.h>

constexpr int kThreads = 256;
constexpr int64_t kMinChunk = 8192;
constexpr int64_t kMaxChunksPerRow = 256;  // the workspace holds 256 floats per row

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// Sum of v over the block, valid in thread 0. `red` has kThreads / 32 slots.
__device__ float block_sum(float v, float* red) {
  v = warp_sum(v);
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  if (threadIdx.x < 32) {
    v = threadIdx.x < kThreads / 32 ? red[threadIdx.x] : 0.f;
    v = warp_sum(v);
  }
  return v;
}

// Block b handles chunk b % chunks of row b / chunks (a 1-D grid: B can exceed 65535).
__global__ void __launch_bounds__(kThreads)
    row_sum_last_block(const float* __restrict__ x, float* __restrict__ y, float* partial,
                       unsigned* tickets, int64_t n, int64_t chunks, int64_t chunk_len) {
  __shared__ float red[kThreads / 32];
  __shared__ bool last;
  const int64_t row = blockIdx.x / chunks, c = blockIdx.x % chunks;
  const int64_t begin = c * chunk_len;
  const int64_t end = min(n, begin + chunk_len);
  const float* xr = x + row * n;
  float s = 0.f;
  for (int64_t i = begin + threadIdx.x; i < end; i += kThreads) s += xr[i];
  s = block_sum(s, red);
  if (threadIdx.x == 0) {
    partial[row * chunks + c] = s;
    __threadfence();  // the partial is visible device-wide before the ticket is taken
    unsigned ticket = atomicInc(&tickets[row], (unsigned)(chunks - 1));
    last = ticket == (unsigned)(chunks - 1);
    if (last) __threadfence();  // order the partial reads after the ticket
  }
  __syncthreads();
  if (!last) return;
  float t = 0.f;
  for (int64_t k = threadIdx.x; k < chunks; k += kThreads) t += __ldcg(&partial[row * chunks + k]);
  __syncthreads();  // red is reused
  t = block_sum(t, red);
  if (threadIdx.x == 0) y[row] = t;
}

// Per-row tickets, all 0 between launches. Grown (never shrunk) outside the hot path.
static unsigned* g_tickets = nullptr;
static int64_t g_ticket_rows = 0;

static unsigned* tickets_for(int64_t rows, cudaStream_t s) {
  if (rows <= g_ticket_rows) return g_tickets;
  if (g_tickets != nullptr) cudaFree(g_tickets);  // synchronizes: no launch still uses it
  g_tickets = nullptr;
  g_ticket_rows = 0;
  if (cudaMalloc(&g_tickets, (size_t)rows * sizeof(unsigned)) != cudaSuccess) return nullptr;
  if (cudaMemsetAsync(g_tickets, 0, (size_t)rows * sizeof(unsigned), s) != cudaSuccess)
    return nullptr;
  g_ticket_rows = rows;
  return g_tickets;
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t rows = a->dims[0], n = a->dims[1];
  int64_t chunks = (n + kMinChunk - 1) / kMinChunk;
  if (chunks < 1) chunks = 1;
  if (chunks > kMaxChunksPerRow) chunks = kMaxChunksPerRow;
  int64_t chunk_len = (n + chunks - 1) / chunks;
  float* partial = (float*)a->workspace;
  if (partial == nullptr || a->workspace_bytes < (size_t)(rows * chunks) * sizeof(float)) return 1;
  unsigned* tickets = tickets_for(rows, a->stream);
  if (tickets == nullptr) return 1;
  row_sum_last_block<<<(unsigned)(rows * chunks), kThreads, 0, a->stream>>>(
      (const float*)a->inputs[0].data, (float*)a->outputs[0].data, partial, tickets, n, chunks,
      chunk_len);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
