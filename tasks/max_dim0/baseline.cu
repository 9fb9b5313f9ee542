// Baseline for max_dim0: one thread per column, a serial loop over the rows (coalesced along n).
#include <kevo/kernel.h>

__global__ void max_dim0_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t R,
                                int64_t N) {
  int64_t n = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (n >= N) return;
  float m = x[n];
  for (int64_t r = 1; r < R; ++r) m = fmaxf(m, x[r * N + n]);
  y[n] = m;
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t R = a->dims[0], N = a->dims[1];
  max_dim0_kernel<<<(unsigned)((N + 127) / 128), 128, 0, a->stream>>>(
      (const float*)a->inputs[0].data, (float*)a->outputs[0].data, R, N);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
