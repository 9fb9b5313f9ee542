// task: gelu
// Adversarial: dereferences a host pointer that is never initialized (a coefficient table whose
// init function is never called), so the call dies with SIGSEGV on the host.
#include <kevo/kernel.h>

// Filled by gelu_init_coeffs(), which nothing calls. Not static, so the load cannot be folded away.
float* g_gelu_coeffs = nullptr;

__global__ void gelu_scaled(const float* __restrict__ x, float* __restrict__ y, int64_t n,
                            float c) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    y[i] = 0.5f * v * (1.0f + erff(v * c));
  }
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  float c = g_gelu_coeffs[0];  // 1/sqrt(2)
  int64_t n = kevo_numel(&a->inputs[0]);
  gelu_scaled<<<(unsigned)((n + 255) / 256), 256, 0, a->stream>>>((const float*)a->inputs[0].data,
                                                                  (float*)a->outputs[0].data, n, c);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
