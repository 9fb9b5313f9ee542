// Baseline for permute_heads_bf16: one thread per output element.
#include <cuda_bf16.h>
#include <kevo/kernel.h>

__global__ void permute_heads_kernel(const __nv_bfloat16* __restrict__ x,
                                     __nv_bfloat16* __restrict__ y, int64_t total, int64_t S,
                                     int64_t H, int64_t D) {
  int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
  if (i >= total) return;
  int64_t d = i % D;
  int64_t s = (i / D) % S;
  int64_t h = (i / (D * S)) % H;
  int64_t b = i / (D * S * H);
  y[i] = x[((b * S + s) * H + h) * D + d];
}

KEVO_EXPORT int kevo_forward(const kevo_args* a) {
  int64_t B = a->dims[0], S = a->dims[1], H = a->dims[2], D = a->dims[3];
  int64_t total = B * S * H * D;
  permute_heads_kernel<<<(unsigned)((total + 255) / 256), 256, 0, a->stream>>>(
      (const __nv_bfloat16*)a->inputs[0].data, (__nv_bfloat16*)a->outputs[0].data, total, S, H, D);
  return cudaGetLastError() == cudaSuccess ? 0 : 1;
}
