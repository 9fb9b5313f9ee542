// Baseline for embedding: one thread per output element.
#include <kevo/kernel.h>

__global__ void embedding_kernel(const int64_t* __restrict__ idx, const float* __restrict__ w,
                                 float* __restrict__ y, int64_t total, int64_t D) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= total) return;
  int64_t t = i / D, d = i % D;
  y[i] = w[idx[t] * D + d];
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t T = a->dims[0], D = a->dims[2];
  int64_t total = T * D;
  embedding_kernel<<<(unsigned)((total + 255) / 256), 256, 0, a->stream>>>(
      (const int64_t*)a->inputs[0].data, (const float*)a->inputs[1].data,
      (float*)a->outputs[0].data, total, D);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
