// task: gelu
// Adversarial: queues a host function on the given stream (cudaLaunchHostFunc): host code the
// driver runs later on a thread of its own, which predates the candidate's confinement. Refused and
// recorded: `unsafe [guard]`.
#include <kevo/kernel.h>

__global__ void gelu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678f));
  }
}

static void later(void*) {}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t n = kevo_numel(&a->inputs[0]);
  gelu_kernel<<<(unsigned)((n + 255) / 256), 256, 0, a->stream>>>((const float*)a->inputs[0].data,
                                                                  (float*)a->outputs[0].data, n);
  cudaLaunchHostFunc(a->stream, later, nullptr);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
