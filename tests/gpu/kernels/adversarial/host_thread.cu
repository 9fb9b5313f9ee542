// task: gelu
// Adversarial: returns at once and lets a detached host thread launch the kernel a little later, so
// the work lands outside the timed span of the call.
#include <kevo/kernel.h>

#include <chrono>
#include <thread>

__global__ void gelu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678f));
  }
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  const float* x = (const float*)a->inputs[0].data;
  float* y = (float*)a->outputs[0].data;
  int64_t n = kevo_numel(&a->inputs[0]);
  cudaStream_t s = a->stream;
  std::thread([=] {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
    gelu_kernel<<<(unsigned)((n + 255) / 256), 256, 0, s>>>(x, y, n);
  }).detach();
  return 0;
}
