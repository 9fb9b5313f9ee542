// task: gelu
// Adversarial: float4-vectorized GELU that forgets the tail. Correct whenever N is a multiple of 4
// (the main config), but the last N % 4 elements are never written (ragged config: N = 1000003).
#include <kevo/kernel.h>

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
  int64_t n4 = kevo_numel(&a->inputs[0]) / 4;
  if (n4 > 0)
    gelu_vec4<<<(unsigned)((n4 + 255) / 256), 256, 0, a->stream>>>((const float4*)a->inputs[0].data,
                                                                   (float4*)a->outputs[0].data, n4);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
