// Baseline for sigmoid: one thread per element.
#include <kevo/kernel.h>

__global__ void sigmoid_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    y[i] = 1.f / (1.f + expf(-v));
  }
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t n = kevo_numel(&a->inputs[0]);
  unsigned blocks = (unsigned)((n + 255) / 256);
  sigmoid_kernel<<<blocks, 256, 0, a->stream>>>((const float*)a->inputs[0].data,
                                                (float*)a->outputs[0].data, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
