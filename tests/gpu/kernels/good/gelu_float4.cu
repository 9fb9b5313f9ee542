// task: gelu
// Good: float4-vectorized exact GELU with a grid-stride loop; the N % 4 tail is handled by a scalar
// path, and misaligned pointers fall back to the scalar path entirely.
#include <kevo/kernel.h>

#include <stdint.h>

__device__ __forceinline__ float gelu(float v) {
  return 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
}

__global__ void gelu_vec4(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t n4 = n / 4;
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  const int64_t tid = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  const float4* x4 = reinterpret_cast<const float4*>(x);
  float4* y4 = reinterpret_cast<float4*>(y);
  for (int64_t i = tid; i < n4; i += stride) {
    float4 v = x4[i];
    y4[i] = make_float4(gelu(v.x), gelu(v.y), gelu(v.z), gelu(v.w));
  }
  // tail: at most 3 elements
  int64_t t = n4 * 4 + tid;
  if (t < n) y[t] = gelu(x[t]);
}

__global__ void gelu_scalar(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  const int64_t stride = (int64_t)gridDim.x * blockDim.x;
  for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += stride)
    y[i] = gelu(x[i]);
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  const float* x = (const float*)a->inputs[0].data;
  float* y = (float*)a->outputs[0].data;
  int64_t n = kevo_numel(&a->inputs[0]);
  const int threads = 256;
  int64_t want = (n / 4 + threads - 1) / threads;
  unsigned blocks = (unsigned)(want < 1 ? 1 : (want > 65536 ? 65536 : want));
  bool aligned = (((uintptr_t)x | (uintptr_t)y) & 15) == 0;
  if (aligned)
    gelu_vec4<<<blocks, threads, 0, a->stream>>>(x, y, n);
  else
    gelu_scalar<<<blocks, threads, 0, a->stream>>>(x, y, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
