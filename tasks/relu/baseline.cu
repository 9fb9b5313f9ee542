// Baseline for relu: one thread per element.
#include <kevo/kernel.h>

__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], 0.f);
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t n = kevo_numel(&a->inputs[0]);
  unsigned blocks = (unsigned)((n + 255) / 256);
  relu_kernel<<<blocks, 256, 0, a->stream>>>((const float*)a->inputs[0].data,
                                             (float*)a->outputs[0].data, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
