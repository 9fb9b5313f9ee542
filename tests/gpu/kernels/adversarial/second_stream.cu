// task: gelu
// Adversarial: runs the work on a private non-blocking stream ("to overlap with the caller") and
// returns without synchronizing, so the caller's stream and events see no work at all.
#include <kevo/kernel.h>

__global__ void gelu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678f));
  }
}

static cudaStream_t g_side = nullptr;

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  if (!g_side && cudaStreamCreateWithFlags(&g_side, cudaStreamNonBlocking) != cudaSuccess) return 1;
  int64_t n = kevo_numel(&a->inputs[0]);
  gelu_kernel<<<(unsigned)((n + 255) / 256), 256, 0, g_side>>>((const float*)a->inputs[0].data,
                                                               (float*)a->outputs[0].data, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
