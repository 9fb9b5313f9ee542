// task: gelu
// Adversarial: never finishes. Every thread spins until a device-side "ready" flag is set by a
// producer that does not exist.
#include <kevo/kernel.h>

__device__ volatile int g_ready = 0;

__global__ void gelu_when_ready(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  while (g_ready == 0) {
  }
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678f));
  }
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t n = kevo_numel(&a->inputs[0]);
  gelu_when_ready<<<(unsigned)((n + 255) / 256), 256, 0, a->stream>>>(
      (const float*)a->inputs[0].data, (float*)a->outputs[0].data, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
