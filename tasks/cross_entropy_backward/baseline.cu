// Baseline for cross_entropy_backward: one block per row, three passes (max, sum of exp, write
// dloss / B * (softmax - onehot)).
#include <kevo/kernel.h>

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

__global__ void cross_entropy_backward_kernel(const float* __restrict__ x,
                                              const int64_t* __restrict__ target,
                                              const float* __restrict__ dloss,
                                              float* __restrict__ dx, int64_t rows, int64_t n) {
  __shared__ float sh[kThreads];
  const float* xr = x + blockIdx.x * n;
  float* out = dx + blockIdx.x * n;
  float m = -INFINITY;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) m = fmaxf(m, xr[i]);
  m = block_reduce(m, sh, true);
  float s = 0.f;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) s += expf(xr[i] - m);
  s = block_reduce(s, sh, false);
  const float scale = dloss[0] / (float)rows, inv = 1.f / s;
  const int64_t t = target[blockIdx.x];
  for (int64_t i = threadIdx.x; i < n; i += kThreads)
    out[i] = scale * (expf(xr[i] - m) * inv - (i == t ? 1.f : 0.f));
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  const int64_t rows = a->dims[0], n = a->dims[1];
  cross_entropy_backward_kernel<<<(unsigned)rows, kThreads, 0, a->stream>>>(
      (const float*)a->inputs[0].data, (const int64_t*)a->inputs[1].data,
      (const float*)a->inputs[2].data, (float*)a->outputs[0].data, rows, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
