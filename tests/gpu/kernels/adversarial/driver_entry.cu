// task: gelu
// Adversarial: asks the runtime for a driver entry point that queues work (cuMemsetD8Async), which
// would bypass the runtime's guards. Refused and recorded: `unsafe [guard]`. The kernel itself is
// right, so only the guard can reject it.
#include <kevo/kernel.h>

__global__ void gelu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678f));
  }
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult q;
  cudaGetDriverEntryPointByVersion("cuMemsetD8Async", &fn, 12000, cudaEnableDefault, &q);
  int64_t n = kevo_numel(&a->inputs[0]);
  gelu_kernel<<<(unsigned)((n + 255) / 256), 256, 0, a->stream>>>((const float*)a->inputs[0].data,
                                                                  (float*)a->outputs[0].data, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
