// task: row_sum
// Adversarial: splits each row over many blocks and atomically accumulates partial sums into a
// scratch buffer that is allocated once and never cleared (it assumes cudaMalloc returns zeros and
// that nobody reused the buffer). The first call may be right; every later call adds the previous
// sums in, so results depend on stale memory (the second run, on moved buffers, mismatches).
#include <kevo/kernel.h>

constexpr int kThreads = 256;
constexpr int64_t kChunk = 8192;

static float* g_acc = nullptr;
static int64_t g_acc_len = 0;

__global__ void partial_sums(const float* __restrict__ x, float* acc, int64_t n) {
  __shared__ float sh[kThreads];
  int64_t row = blockIdx.y, start = blockIdx.x * kChunk;
  int64_t end = min(n, start + kChunk);
  float s = 0.f;
  for (int64_t i = start + threadIdx.x; i < end; i += kThreads) s += x[row * n + i];
  sh[threadIdx.x] = s;
  __syncthreads();
  for (int k = kThreads / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) sh[threadIdx.x] += sh[threadIdx.x + k];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(&acc[row], sh[0]);
}

__global__ void copy_out(const float* acc, float* y, int64_t rows) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < rows) y[i] = acc[i];
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t rows = a->dims[0], n = a->dims[1];
  if (rows > g_acc_len) {  // grow once; no per-call allocation
    if (g_acc) cudaFree(g_acc);
    if (cudaMalloc(&g_acc, rows * sizeof(float)) != cudaSuccess) return 1;
    g_acc_len = rows;
  }
  dim3 grid((unsigned)((n + kChunk - 1) / kChunk), (unsigned)rows);
  partial_sums<<<grid, kThreads, 0, a->stream>>>((const float*)a->inputs[0].data, g_acc, n);
  copy_out<<<(unsigned)((rows + 255) / 256), 256, 0, a->stream>>>(g_acc, (float*)a->outputs[0].data,
                                                                  rows);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
