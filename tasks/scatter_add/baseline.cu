// Baseline for scatter_add: zero the output, then one thread per source element does an f32
// atomicAdd into its target row.
#include <kevo/kernel.h>

__global__ void zero_kernel(float* __restrict__ y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) y[i] = 0.f;
}

__global__ void scatter_add_kernel(const int32_t* __restrict__ idx, const float* __restrict__ src,
                                   float* __restrict__ y, int64_t total, int64_t D) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= total) return;
  int64_t t = i / D, d = i % D;
  atomicAdd(&y[(int64_t)idx[t] * D + d], src[i]);
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t T = a->dims[0], V = a->dims[1], D = a->dims[2];
  float* y = (float*)a->outputs[0].data;
  zero_kernel<<<(unsigned)((V * D + 255) / 256), 256, 0, a->stream>>>(y, V * D);
  scatter_add_kernel<<<(unsigned)((T * D + 255) / 256), 256, 0, a->stream>>>(
      (const int32_t*)a->inputs[0].data, (const float*)a->inputs[1].data, y, T * D, D);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
