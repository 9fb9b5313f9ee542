// Baseline for gelu: one thread per element, exact erf form.
#include <kevo/kernel.h>

__global__ void gelu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
  }
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  const kevo_tensor* x = &a->inputs[0];
  kevo_tensor* y = &a->outputs[0];
  int64_t n = kevo_numel(x);
  const int threads = 256;  // kevo: tune threads in {64, 128, 256, 512, 1024}
  unsigned blocks = (unsigned)((n + threads - 1) / threads);
  gelu_kernel<<<blocks, threads, 0, a->stream>>>((const float*)x->data, (float*)y->data, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
