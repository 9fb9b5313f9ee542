// Baseline for cumsum_cols: one thread per column, a serial walk down the rows (coalesced across
// the threads of a warp).
#include <kevo/kernel.h>

__global__ void cumsum_cols_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t M,
                                   int64_t N) {
  int64_t n = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (n >= N) return;
  float s = 0.f;
  for (int64_t i = 0; i < M; ++i) {
    s += x[i * N + n];
    y[i * N + n] = s;
  }
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t M = a->dims[0], N = a->dims[1];
  cumsum_cols_kernel<<<(unsigned)((N + 127) / 128), 128, 0, a->stream>>>(
      (const float*)a->inputs[0].data, (float*)a->outputs[0].data, M, N);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
