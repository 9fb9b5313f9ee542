// task: gelu
// Adversarial: computes the f32 task in half precision ("half the bytes, twice the speed"): input
// rounded to f16, GELU evaluated in f16 arithmetic, result widened back to f32. The relative error
// (~1e-3) exceeds the f32 tolerance.
#include <cuda_fp16.h>
#include <kevo/kernel.h>

__global__ void gelu_half(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i < n) {
    __half h = __float2half(x[i]);
    __half e = __float2half(erff(__half2float(__hmul(h, __float2half(0.70710678f)))));
    __half r = __hmul(__hmul(__float2half(0.5f), h), __hadd(__float2half(1.0f), e));
    y[i] = __half2float(r);
  }
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t n = kevo_numel(&a->inputs[0]);
  gelu_half<<<(unsigned)((n + 255) / 256), 256, 0, a->stream>>>((const float*)a->inputs[0].data,
                                                                (float*)a->outputs[0].data, n);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
