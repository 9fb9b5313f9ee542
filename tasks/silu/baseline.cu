// Baseline for silu: one thread per element.
#include <kevo/kernel.h>

__global__ void silu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    y[i] = v / (1.f + expf(-v));
  }
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t n = kevo_numel(&a->inputs[0]);
  unsigned blocks = (unsigned)((n + 255) / 256);
  silu_kernel<<<blocks, 256, 0, a->stream>>>((const float*)a->inputs[0].data,
                                             (float*)a->outputs[0].data, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
