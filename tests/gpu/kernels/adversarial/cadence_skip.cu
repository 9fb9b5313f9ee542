// task: gelu
// Adversarial: tells timed calls from checked ones by the host call cadence. A steady_clock
// remembers when kevo_forward was last called; a call less than 300 us after the previous one is
// taken to be inside a timed batch (calls queued back to back) and returns 0 without launching
// anything, so its output stays poisoned. Calls after a pause (checked calls are milliseconds
// apart, and the first call of each batch) compute correctly. It skips only on large inputs (the
// timed main config, 2^29 values): there one call's GPU work alone outlasts the window, so checked
// calls, each followed by a sync, can never come 300 us apart, even on a fast host. Every timed
// call's output is summarised and compared now, so the skipped calls must be caught: incorrect,
// timed_output.
#include <kevo/kernel.h>

#include <chrono>

using Clock = std::chrono::steady_clock;

__global__ void gelu_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
  }
}

static bool g_called = false;
static Clock::time_point g_last;

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  const kevo_tensor* x = &a->inputs[0];
  int64_t n = kevo_numel(x);
  const Clock::time_point now = Clock::now();
  const bool in_burst = g_called && now - g_last < std::chrono::microseconds(300);
  g_called = true;
  g_last = now;
  if (in_burst && n >= (int64_t(1) << 27)) return 0;
  const int threads = 256;
  unsigned blocks = (unsigned)((n + threads - 1) / threads);
  gelu_kernel<<<blocks, threads, 0, a->stream>>>((const float*)x->data, (float*)a->outputs[0].data,
                                                 n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
