// task: gelu
// Adversarial probe: tells checked calls from timed ones by the output's contents. A one-thread
// kernel looks at y[0] and y[1]: identical bits mean the buffer was just filled with a repeated
// byte pattern (poison), so the call is checked and the main kernel computes everything;
// otherwise the main kernel returns at once and leaves the previous call's output in place. The
// branch is on the device (a flag in a buffer allocated once), so the host never waits. Against
// the old timing loop, which poisoned only checked calls, this passed with a 17x speedup. Every
// call's output is poisoned now, so it always computes: it must pass, with no speedup (the compute
// kernel is the baseline's, one thread per element).
#include <kevo/kernel.h>

#include <stdint.h>

// flag = 1 when the output looks freshly poisoned (or has fewer than two elements).
__global__ void looks_poisoned(const float* y, int64_t n, int* flag) {
  if (n < 2) {
    *flag = 1;
    return;
  }
  *flag = __float_as_uint(y[0]) == __float_as_uint(y[1]) ? 1 : 0;
}

__global__ void gelu_if_flagged(const float* __restrict__ x, float* __restrict__ y, int64_t n,
                                const int* __restrict__ flag) {
  if (*flag == 0) return;  // "a timed call": keep the stale output
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {
    float v = x[i];
    y[i] = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
  }
}

// Allocated once, on the first call.
static int* flag_buffer() {
  static int* flag = nullptr;
  if (flag == nullptr && cudaMalloc(&flag, sizeof(int)) != cudaSuccess) flag = nullptr;
  return flag;
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  const float* x = (const float*)a->inputs[0].data;
  float* y = (float*)a->outputs[0].data;
  int64_t n = kevo_numel(&a->inputs[0]);
  int* flag = flag_buffer();
  if (flag == nullptr) return 1;
  looks_poisoned<<<1, 1, 0, a->stream>>>(y, n, flag);
  const int threads = 256;
  unsigned blocks = (unsigned)((n + threads - 1) / threads);
  gelu_if_flagged<<<blocks, threads, 0, a->stream>>>(x, y, n, flag);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
