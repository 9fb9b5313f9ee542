// task: gelu
// Adversarial (compile path): does not compile. The kernel uses an undeclared variable and
// passes a float4* where a float* is expected. Expected verdict: compile_error, naming the lines.
#include <kevo/kernel.h>

__global__ void gelu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = 0.5f * x[i] * (1.0f + erff(x[i] * inv_sqrt2));
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t n = kevo_numel(&a->inputs[0]);
  gelu_kernel<<<(unsigned)((n + 255) / 256), 256, 0, a->stream>>>(
      (const float4*)a->inputs[0].data, (float*)a->outputs[0].data, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
