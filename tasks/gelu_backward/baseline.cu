// Baseline for gelu_backward: one thread per element, grid-stride loop.
#include <kevo/kernel.h>

__global__ void gelu_backward_kernel(const float* __restrict__ x, const float* __restrict__ dy,
                                     float* __restrict__ dx, int64_t n) {
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n;
       i += (int64_t)gridDim.x * blockDim.x) {
    const float v = x[i];
    const float cdf = 0.5f * (1.f + erff(v * 0.70710678118654752f));
    const float pdf = expf(-0.5f * v * v) * 0.39894228040143268f;
    dx[i] = dy[i] * (cdf + v * pdf);
  }
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  const int64_t n = a->inputs[0].shape[0];
  const int threads = 256;
  const int64_t blocks = (n + threads - 1) / threads;
  gelu_backward_kernel<<<(unsigned)(blocks < 65536 * 8 ? blocks : 65536 * 8), threads, 0,
                         a->stream>>>((const float*)a->inputs[0].data,
                                      (const float*)a->inputs[1].data, (float*)a->outputs[0].data, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
