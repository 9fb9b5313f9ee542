// Baseline for gather_dim1: one thread per output element.
#include <kevo/kernel.h>

__global__ void gather_kernel(const float* __restrict__ x, const int64_t* __restrict__ idx,
                              float* __restrict__ y, int64_t total, int64_t N, int64_t K) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= total) return;
  int64_t b = i / K;
  y[i] = x[b * N + idx[i]];
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t B = a->dims[0], N = a->dims[1], K = a->dims[2];
  int64_t total = B * K;
  gather_kernel<<<(unsigned)((total + 255) / 256), 256, 0, a->stream>>>(
      (const float*)a->inputs[0].data, (const int64_t*)a->inputs[1].data,
      (float*)a->outputs[0].data, total, N, K);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
