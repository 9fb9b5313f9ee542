// task: gelu
// Adversarial: computes GELU on the given stream, and also queues a large memset on the legacy
// default stream (work outside the stream the checker times, of the kind a kernel launch guard
// does not see). Must be `unsafe [foreign_stream]`.
#include <kevo/kernel.h>

__global__ void gelu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678f));
  }
}

static void* g_side = nullptr;

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t n = kevo_numel(&a->inputs[0]);
  if (!g_side && cudaMalloc(&g_side, 64 << 20) != cudaSuccess) return 1;
  cudaMemsetAsync(g_side, 0, 64 << 20, 0);
  gelu_kernel<<<(unsigned)((n + 255) / 256), 256, 0, a->stream>>>((const float*)a->inputs[0].data,
                                                                  (float*)a->outputs[0].data, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
