// task: gelu
// Adversarial: no stream is created, but the launch helper's stream parameter has a default and the
// caller forgets to pass a->stream, so the kernel runs on the default (legacy) stream 0 instead of
// the stream it was given.
#include <kevo/kernel.h>

__global__ void gelu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678f));
  }
}

static void launch_gelu(const float* x, float* y, int64_t n, cudaStream_t stream = 0) {
  gelu_kernel<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>(x, y, n);
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  launch_gelu((const float*)a->inputs[0].data, (float*)a->outputs[0].data,
              kevo_numel(&a->inputs[0]));
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
