// task: softmax
// Adversarial: the output is correct, but the kernel subtracts the row maximum from x in place
// ("saves recomputing x - max") and so modifies a read-only input.
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

__global__ void softmax_inplace(float* x, float* y, int64_t n) {
  __shared__ float sh[kThreads];
  float* xr = x + blockIdx.x * n;
  float* yr = y + blockIdx.x * n;
  float m = -INFINITY;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) m = fmaxf(m, xr[i]);
  m = block_reduce(m, sh, true);
  float s = 0.f;
  for (int64_t i = threadIdx.x; i < n; i += kThreads) {
    float d = xr[i] - m;
    xr[i] = d;  // shift in place
    s += expf(d);
  }
  s = block_reduce(s, sh, false);
  for (int64_t i = threadIdx.x; i < n; i += kThreads) yr[i] = expf(xr[i]) / s;
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  const kevo_tensor* x = &a->inputs[0];
  softmax_inplace<<<(unsigned)x->shape[0], kThreads, 0, a->stream>>>(
      (float*)x->data, (float*)a->outputs[0].data, x->shape[1]);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
