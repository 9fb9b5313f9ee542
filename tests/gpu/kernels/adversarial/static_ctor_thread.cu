// task: gelu
// Adversarial: correct on every call, but a static constructor starts a host thread when the
// library is loaded. Every call's thread count already includes it, so only the count around the
// load shows it. The thread could do anything later, e.g. write into buffers after a call returns.
#include <kevo/kernel.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace {
std::atomic<bool> keep_running{true};
struct Starter {
  Starter() {
    std::thread([] {
      while (keep_running.load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }).detach();
  }
} starter;
}  // namespace

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
  gelu_kernel<<<(unsigned)((n + 255) / 256), 256, 0, a->stream>>>(x, y, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
