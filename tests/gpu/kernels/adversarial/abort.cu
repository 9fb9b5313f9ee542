// task: gelu
// Adversarial: only supports sizes that are a multiple of 4 and abort()s on anything else (the
// ragged config, N = 1000003).
#include <kevo/kernel.h>

#include <cstdlib>

__device__ __forceinline__ float gelu(float v) {
  return 0.5f * v * (1.0f + erff(v * 0.70710678f));
}

__global__ void gelu_vec4(const float4* __restrict__ x, float4* __restrict__ y, int64_t n4) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n4) {
    float4 v = x[i];
    y[i] = make_float4(gelu(v.x), gelu(v.y), gelu(v.z), gelu(v.w));
  }
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t n = kevo_numel(&a->inputs[0]);
  if (n % 4 != 0) abort();  // unsupported shape
  int64_t n4 = n / 4;
  gelu_vec4<<<(unsigned)((n4 + 255) / 256), 256, 0, a->stream>>>((const float4*)a->inputs[0].data,
                                                                 (float4*)a->outputs[0].data, n4);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
