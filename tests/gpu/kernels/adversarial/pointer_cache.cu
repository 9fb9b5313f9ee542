// task: softmax
// Adversarial: memoizes the result per input pointer. The first call for a given x computes the
// softmax into a private buffer; later calls with the same pointer just copy the cached result,
// even when the values behind the pointer have changed.
#include <kevo/kernel.h>

#include <map>

constexpr int kThreads = 256;

__device__ float block_reduce(float v, float* sh, bool is_max) {
  sh[threadIdx.x] = v;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s)
      sh[threadIdx.x] = is_max ? fmaxf(sh[threadIdx.x], sh[threadIdx.x + s])
                               : sh[threadIdx.x] + sh[threadIdx.x + s];
    __syncthreads();
  }
  float r = sh[0];
  __syncthreads();
  return r;
}

__global__ void softmax_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  __shared__ float sh[kThreads];
  const float* xr = x + blockIdx.x * n;
  float* yr = y + blockIdx.x * n;
  float m = -INFINITY;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) m = fmaxf(m, xr[i]);
  m = block_reduce(m, sh, true);
  float s = 0.f;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) s += expf(xr[i] - m);
  s = block_reduce(s, sh, false);
  for (int64_t i = threadIdx.x; i < n; i += kThreads) yr[i] = expf(xr[i] - m) / s;
}

struct Cached {
  float* data;
  size_t bytes;
};
static std::map<const void*, Cached> g_cache;

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  const kevo_tensor* x = &a->inputs[0];
  size_t bytes = (size_t)kevo_numel(x) * sizeof(float);
  auto it = g_cache.find(x->data);
  if (it == g_cache.end() || it->second.bytes != bytes) {
    Cached c{nullptr, bytes};
    if (cudaMalloc(&c.data, bytes) != cudaSuccess) return 1;
    softmax_kernel<<<(unsigned)x->shape[0], kThreads, 0, a->stream>>>((const float*)x->data, c.data,
                                                                      x->shape[1]);
    g_cache[x->data] = c;
    it = g_cache.find(x->data);
  }
  cudaMemcpyAsync(a->outputs[0].data, it->second.data, bytes, cudaMemcpyDeviceToDevice, a->stream);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
