// Baseline for sum_dim1: one thread per output (b, n), a serial loop over r (coalesced along n).
#include <kevo/kernel.h>

__global__ void sum_dim1_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t B,
                                int64_t R, int64_t N) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= B * N) return;
  int64_t b = i / N, n = i % N;
  const float* p = x + b * R * N + n;
  float s = 0.f;
  for (int64_t r = 0; r < R; ++r) s += p[r * N];
  y[i] = s;
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t B = a->dims[0], R = a->dims[1], N = a->dims[2];
  sum_dim1_kernel<<<(unsigned)((B * N + 255) / 256), 256, 0, a->stream>>>(
      (const float*)a->inputs[0].data, (float*)a->outputs[0].data, B, R, N);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
