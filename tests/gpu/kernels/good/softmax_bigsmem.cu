// task: softmax
// Good: a row that fits in 96 KiB (N <= 24576; main has N = 16384, a 64 KiB tile) is read from
// global memory once into dynamic shared memory, which needs the opt-in attribute
// cudaFuncAttributeMaxDynamicSharedMemorySize above 48 KiB (set once, a per-kernel attribute, not
// device state). Max, exp and sum, and the output all come from the tile. Longer rows (long_rows,
// N = 262143) take a streaming online-softmax path. f32 throughout with expf: must pass.
#include <kevo/kernel.h>

constexpr int kThreads = 512;
constexpr size_t kMaxTileBytes = 96 * 1024;

__device__ __forceinline__ float warp_max(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// Block-wide max or sum; every thread gets the result. `red` has kThreads / 32 slots.
template <bool kMax>
__device__ float block_reduce(float v, float* red) {
  v = kMax ? warp_max(v) : warp_sum(v);
  if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
  __syncthreads();
  float r = kMax ? -INFINITY : 0.f;
  for (int w = 0; w < kThreads / 32; ++w) r = kMax ? fmaxf(r, red[w]) : r + red[w];
  __syncthreads();  // red is reused by the next reduction
  return r;
}

__global__ void __launch_bounds__(kThreads)
    softmax_tile(const float* __restrict__ x, float* __restrict__ y, int n) {
  extern __shared__ float tile[];  // n floats
  __shared__ float red[kThreads / 32];
  const float* xr = x + (int64_t)blockIdx.x * n;
  float* yr = y + (int64_t)blockIdx.x * n;
  float m = -INFINITY;
  for (int i = threadIdx.x; i < n; i += kThreads) {
    float v = xr[i];
    tile[i] = v;
    m = fmaxf(m, v);
  }
  m = block_reduce<true>(m, red);
  float s = 0.f;
  for (int i = threadIdx.x; i < n; i += kThreads) {  // each thread touches only its own elements
    float e = expf(tile[i] - m);
    tile[i] = e;
    s += e;
  }
  const float inv = 1.f / block_reduce<false>(s, red);
  for (int i = threadIdx.x; i < n; i += kThreads) yr[i] = tile[i] * inv;
}

__global__ void __launch_bounds__(kThreads)
    softmax_stream(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  __shared__ float red[kThreads / 32];
  const float* xr = x + (int64_t)blockIdx.x * n;
  float* yr = y + (int64_t)blockIdx.x * n;
  // Per-thread running max and sum of exp relative to it, then merged through the block.
  float m = -INFINITY, d = 0.f;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) {
    float v = xr[i];
    if (v > m) {
      d = d * expf(m - v) + 1.f;  // expf(-inf) = 0 on the first element
      m = v;
    } else {
      d += expf(v - m);
    }
  }
  const float row_m = block_reduce<true>(m, red);
  const float mine = m == -INFINITY ? 0.f : d * expf(m - row_m);
  const float inv = 1.f / block_reduce<false>(mine, red);
  for (int64_t i = threadIdx.x; i < n; i += kThreads) yr[i] = expf(xr[i] - row_m) * inv;
}

// The largest tile this device allows (opt-in), capped at kMaxTileBytes; 0 when the attribute
// cannot be set (every row then streams).
static size_t tile_limit() {
  static size_t limit = [] {
    int dev = 0, optin = 0;
    if (cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) !=
            cudaSuccess) {
      (void)cudaGetLastError();
      return size_t(0);
    }
    // The static red[] array counts against the same per-block limit.
    size_t cap = (size_t)optin - (kThreads / 32) * sizeof(float);
    if (cap > kMaxTileBytes) cap = kMaxTileBytes;
    if (cudaFuncSetAttribute(softmax_tile, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)cap) !=
        cudaSuccess) {
      (void)cudaGetLastError();
      return size_t(0);
    }
    return cap;
  }();
  return limit;
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  const kevo_tensor* t = &a->inputs[0];
  const int64_t rows = t->shape[0], n = t->shape[1];
  const float* x = (const float*)t->data;
  float* y = (float*)a->outputs[0].data;
  const size_t bytes = (size_t)n * sizeof(float);
  if (bytes <= tile_limit())
    softmax_tile<<<(unsigned)rows, kThreads, bytes, a->stream>>>(x, y, (int)n);
  else
    softmax_stream<<<(unsigned)rows, kThreads, 0, a->stream>>>(x, y, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
